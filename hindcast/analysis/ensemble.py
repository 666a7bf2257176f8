"""Repeats of one forecaster turned into derived forecasters (issue 17, item 3). No model is called.

`aggregate` combines a forecaster's K repeats on each (market, t0) into one forecast for each of
four derived forecasters `<forecaster>·mean`, `·median`, `·logit-mean` and `·logit-shrunk`
(policies `logit-clip-1e-6`, `eb-normal-logit-shrink-to-0`, `aggregate-valid-repeats`: valid
repeats only, never imputed; a derived row keeps repeat 0's question fields, its usage the sum
of its repeats'). The estimators, the empirical-Bayes derivation and the failure rules:
docs/analysis.md, "Aggregates of repeats".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from hindcast.errors import ConfigError
from hindcast.records import Usage
from hindcast.scoring import Finding, ScoredRow, bootstrap, vs_market

SEPARATOR = "·"
KINDS = ("mean", "median", "logit-mean", "logit-shrunk")
CLIP = 1e-6
POLICY = {
    "aggregate_clip": "logit-clip-1e-6",
    "aggregate_shrinkage": "eb-normal-logit-shrink-to-0",
    "aggregate_failures": "aggregate-valid-repeats",
}
COLUMNS = (
    "forecaster",
    "aggregate",
    "derived",
    "repeats",
    "n_questions",
    "n_markets",
    "n_failed",
    "n_partial",
    "brier",
    "single_draw_brier",
    "diff_vs_single",
    "diff_ci_low",
    "diff_ci_high",
    "ci_note",
)

Key = tuple[str, object]  # (market_id, t0)


@dataclass(frozen=True)
class Shrinkage:
    """A forecaster's empirical-Bayes shrinkage: within-question variance σ²
    and prior variance τ²."""

    sigma2: float
    tau2: float

    def factor(self, k: int) -> float:
        """B = τ² / (τ² + σ²/k) for a question with k valid repeats; 1 when σ² = 0."""
        if self.sigma2 == 0.0:
            return 1.0
        return self.tau2 / (self.tau2 + self.sigma2 / k)


@dataclass(frozen=True)
class Aggregates:
    rows: list[ScoredRow]  # the derived forecasters' rows, sorted by (forecaster, market, t0)
    finding: Finding  # key "aggregates"
    repeats: dict[
        tuple[str, str, object], tuple[int, int]
    ]  # (forecaster, market, t0) → (valid, stored)
    shrinkage: dict[str, Shrinkage]


def derived_name(forecaster: str, kind: str) -> str:
    return f"{forecaster}{SEPARATOR}{kind}"


def clipped_logit(p) -> np.ndarray:
    """logit of p clipped to [CLIP, 1 − CLIP] (policy `logit-clip-1e-6`)."""
    q = np.clip(np.asarray(p, float), CLIP, 1.0 - CLIP)
    return np.log(q) - np.log1p(-q)


def expit(x) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(x, float)))


def aggregate(
    rows: Iterable[ScoredRow], replicates: int = bootstrap.REPLICATES, seed: int = 0
) -> Aggregates:
    """The derived forecasters of every forecaster with repeats (a forecaster with one forecast per
    (market, t0) everywhere has nothing to aggregate and is left out, named in a note)."""
    groups = _groups(rows)
    _refuse_collisions(groups)
    with_repeats = {f: g for f, g in groups.items() if any(len(v) > 1 for v in g.values())}
    shrinkage = {f: fit_shrinkage(g.values()) for f, g in with_repeats.items()}
    derived = [
        row for f in sorted(with_repeats) for row in _derive(f, with_repeats[f], shrinkage[f])
    ]
    repeats = {
        (f, *key): (len(_valid(v)), len(v)) for f, g in with_repeats.items() for key, v in g.items()
    }
    finding = _finding(
        with_repeats, derived, shrinkage, sorted(set(groups) - set(with_repeats)), replicates, seed
    )
    return Aggregates(derived, finding, repeats, shrinkage)


def _groups(rows: Iterable[ScoredRow]) -> dict[str, dict[Key, list[ScoredRow]]]:
    groups: dict[str, dict[Key, list[ScoredRow]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        groups[r.forecaster][(r.market_id, r.t0)].append(r)
    return {
        f: {k: sorted(v, key=lambda r: r.repeat) for k, v in sorted(g.items())}
        for f, g in groups.items()
    }


def _refuse_collisions(groups: dict) -> None:
    clash = sorted(set(groups) & {derived_name(f, k) for f in groups for k in KINDS})
    if clash:
        raise ConfigError(
            f"forecaster name {clash[0]!r} is also the name of a derived aggregate; rename it"
        )


def _valid(rows: Sequence[ScoredRow]) -> list[float]:
    return [r.probability for r in rows if r.probability is not None]


def fit_shrinkage(questions: Iterable[Sequence[ScoredRow]]) -> Shrinkage:
    """σ² pooled within questions, τ² by moments around 0 (see the module's docstring)."""
    logits = [clipped_logit(_valid(q)) for q in questions]
    logits = [x for x in logits if x.size]
    dof = sum(x.size - 1 for x in logits)
    sigma2 = float(sum(((x - x.mean()) ** 2).sum() for x in logits) / dof) if dof else 0.0
    if not logits:
        return Shrinkage(sigma2, 0.0)
    tau2 = float(np.mean([x.mean() ** 2 - sigma2 / x.size for x in logits]))
    return Shrinkage(sigma2, max(0.0, tau2))


def combine(probabilities: Sequence[float], shrinkage: Shrinkage) -> dict[str, float]:
    """The four aggregates of one question's valid probabilities (at least one)."""
    p = np.asarray(probabilities, float)
    m = float(clipped_logit(p).mean())
    return {
        "mean": float(p.mean()),
        "median": float(np.median(p)),
        "logit-mean": float(expit(m)),
        "logit-shrunk": float(expit(shrinkage.factor(p.size) * m)),
    }


def _derive(
    forecaster: str, questions: dict[Key, list[ScoredRow]], shrinkage: Shrinkage
) -> list[ScoredRow]:
    out = {kind: [] for kind in KINDS}
    for repeats in questions.values():
        valid = _valid(repeats)
        values = combine(valid, shrinkage) if valid else dict.fromkeys(KINDS)
        error = None if valid else f"all {len(repeats)} repeats failed: {repeats[0].error}"
        used = summed_usage(repeats)
        for kind in KINDS:
            out[kind].append(
                replace(
                    repeats[0],
                    forecaster=derived_name(forecaster, kind),
                    probability=values[kind],
                    error=error,
                    repeat=0,
                    usage=used,
                )
            )
    return [row for kind in KINDS for row in out[kind]]


def summed_usage(rows: Sequence[ScoredRow]) -> Usage:
    """The repeats' usage records summed: numeric fields present in every repeat are added, the
    model fields kept when every repeat names the same one; anything else is
    left out (not recorded)."""
    records = [r.usage.to_dict() for r in rows]
    keys = [k for k in rows[0].usage if all(k in u for u in records)]
    summed = (_summed(k, [u[k] for u in records]) for k in keys)
    return Usage.of(item for item in summed if item is not None)


def _summed(key: str, values: list) -> tuple | None:
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return key, sum(values)
    return (key, values[0]) if all(v == values[0] for v in values) else None


def paired_difference(market_ids: list[str], diffs: np.ndarray, replicates: int, rng) -> tuple:
    """Mean of per-row differences and its market-clustered percentile interval (none under
    vs_market.MIN_MARKETS markets): (mean, low, high, note)."""
    if not market_ids:
        return None, None, None, "no row"
    codes, n = bootstrap.market_codes(market_ids)
    note = vs_market.ci_note(n, n)
    ci = (
        None
        if note
        else bootstrap.percentile_interval(
            bootstrap.replicate_means(bootstrap.draw_weights(n, replicates, rng), codes, diffs)
        )
    )
    return float(diffs.mean()), ci and ci.low, ci and ci.high, note


def _finding(
    groups: dict,
    derived: list[ScoredRow],
    shrinkage: dict[str, Shrinkage],
    skipped: list[str],
    replicates: int,
    seed: int,
) -> Finding:
    by_name = defaultdict(list)
    for r in derived:
        by_name[r.forecaster].append(r)
    table = [
        _summary_row(f, kind, groups[f], by_name[derived_name(f, kind)], replicates, seed)
        for f in sorted(groups)
        for kind in KINDS
    ]
    notes = [
        (
            f"{derived_name('<forecaster>', '<kind>')}: repeats of one (market, t0) combined; "
            "failures never imputed (a question whose repeats all failed stays failed; "
            "n_partial questions aggregate their valid repeats only)"
        ),
        (
            f"logit aggregates clip p to [{CLIP:g}, 1 − {CLIP:g}] first; single_draw_brier is "
            "the mean over questions of the mean Brier of their valid repeats; diff_vs_single = "
            "brier − single_draw_brier, paired by question, market-clustered 95% interval"
        ),
    ]
    notes += [
        f"{derived_name(f, 'logit-shrunk')}: σ² = {s.sigma2:.4g}, τ² = {s.tau2:.4g} (logit "
        "mean × τ²/(τ² + σ²/K))"
        for f, s in sorted(shrinkage.items())
    ]
    if skipped:
        notes.append(f"no repeats to aggregate: {', '.join(skipped)}")
    return Finding(
        "aggregates",
        "Aggregates of repeated forecasts vs a single draw",
        COLUMNS,
        tuple(table),
        tuple(notes),
    )


def _summary_row(
    forecaster: str,
    kind: str,
    questions: dict[Key, list[ScoredRow]],
    derived: list[ScoredRow],
    replicates: int,
    seed: int,
) -> tuple:
    valid = [(r, questions[(r.market_id, r.t0)]) for r in derived if r.probability is not None]
    single = np.array(
        [np.mean([(p - r.outcome) ** 2 for p in _valid(reps)]) for r, reps in valid], float
    )
    own = np.array([r.brier for r, _ in valid], float)
    rng = bootstrap.rng_for(seed, f"aggregates|{derived_name(forecaster, kind)}")
    diff, low, high, note = paired_difference(
        [r.market_id for r, _ in valid], own - single, replicates, rng
    )
    partial = sum(1 for _, reps in valid if len(_valid(reps)) < len(reps))
    return (
        forecaster,
        kind,
        derived_name(forecaster, kind),
        max(len(v) for v in questions.values()),
        len(valid),
        len({r.market_id for r, _ in valid}),
        len(derived) - len(valid),
        partial,
        float(own.mean()) if own.size else None,
        float(single.mean()) if single.size else None,
        diff,
        low,
        high,
        note,
    )
