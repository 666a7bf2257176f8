"""Copy-the-market: does a forecaster shown the market price just repeat it?

In ForecastBench one model's forecasts correlated 0.994 with the market price it was given:
its score was the market's, not its own. For every forecaster SHOWN the price — a spec whose
`price` parameter is set and nonzero (`zero-shot:model=…,price=1`; in scored rows the
forecaster's name is its spec) — on its rows with a market price at t0 (the last point
strictly before t0, the price its prompt showed, rounded there to 2 decimals):

- `correlation`: Pearson's r of p with the price (None when either is constant or n < 2);
- `mean_abs_diff`: the mean |p − price|;
- `share_within_0_01`: the share of rows with |p − price| < 0.01 (an exact copier of the
  2-decimal price lands within 0.005).

Its TWIN is the same spec without the price (`price` removed or `price=0`; the other
parameters equal, in any order, `temperature=0` equal to `temperature=0.0`). On the rows
matched on (market, t0, repeat) where both have a valid probability and the market a price:
each one's Brier, the difference shown − twin (negative: the price helped) with a
market-clustered 95% bootstrap interval (none under `vs_market.MIN_MARKETS` markets), and
each one's correlation with the price on those same rows. A forecaster with no twin in the
rows keeps its copy figures; a note says there is no paired comparison. Two twins (one
without `price`, one with `price=0`): one row per pair.

Failures (probability None) are counted (`n_failed`) and never imputed: they enter no figure,
and a matched row needs a valid probability on both sides. Rows without a market price are
out of scope (the price variant fails there by design) and counted in a note.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from hindcast.scoring import Finding, ScoredRow, bootstrap, vs_market
from hindcast.specs import run_qualified, split_spec

CLOSE = 0.01  # |p − price| under this counts as copying the price
TITLE = "Copy-the-market: forecasters shown the price vs the price, and vs themselves without it"
COLUMNS = (
    "forecaster",
    "twin",
    "n_rows",
    "n_failed",
    "n_markets",
    "correlation",
    "mean_abs_diff",
    "share_within_0_01",
    "n_paired",
    "n_markets_paired",
    "brier_paired",
    "twin_brier_paired",
    "brier_diff",
    "diff_ci_low",
    "diff_ci_high",
    "correlation_paired",
    "twin_correlation_paired",
)
POLICY = {
    "copying": "pearson-and-mean-abs-diff-vs-price-at-t0",
    "close": CLOSE,
    "twin": "same-spec-without-price-matched-on-market-t0-repeat",
}

Key = tuple  # (market_id, t0, repeat)


@dataclass(frozen=True)
class CopyFigures:
    """A shown-the-price forecaster against the price, on its rows with a market price."""

    n_rows: int
    n_failed: int
    n_markets: int
    correlation: float | None
    mean_abs_diff: float | None
    share_close: float | None


@dataclass(frozen=True)
class Paired:
    """Shown vs twin on matched rows: Briers, difference shown − twin and its
    interval, correlations."""

    n_rows: int
    n_markets: int
    brier: float | None
    twin_brier: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    correlation: float | None
    twin_correlation: float | None


# ---- specs ----------------------------------------------------------------------------------


def spec_key(spec: str) -> tuple[tuple, object] | None:
    """(name, parameters other than price and run, the price value or None), parsed as the
    forecaster registry parses a spec (int, then float, then text); None for a spec it would
    refuse. A name qualified by its run (`spec@run`, runs combined) has its twin in that run."""
    spec, run = run_qualified(spec)
    parsed = split_spec(spec)
    if parsed is None:
        return None
    name, params = parsed
    price = params.pop("price", None)
    return (name, frozenset(params.items()), run), price


def shown_price(spec: str) -> bool:
    """Whether the spec shows the forecaster the price (a set, truthy `price`, as the
    forecaster reads it)."""
    parsed = spec_key(spec)
    return parsed is not None and bool(parsed[1])


def twins(names: Iterable[str]) -> dict[str, list[str]]:
    """Each shown-the-price forecaster → its price-less twins among `names`
    (sorted; may be empty)."""
    parsed = {n: spec_key(n) for n in sorted(set(names))}
    plain = defaultdict(list)
    for n, p in parsed.items():
        if p is not None and not p[1]:
            plain[p[0]].append(n)
    return {n: plain.get(p[0], []) for n, p in parsed.items() if p is not None and p[1]}


# ---- figures --------------------------------------------------------------------------------


def pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson's r; None under 2 points or when either side is constant. r = Sxy / √(Sxx·Syy):
    for x equal to y exactly, Sxy = Sxx = Syy and √(Sxx²) = Sxx, so r is exactly 1.0."""
    if x.size < 2:
        return None
    dx, dy = x - x.mean(), y - y.mean()
    sxx, syy = float(np.sum(dx * dx)), float(np.sum(dy * dy))
    if sxx == 0.0 or syy == 0.0:
        return None
    return float(np.clip(float(np.sum(dx * dy)) / np.sqrt(sxx * syy), -1.0, 1.0))


def copy_figures(rows: Sequence[ScoredRow]) -> CopyFigures:
    """One forecaster's rows with a market price → its copy figures (failures counted, left out)."""
    valid = [r for r in rows if r.probability is not None]
    p, price = _pairs(valid)
    gap = np.abs(p - price)
    return CopyFigures(
        len(rows),
        len(rows) - len(valid),
        len({r.market_id for r in valid}),
        pearson(p, price),
        float(gap.mean()) if gap.size else None,
        float(np.mean(gap < CLOSE)) if gap.size else None,
    )


