"""Walk-forward post-hoc calibration of each forecaster (issue 17, item 3). No model is called.

For a split instant S, a forecaster's calibrator is FITTED on its valid rows of markets whose
outcome was public before S (ScoredRow.known_at < S: `Resolution.known_at`, the instant the
outcome became public, not the effective resolution `resolved_at`, which can be earlier: a market
resolved before S but announced after it is never a training market) and APPLIED only to its rows
of markets whose outcome became public at or after S; it is never fitted on a row it is scored on.
Rows without that instant belong to neither side (counted in a note).

`strict=True`: every test row's calibrator was fitted only on outcomes public before that row's
t0 — the test rows are those with t0 ≥ S (each training outcome was public before S ≤ t0), so the
calibrated forecast is one that could have been made at t0. By default a test row forecast before
S is calibrated with outcomes public only by S: a hindcast of a forecaster recalibrated at S (the
finding counts such rows).

Two calibrators, each a derived forecaster `<forecaster>·platt` / `<forecaster>·isotonic` on
the test rows only:
- Platt scaling: q = expit(a·logit(p) + b), a and b by maximum likelihood (logistic regression
  without penalty, Newton's method with step halving, in numpy), p clipped to [1e-6, 1 − 1e-6]
  before the logit (`ensemble.CLIP`, policy `logit-clip-1e-6`);
- isotonic regression: the non-decreasing step fit of the outcome on p (pool-adjacent-violators,
  ties in p pooled first), applied by linear interpolation between the fitted points and held
  constant beyond them (what scikit-learn's IsotonicRegression(out_of_bounds="clip") does).

Minimum training data (policy `calibration-min-20-rows-5-markets-2-per-class`): at least
MIN_TRAIN_ROWS valid rows from MIN_TRAIN_MARKETS markets, at least MIN_PER_CLASS markets of each
outcome, and (Platt) probabilities that are not all equal and do not separate the outcomes
perfectly (no finite maximum-likelihood fit). Otherwise no calibrated forecaster; the finding
says why. Failures: a failed test row stays failed in the calibrated forecaster (counted, never
imputed); failed training rows are not fitted on. Brier raw vs calibrated is compared on the
same valid test rows, the paired difference with a market-clustered bootstrap interval.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np

from hindcast.analysis.ensemble import SEPARATOR, clipped_logit, expit, paired_difference
from hindcast.scoring import Finding, ScoredRow, bootstrap

METHODS = ("platt", "isotonic")
MIN_TRAIN_ROWS = 20
MIN_TRAIN_MARKETS = 5
MIN_PER_CLASS = 2  # markets of each outcome among the training rows
MAX_NEWTON_STEPS = 100
POLICY = {
    "calibration_split": "walk-forward-public-before-split",
    "calibration_min": f"calibration-min-{MIN_TRAIN_ROWS}-rows-{MIN_TRAIN_MARKETS}-markets-"
    f"{MIN_PER_CLASS}-per-class",
    "calibration_clip": "logit-clip-1e-6",
}
COLUMNS = (
    "forecaster",
    "method",
    "derived",
    "n_train",
    "n_train_markets",
    "n_test",
    "n_test_markets",
    "n_test_failed",
    "n_test_before_split",
    "brier_raw",
    "brier_calibrated",
    "diff",
    "diff_ci_low",
    "diff_ci_high",
    "parameters",
    "note",
)


@dataclass(frozen=True)
class Platt:
    a: float  # slope on logit p
    b: float  # intercept

    def apply(self, p) -> np.ndarray:
        return expit(self.a * clipped_logit(p) + self.b)

    def describe(self) -> str:
        return f"a={self.a:.6g}, b={self.b:.6g}"


@dataclass(frozen=True)
class Isotonic:
    x: tuple[float, ...]  # distinct training probabilities, increasing
    y: tuple[float, ...]  # the fitted non-decreasing values at them

    def apply(self, p) -> np.ndarray:
        return np.interp(np.asarray(p, float), self.x, self.y)

    def describe(self) -> str:
        return f"{len(set(self.y))} levels over {len(self.x)} points"


@dataclass(frozen=True)
class Split:
    train: list[ScoredRow]  # valid rows of markets whose outcome was public before the split
    test: list[ScoredRow]  # all rows (failures included) of markets public at/after it
    undated: int  # rows without known_at (neither side)
    early: int  # rows of test markets with t0 < split (kept unless strict, then dropped)


@dataclass(frozen=True)
class Calibrated:
    rows: list[ScoredRow]  # the calibrated forecasters' test rows
    finding: Finding  # key "calibration"
    calibrators: dict[
        tuple[str, str], Platt | Isotonic
    ]  # (forecaster, method) → the fitted calibrator


def split_rows(rows: Iterable[ScoredRow], split: datetime, strict: bool = False) -> Split:
    """Train: valid rows whose outcome was public (`known_at`) before `split`; test: rows public
    at/after it (and, if strict, t0 ≥ split: every training outcome was public
    before the row's t0)."""
    rows = list(rows)
    dated = [r for r in rows if r.known_at is not None]
    train = [r for r in dated if r.known_at < split and r.probability is not None]
    later = [r for r in dated if r.known_at >= split]
    early = sum(1 for r in later if r.t0 < split)
    test = [r for r in later if r.t0 >= split] if strict else later
    return Split(train, test, len(rows) - len(dated), early)


def fit_platt(p, y) -> tuple[Platt | None, str | None]:
    """Unpenalised logistic regression of y on logit(p) with an intercept, or the reason there is
    none. A function of the rows as a set: they are put in (p, y) order first, so
    sums run the same way."""
    x, y = clipped_logit(p), np.asarray(y, float)
    order = np.lexsort((y, x))
    x, y = x[order], y[order]
    if np.ptp(x) == 0.0:
        return None, "probabilities all equal on the training rows (no slope to fit)"
    if separated(x, y):
        return None, "training outcomes separated by p (no finite Platt fit)"
    w = _newton(np.column_stack([x, np.ones_like(x)]), y)
    if w is None:
        return None, f"Platt fit did not converge in {MAX_NEWTON_STEPS} Newton steps"
    return Platt(float(w[0]), float(w[1])), None


def separated(x: np.ndarray, y: np.ndarray) -> bool:
    """True when no finite maximum-likelihood fit exists: one outcome only, or the outcomes'
    ranges of x meet at most at one point (complete or quasi-complete separation). Decided on the
    data, never by how an iteration behaved."""
    yes, no = x[y == 1.0], x[y == 0.0]
    if yes.size == 0 or no.size == 0:
        return True
    return bool(no.max() <= yes.min() or yes.max() <= no.min())


def _newton(design: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """Newton's method with step halving on overlapping data (a strictly concave log-likelihood
    with a finite maximum). Converged when the step is negligible, or when no halving of it raises
    the log-likelihood any more: the maximum to floating-point noise (a fixed step tolerance can
    sit below the gradient's rounding noise and never be met)."""
    w = np.zeros(design.shape[1])
    for _ in range(MAX_NEWTON_STEPS):
        q = expit(design @ w)
        hessian = design.T @ (design * (q * (1.0 - q))[:, None])
        step = np.linalg.lstsq(hessian, design.T @ (y - q), rcond=None)[0]
        moved = _halved(design, y, w, step)
        if moved is None or np.max(np.abs(step)) < 1e-10 * (1.0 + np.max(np.abs(w))):
            return w if moved is None else moved
        w = moved
    return None


def _halved(
    design: np.ndarray, y: np.ndarray, w: np.ndarray, step: np.ndarray
) -> np.ndarray | None:
    """w + step, halved until the log-likelihood rises (at most 30 halvings); None when no
    halving raises it: w is the maximum as far as floating point can tell."""
    base = _loglik(design, y, w)
    for _ in range(30):
        if _loglik(design, y, w + step) > base:
            return w + step
        step = step / 2.0
    return None


def _loglik(design: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    z = design @ w
    return float(np.sum(y * z - np.logaddexp(0.0, z)))


def fit_isotonic(p, y) -> tuple[Isotonic | None, str | None]:
    """Pool-adjacent-violators on (p, y), ties in p pooled (weighted) first."""
    p, y = np.asarray(p, float), np.asarray(y, float)
    xs, inverse = np.unique(p, return_inverse=True)
    if xs.size < 2:
        return None, "probabilities all equal on the training rows (nothing to order)"
    weights = np.bincount(inverse).astype(float)
    means = np.bincount(inverse, weights=y) / weights
    return Isotonic(tuple(map(float, xs)), tuple(map(float, pava(means, weights)))), None


def pava(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The weighted least-squares non-decreasing fit of `values` (in order)."""
    blocks: list[list[float]] = []  # [weighted mean, weight, count]
    for v, w in zip(values, weights):
        blocks.append([float(v), float(w), 1])
        while len(blocks) > 1 and blocks[-2][0] >= blocks[-1][0]:
            v2, w2, n2 = blocks.pop()
            v1, w1, n1 = blocks.pop()
            blocks.append([(v1 * w1 + v2 * w2) / (w1 + w2), w1 + w2, n1 + n2])
    return np.repeat([b[0] for b in blocks], [b[2] for b in blocks])


FITTERS = {"platt": fit_platt, "isotonic": fit_isotonic}


def too_little(train: Sequence[ScoredRow]) -> str | None:
    """Why `train` is too small to fit a calibrator on, or None."""
    markets = {r.market_id: r.outcome for r in train}
    per_class = min(sum(1 for o in markets.values() if o == c) for c in (0.0, 1.0))
    if len(train) < MIN_TRAIN_ROWS or len(markets) < MIN_TRAIN_MARKETS:
        return (
            f"too few training rows: {len(train)} rows, {len(markets)} markets public before the "
            f"split (needs {MIN_TRAIN_ROWS} rows, {MIN_TRAIN_MARKETS} markets)"
        )
    if per_class < MIN_PER_CLASS:
        return (
            f"too few training markets of one outcome: {per_class} (needs {MIN_PER_CLASS} of each)"
        )
    return None


def fit(method: str, train: Sequence[ScoredRow]) -> tuple[Platt | Isotonic | None, str | None]:
    """`method`'s calibrator fitted on `train` (valid rows) alone, or the reason there is none."""
    reason = too_little(train)
    if reason:
        return None, reason
    return FITTERS[method]([r.probability for r in train], [r.outcome for r in train])


def apply(calibrator: Platt | Isotonic, name: str, rows: Sequence[ScoredRow]) -> list[ScoredRow]:
    """The test rows as forecaster `name`, valid probabilities mapped, failures kept failed
    (each distinct probability mapped once, alone, as every row's was)."""
    mapped: dict[tuple[float, float], float] = {}

    def value(p: float) -> float:
        key = (p, math.copysign(1.0, p))  # 0.0 and −0.0 apart
        if key not in mapped:
            mapped[key] = float(calibrator.apply([p])[0])
        return mapped[key]

    return [
        replace(r, forecaster=name)
        if r.probability is None
        else replace(r, forecaster=name, probability=value(r.probability))
        for r in rows
    ]


def calibrate(
    rows: Iterable[ScoredRow],
    split: datetime,
    methods: Sequence[str] = METHODS,
    strict: bool = False,
    replicates: int = bootstrap.REPLICATES,
    seed: int = 0,
) -> Calibrated:
    """Each forecaster's calibrators fitted on outcomes public before `split`, applied to markets
    public at/after it, and the finding."""
    parts = split_rows(rows, split, strict)
    train, test = _by_forecaster(parts.train), _by_forecaster(parts.test)
    out, table, fitted = [], [], {}
    for forecaster in sorted(set(train) | set(test)):
        for method in methods:
            calibrator, reason = fit(method, train.get(forecaster, []))
            name = f"{forecaster}{SEPARATOR}{method}"
            mapped = apply(calibrator, name, test.get(forecaster, [])) if calibrator else []
            out += mapped
            fitted.update({(forecaster, method): calibrator} if calibrator else {})
            table.append(
                _row(
                    forecaster,
                    method,
                    name,
                    calibrator,
                    reason,
                    train.get(forecaster, []),
                    test.get(forecaster, []),
                    mapped,
                    split,
                    replicates,
                    seed,
                )
            )
    return Calibrated(out, _finding(table, parts, split, strict), fitted)


def _by_forecaster(rows: Iterable[ScoredRow]) -> dict[str, list[ScoredRow]]:
    groups: dict[str, list[ScoredRow]] = defaultdict(list)
    for r in rows:
        groups[r.forecaster].append(r)
    return {f: sorted(g, key=lambda r: (r.market_id, r.t0, r.repeat)) for f, g in groups.items()}


def _row(
    forecaster: str,
    method: str,
    name: str,
    calibrator,
    reason: str | None,
    train: list[ScoredRow],
    test: list[ScoredRow],
    mapped: list[ScoredRow],
    split: datetime,
    replicates: int,
    seed: int,
) -> tuple:
    valid = [
        raw for raw in test if raw.probability is not None
    ]  # mapped holds them in the same order
    raw_b = np.array([raw.brier for raw in valid], float)
    cal_b = np.array([cal.brier for cal in mapped if cal.probability is not None], float)
    diff = low = high = note = None
    if calibrator:
        rng = bootstrap.rng_for(seed, f"calibration|{name}")
        diff, low, high, note = paired_difference(
            [raw.market_id for raw in valid], cal_b - raw_b, replicates, rng
        )
    if not test:
        reason = reason or "no test row (no market of this forecaster public at/after the split)"
    return (
        forecaster,
        method,
        name if calibrator else None,
        len(train),
        len({r.market_id for r in train}),
        len(test),
        len({r.market_id for r in test}),
        sum(1 for r in test if r.probability is None),
        sum(1 for r in test if r.t0 < split),
        _mean(raw_b),
        _mean(cal_b),
        diff,
        low,
        high,
        calibrator.describe() if calibrator else None,
        reason or (note if calibrator and test else None),
    )


def _mean(values: np.ndarray) -> float | None:
    return float(values.mean()) if values.size else None


def _finding(table: list[tuple], parts: Split, split: datetime, strict: bool) -> Finding:
    notes = [
        (
            f"walk-forward split at {split.isoformat()}: fitted on valid rows of markets whose "
            "outcome was public (known_at) before it, applied only to rows of markets public "
            "at/after it; diff = calibrated − raw Brier on the same valid test rows (negative: "
            "calibration helped), market-clustered 95% interval"
        ),
        (
            "Platt on logit p clipped to [1e-06, 1 − 1e-06]; isotonic by "
            f"pool-adjacent-violators; a calibrator needs {MIN_TRAIN_ROWS} training rows from "
            f"{MIN_TRAIN_MARKETS} markets, {MIN_PER_CLASS} of each outcome"
        ),
        "failed test rows stay failed in the calibrated forecaster (n_test_failed), never imputed",
    ]
    if parts.undated:
        notes.append(
            f"{parts.undated} row(s) without the instant their outcome became public: neither "
            "fitted on nor calibrated"
        )
    if strict:
        notes.append(
            f"strict: {parts.early} row(s) of test markets forecast before the split left out "
            "(every calibrated row's calibrator used only outcomes public before its t0)"
        )
    elif parts.early:
        notes.append(
            f"{parts.early} test row(s) have t0 before the split (n_test_before_split): their "
            "calibrator uses outcomes public only by the split (use strict to leave them out)"
        )
    return Finding(
        "calibration",
        "Walk-forward calibration (fitted before the split, scored after it)",
        COLUMNS,
        tuple(table),
        tuple(notes),
    )
