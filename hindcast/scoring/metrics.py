"""Proper scores of one probability against one outcome. Each declares its direction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    name: str
    higher_is_better: bool


BRIER = Metric("brier", higher_is_better=False)
SKILL = Metric("skill_vs_market", higher_is_better=True)


def brier(probability: float, outcome: float) -> float:
    """Squared error of a YES probability against a 0/1 outcome."""
    return (probability - outcome) ** 2


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def skill(score: float | None, reference: float | None) -> float | None:
    """Brier skill 1 − score/reference: > 0 beats the reference, undefined when it is perfect."""
    if score is None or not reference:
        return None
    return 1.0 - score / reference
