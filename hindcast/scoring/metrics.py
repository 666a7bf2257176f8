"""Scores of probabilities against outcomes, vectorised. Each metric declares its direction.

Outcomes are 0 or 1, or a fraction in (0, 1) (a Manifold market resolved MKT). Brier and the
log score use the fraction as it is (the expected score of a 0/1 outcome drawn with that
chance); the calibration table and ECE average it into the observed frequency. Accuracy has
no fractional meaning (no side "won"): it counts binary outcomes only, and
`binary_accuracy` says how many fractional ones it left out.

Named policies, recorded with every run's scores:
- log score: probabilities are clipped to [LOG_CLIP, 1 − LOG_CLIP] (policy `log-clip-1e-6`)
  so a confident miss costs log(1e-6) ≈ −13.8 instead of −∞. Probabilities are never
  clipped anywhere else.
- accuracy: p > 0.5 predicts Yes, p < 0.5 No, p = 0.5 earns half a point; over binary
  outcomes only (a fractional outcome is not a right or wrong side, and is left out).
- calibration: ECE over 10 equal-width bins of p ([0, 0.1), …, [0.9, 1.0]).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hindcast.errors import ConfigError

LOG_CLIP = 1e-6
ECE_BINS = 10
POLICIES = {
    "log_score": "log-clip-1e-6",
    "accuracy": "half-point-at-0.5;binary-outcomes-only",
    "ece": "10-equal-width-bins",
}


@dataclass(frozen=True)
class Metric:
    name: str
    higher_is_better: bool


METRICS = {
    "brier": Metric("brier", False),
    "log_score": Metric("log_score", True),
    "accuracy": Metric("accuracy", True),
    "skill_vs_market": Metric("skill_vs_market", True),
    "mean_abs_diff_market": Metric("mean_abs_diff_market", False),
    "ece": Metric("ece", False),
}


def best_first(name: str, value: float | None) -> tuple[bool, float]:
    """A sort key that puts the best values of metric `name` first, by its declared direction
    (missing values last)."""
    if name not in METRICS:
        raise ConfigError(f"unknown metric {name!r} (known: {', '.join(METRICS)})")
    if value is None:
        return True, 0.0
    return False, -value if METRICS[name].higher_is_better else value


def brier(p, o) -> np.ndarray:
    """Squared error of each YES probability against its 0/1 outcome."""
    return (np.asarray(p, float) - np.asarray(o, float)) ** 2


def log_score(p, o) -> np.ndarray:
    """log of the probability given to what happened (≤ 0, higher is better), clipped by policy;
    a fractional outcome o (Manifold MKT) scores o·log q + (1 − o)·log(1 − q)."""
    q, o = np.clip(np.asarray(p, float), LOG_CLIP, 1.0 - LOG_CLIP), np.asarray(o, float)
    whole = np.where(o == 1.0, np.log(q), np.log1p(-q))
    return np.where((o == 0.0) | (o == 1.0), whole, o * np.log(q) + (1.0 - o) * np.log1p(-q))


def is_binary(o) -> np.ndarray:
    """Which outcomes are 0 or 1 (the rest are fractional)."""
    o = np.asarray(o, float)
    return (o == 0.0) | (o == 1.0)


def accuracy(p, o) -> np.ndarray:
    """1 for the right side, 0 for the wrong one, 0.5 at p = 0.5; NaN for a fractional outcome
    (no side won): average with `binary_accuracy`, never a plain mean."""
    p, o = np.asarray(p, float), np.asarray(o, float)
    right = np.where(p == 0.5, 0.5, ((p > 0.5) == (o == 1.0)).astype(float))
    return np.where(is_binary(o), right, np.nan)


@dataclass(frozen=True)
class BinaryAccuracy:
    value: float | None  # mean over binary outcomes (None: there is none)
    n: int  # binary outcomes counted
    fractional_left_out: int


def binary_accuracy(p, o) -> BinaryAccuracy:
    """Accuracy over the binary outcomes, and how many fractional ones were left out."""
    binary = is_binary(o)
    counted = accuracy(p, o)[binary]
    value = float(counted.mean()) if counted.size else None
    return BinaryAccuracy(value, int(binary.sum()), int((~binary).sum()))


def skill(score: float | None, reference: float | None) -> float | None:
    """Brier skill 1 − score/reference: > 0 beats the reference; undefined when it is perfect."""
    if score is None or not reference:
        return None
    return 1.0 - score / reference


def bin_index(p, bins: int = ECE_BINS) -> np.ndarray:
    return np.minimum((np.asarray(p, float) * bins).astype(int), bins - 1)


@dataclass(frozen=True)
class ReliabilityBin:
    lower: float
    upper: float
    n: int
    mean_probability: float | None
    observed_frequency: float | None


def reliability_table(p, o, bins: int = ECE_BINS) -> list[ReliabilityBin]:
    p, o, idx = np.asarray(p, float), np.asarray(o, float), bin_index(p, bins)
    table = []
    for b in range(bins):
        mask = idx == b
        n = int(mask.sum())
        table.append(
            ReliabilityBin(
                b / bins,
                (b + 1) / bins,
                n,
                float(p[mask].mean()) if n else None,
                float(o[mask].mean()) if n else None,
            )
        )
    return table


def ece(p, o, bins: int = ECE_BINS) -> float:
    """Expected calibration error: Σ (n_b / N) |mean p_b − mean o_b| over the bins."""
    n = len(p)
    return sum(
        b.n / n * abs(b.mean_probability - b.observed_frequency)
        for b in reliability_table(p, o, bins)
        if b.n
    )