def _pairs(rows: Sequence[ScoredRow]) -> tuple[np.ndarray, np.ndarray]:
    return (
        np.array([r.probability for r in rows], float),
        np.array([r.market_price for r in rows], float),
    )


def paired(shown: Sequence[ScoredRow], twin: Sequence[ScoredRow], replicates: int, rng) -> Paired:
    """Shown vs twin on (market, t0, repeat) rows where both are valid (rows
    with a market price)."""
    mine, theirs = _valid_by_key(shown), _valid_by_key(twin)
    keys = sorted(mine.keys() & theirs.keys())
    if not keys:
        return Paired(0, 0, None, None, None, None, None, None, None)
    a, b = [mine[k] for k in keys], [theirs[k] for k in keys]
    brier_a, brier_b = np.array([r.brier for r in a]), np.array([r.brier for r in b])
    codes, n = bootstrap.market_codes([k[0] for k in keys])
    ci = None
    if not vs_market.too_few(n):
        weights = bootstrap.draw_weights(n, replicates, rng)
        ci = bootstrap.percentile_interval(
            bootstrap.replicate_means(weights, codes, brier_a - brier_b)
        )
    return Paired(
        len(keys),
        n,
        float(brier_a.mean()),
        float(brier_b.mean()),
        float((brier_a - brier_b).mean()),
        ci and ci.low,
        ci and ci.high,
        pearson(*_pairs(a)),
        pearson(*_pairs(b)),
    )


def _valid_by_key(rows: Sequence[ScoredRow]) -> dict[Key, ScoredRow]:
    return {(r.market_id, r.t0, r.repeat): r for r in rows if r.probability is not None}


# ---- the finding ----------------------------------------------------------------------------


def copying(
    rows: Iterable[ScoredRow], replicates: int = bootstrap.REPLICATES, seed: int = 0
) -> Finding:
    """The "copying" Finding of scored rows (one run, or runs combined): one row per
    shown-the-price forecaster and twin (twin None: no paired comparison)."""
    by_name: dict[str, list[ScoredRow]] = defaultdict(list)
    for r in rows:
        by_name[r.forecaster].append(r)
    pairs = twins(by_name)
    if not pairs:
        return Finding("copying", TITLE, COLUMNS, (), (*_NOTES, _NONE_SHOWN))
    body, notes = [], list(_NOTES)
    for name, found in sorted(pairs.items()):
        rows_of, more = _forecaster(name, found, by_name, replicates, seed)
        body += rows_of
        notes += more
    return Finding("copying", TITLE, COLUMNS, tuple(body), tuple(notes))


def _forecaster(
    name: str, found: list[str], by_name: dict, replicates: int, seed: int
) -> tuple[list, list]:
    """One shown-the-price forecaster's table rows (one per twin, or one without) and notes."""
    mine = _priced(by_name[name])
    figures, notes = copy_figures(mine), _figure_notes(name, len(by_name[name]) - len(mine))
    if not found:
        return [_row(name, None, figures, None)], [*notes, _no_twin(name)]
    body = []
    for twin in found:
        versus = paired(
            mine,
            _priced(by_name[twin]),
            replicates,
            bootstrap.rng_for(seed, f"copying|{name}|{twin}"),
        )
        body.append(_row(name, twin, figures, versus))
        notes += _paired_notes(name, twin, versus)
    return body, notes


def _no_twin(name: str) -> str:
    return (
        f"{name}: no price-less twin (the same spec without price) in these rows, no paired "
        "comparison"
    )


def _priced(rows: Sequence[ScoredRow]) -> list[ScoredRow]:
    return [r for r in rows if r.market_price is not None]


_NONE_SHOWN = "no forecaster shown the market price (a spec with price=1) in these rows"


_NOTES = (
    (
        "shown the price: a spec with price set and nonzero (price=1); its twin: the same spec "
        "without price (or price=0); figures on rows with a market price at t0 (last point "
        "strictly before t0, shown in the prompt to 2 decimals)"
    ),
    (
        "correlation: Pearson's r of p with the price; mean_abs_diff: mean |p − price|; "
        f"share_within_0_01: share of rows with |p − price| < {CLOSE:g}; a correlation is empty "
        "under 2 rows or where p or the price is constant"
    ),
    (
        "paired on (market, t0, repeat) rows where both have a valid probability: brier_diff = "
        "shown − twin (negative: the price helped), market-clustered 95% bootstrap interval; "
        "failures counted (n_failed), never imputed"
    ),
)


def _row(name: str, twin: str | None, f: CopyFigures, v: Paired | None) -> tuple:
    versus = (
        (None,) * 9
        if v is None
        else (
            v.n_rows,
            v.n_markets,
            v.brier,
            v.twin_brier,
            v.difference,
            v.ci_low,
            v.ci_high,
            v.correlation,
            v.twin_correlation,
        )
    )
    return (
        name,
        twin,
        f.n_rows,
        f.n_failed,
        f.n_markets,
        f.correlation,
        f.mean_abs_diff,
        f.share_close,
        *versus,
    )


def _figure_notes(name: str, no_price: int) -> list[str]:
    return (
        [
            f"{name}: {no_price} row{'' if no_price == 1 else 's'} without a market price at "
            "t0 left out"
        ]
        if no_price
        else []
    )


def _paired_notes(name: str, twin: str, v: Paired) -> list[str]:
    if not v.n_rows:
        return [f"{name} vs {twin}: no matched row with a valid probability on both sides"]
    if vs_market.too_few(v.n_markets):
        s = "" if v.n_markets == 1 else "s"
        return [
            f"{name} vs {twin}: n too small: {v.n_markets} market{s} (< "
            f"{vs_market.MIN_MARKETS}), no interval"
        ]
    return []
