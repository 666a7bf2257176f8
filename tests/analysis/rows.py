"""Crafted scored rows and market facts for the analysis tests (hand-built, no sweep)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hindcast.records import PricePoint
from hindcast.scoring.aggregate import ScoredRow

T = datetime(2025, 1, 1, tzinfo=timezone.utc)


def day(n: float) -> datetime:
    return T + timedelta(days=n)


def row(
    forecaster: str,
    market: str,
    t0_day: float,
    p: float | None,
    outcome: float,
    price: float | None = None,
    resolved_day: float = 10,
    label: str | None = None,
    repeat: int = 0,
) -> ScoredRow:
    return ScoredRow(
        forecaster=forecaster,
        market_id=market,
        t0=day(t0_day),
        label=label or f"at=d{t0_day:g}",
        topic="t",
        probability=p,
        error=None if p is not None else "bad answer",
        outcome=outcome,
        market_price=price,
        repeat=repeat,
        resolved_at=day(resolved_day),
    )


def path(*points: tuple[float, float]) -> tuple[PricePoint, ...]:
    return tuple(PricePoint(day(d), p) for d, p in points)
