"""Pairwise relative skill on overlapping rows (ForecastBench / Metaculus peer style).

Every forecaster and the market price at t0 ("market price") take part. Each (market, t0) is scored
once per participant: the Brier score of its probability (repeats averaged first). For a pair (A, B)
only the (market, t0) both answered count; the ratio r(A, B) = mean Brier of A / mean Brier of B on
them (below 1: A better). A's relative skill is the geometric mean of r(A, B) over every B it shares
rows with, divided by the baseline's own (so the baseline is 1; below 1: better than it). Failed or
missing forecasts only shrink an overlap — they never bias a ranking. p-value of a pair: a seeded
permutation test of ln r(A, B) = 0 that swaps A's and B's scores on whole markets (whole events
where markets share one), two-sided, (1 + #{|perm| ≥ |observed|}) / (1 + permutations). Intervals of
the relative skill: bootstrap over whole markets/events, every ratio
recomputed in each replicate."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hindcast.analysis import series
from hindcast.analysis.units import MarketFacts, Settings, unit_weights
from hindcast.errors import ConfigError
from hindcast.scoring import Finding, bootstrap, vs_market


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    n_rows: int
    brier_a: float
    brier_b: float
    ratio: float | None  # None: B's mean Brier is 0 on the overlap (no ratio)
    p_value: float | None


@dataclass(frozen=True)
class Skill:
    forecaster: str
    relative_skill: float | None
    low: float | None
    high: float | None
    n_pairs: int
    baseline: str


@dataclass(frozen=True)
class Pairwise:
    pairs: tuple[Pair, ...]
    skills: tuple[Skill, ...]


def scores(
    rows: Sequence, found: Sequence[series.Point] | None = None
) -> dict[str, dict[tuple, float]]:
    """participant → (market, t0) → Brier of its (repeat-averaged) probability (`found`:
    `series.points(rows)` if the caller has them)."""
    out: dict[str, dict[tuple, float]] = {}
    for p in series.shared(rows, found):
        out.setdefault(p.forecaster, {})[(p.market_id, p.t0)] = (p.probability - p.outcome) ** 2
    return out


def pairwise(
    rows: Sequence,
    facts: MarketFacts,
    settings: Settings,
    found: Sequence[series.Point] | None = None,
) -> Pairwise:
    table = scores(rows, found)
    if settings.baseline not in table:
        raise ConfigError(
            f"unknown baseline {settings.baseline!r}; choose one of: {', '.join(sorted(table))}"
        )
    units = sorted({facts.unit(m) for s in table.values() for m, _ in s})
    index = {u: i for i, u in enumerate(units)}
    sums = {
        pair: _unit_sums(table, pair, facts, index)
        for pair in itertools.permutations(sorted(table), 2)
    }
    pairs = tuple(
        _pair(a, b, sums[(a, b)], settings) for a, b in itertools.combinations(sorted(table), 2)
    )
    return Pairwise(pairs, _skills(sorted(table), sums, len(units), settings))


def _unit_sums(table, pair, facts: MarketFacts, index) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per unit: A's Brier sum, B's Brier sum and the count on the (market, t0) both answered."""
    a, b = (table[name] for name in pair)
    keys = sorted(a.keys() & b.keys())
    codes = np.array([index[facts.unit(k[0])] for k in keys], dtype=np.int64)
    n = len(index)
    return (
        np.bincount(codes, [a[k] for k in keys], n),
        np.bincount(codes, [b[k] for k in keys], n),
        np.bincount(codes, minlength=n).astype(float),
    )


def _pair(a: str, b: str, sums, settings: Settings) -> Pair:
    sa, sb, n = sums
    count = int(n.sum())
    if count == 0:
        return Pair(a, b, 0, math.nan, math.nan, None, None)
    ratio = float(sa.sum() / sb.sum()) if sb.sum() > 0 else None
    p = _permutation_p(sa, sb, n, f"{a}|{b}", settings) if ratio and sa.sum() > 0 else None
    return Pair(a, b, count, float(sa.sum() / count), float(sb.sum() / count), ratio, p)


def _permutation_p(
    sa: np.ndarray, sb: np.ndarray, n: np.ndarray, key: str, settings: Settings
) -> float:
    used = n > 0
    sa, sb = sa[used], sb[used]
    swap = swaps(
        bootstrap.rng_for(settings.seed, f"permutation|{key}"), settings.permutations, sa.size
    )
    perm_a, perm_b = swap @ sb + (1 - swap) @ sa, swap @ sa + (1 - swap) @ sb
    observed = abs(math.log(sa.sum() / sb.sum()))
    permuted = np.abs(np.log(perm_a / perm_b))
    return float((1 + np.sum(permuted >= observed - 1e-12)) / (1 + settings.permutations))


