"""Prices as they were known before t0. Histories are tuples of PricePoint sorted by time."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from datetime import datetime

from hindcast.records import PricePoint
from hindcast.timeutil import require_aware


def _cut(history: Sequence[PricePoint], t0: datetime) -> int:
    """Index of the first point at or after t0 (the history must be sorted by time)."""
    return bisect_left([point.t for point in history], require_aware(t0))


def price_at(history: Sequence[PricePoint], t0: datetime) -> PricePoint | None:
    """The last point strictly before t0, or None. Never a point at or after t0."""
    i = _cut(history, t0)
    return history[i - 1] if i else None


def history_before(history: Sequence[PricePoint], t0: datetime) -> tuple[PricePoint, ...]:
    """Every point strictly before t0, oldest first."""
    return tuple(history[: _cut(history, t0)])


def sort_history(points: Sequence[PricePoint]) -> tuple[PricePoint, ...]:
    """Sorted by time; two points at one instant are a data error, not a choice to make here."""
    ordered = tuple(sorted(points, key=lambda point: point.t))
    for a, b in zip(ordered, ordered[1:]):
        if a.t == b.t:
            raise ValueError(f"two prices at {a.t.isoformat()}")
    return ordered