def swaps(rng: np.random.Generator, rows: int, columns: int) -> np.ndarray:
    """`rng.integers(0, 2, size=(rows, columns)).astype(float)` of a fresh PCG64 stream, then
    left unused: numpy draws each 0/1 from one 32-bit half of a raw output (low half first) by
    Lemire's rule, which for two values is that half's top bit — read here from the raw
    outputs at once (tests/analysis/test_pairwise_swaps.py)."""
    bits = rng.bit_generator
    if not isinstance(bits, np.random.PCG64) or bits.state["has_uint32"]:
        return rng.integers(0, 2, size=(rows, columns)).astype(float)
    halves = bits.random_raw((rows * columns + 1) // 2).view(np.uint32)[: rows * columns]
    return (halves >> 31).astype(float).reshape(rows, columns)


def _skills(names: list[str], sums: dict, n_units: int, settings: Settings) -> tuple[Skill, ...]:
    observed = _geometric(names, {k: (s[0].sum(), s[1].sum()) for k, s in sums.items()})
    replicas = _replicate_skills(names, sums, n_units, settings)
    base = observed[settings.baseline]
    out = []
    for i, name in enumerate(names):
        value = observed[name]
        scaled = None if value is None or base is None else math.exp(value - base)
        low, high = _interval(replicas, i, names.index(settings.baseline), n_units)
        n_pairs = sum(
            1 for (a, _), s in sums.items() if a == name and s[1].sum() > 0 and s[0].sum() > 0
        )
        out.append(Skill(name, scaled, low, high, n_pairs, settings.baseline))
    return tuple(out)


def _geometric(names: list[str], totals: dict) -> dict[str, float | None]:
    """name → mean of ln r(name, other) over the others it has a finite, positive ratio with."""
    out = {}
    for a in names:
        logs = [
            math.log(sa / sb) for (x, _), (sa, sb) in totals.items() if x == a and sa > 0 and sb > 0
        ]
        out[a] = float(np.mean(logs)) if logs else None
    return out


def _replicate_skills(names: list[str], sums: dict, n_units: int, settings: Settings) -> np.ndarray:
    """replicates × forecasters: mean log ratio of each in each whole-unit bootstrap replicate."""
    weights = unit_weights(n_units, "pairwise", settings)  # float64 counts already
    out = np.full((settings.replicates, len(names)), np.nan)
    for i, a in enumerate(names):
        with np.errstate(all="ignore"):
            logs = [
                np.log((weights @ s[0]) / (weights @ s[1]))
                for (x, _), s in sums.items()
                if x == a and s[2].sum() > 0
            ]
        if logs:
            stacked = np.vstack(logs)
            stacked[~np.isfinite(stacked)] = np.nan
            out[:, i] = _nanmean_columns(stacked)
    return out


def _nanmean_columns(stacked: np.ndarray) -> np.ndarray:
    counts = np.sum(np.isfinite(stacked), axis=0)
    totals = np.nansum(stacked, axis=0)
    return np.where(counts > 0, totals / np.maximum(counts, 1), np.nan)


def _interval(
    replicas: np.ndarray, i: int, base: int, n_units: int
) -> tuple[float | None, float | None]:
    if vs_market.too_few(n_units):
        return None, None
    interval = bootstrap.percentile_interval(np.exp(replicas[:, i] - replicas[:, base]))
    return (None, None) if interval is None else (interval.low, interval.high)


def findings(result: Pairwise) -> list[Finding]:
    skill = Finding(
        "pairwise-skill",
        f"Relative skill on overlapping rows (baseline: {result.skills[0].baseline})",
        ("forecaster", "relative_skill", "low", "high", "n_pairs"),
        tuple((s.forecaster, s.relative_skill, s.low, s.high, s.n_pairs) for s in result.skills),
        (" ".join(__doc__.split("\n\n")[1].split()),),
    )
    pairs = Finding(
        "pairwise-pairs",
        "Pairwise Brier ratios on the (market, t0) both answered",
        ("a", "b", "n_rows", "brier_a", "brier_b", "ratio", "p_value"),
        tuple((p.a, p.b, p.n_rows, p.brier_a, p.brier_b, p.ratio, p.p_value) for p in result.pairs),
        (
            (
                "ratio = brier_a / brier_b on the shared rows (below 1: a better); p_value: "
                "permutation test swapping whole markets/events, seeded; – : no shared rows or a "
                "zero mean Brier."
            ),
        ),
    )
    return [skill, pairs]
