"""Cutoff schedules: which instants t0 each market is replayed at. Pure functions.

Rules: lifetime fractions, offsets before resolution (`7d`), explicit instants, and the
Hindcast rule (the day before resolution, capped at the archive's end).
A market's lifetime runs from its opening (or, when that is unknown, its first price point)
to its effective resolution. Lifetime fraction f maps to
`start + f × (last − start)`, where `last` is one day before the effective resolution
(so 1.0 is "the day before resolution", as in the Hindcast paper), truncated to the
second. Every cutoff must lie strictly inside (start, resolution); others are refused.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from hindcast.errors import CutoffError
from hindcast.records import Market, PricePoint, Resolution
from hindcast.timeutil import ONE_DAY, iso, require_aware

DEFAULT_FRACTIONS = (0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True, slots=True)
class Lifetime:
    market_id: str
    start: datetime
    end: datetime  # the effective resolution instant


@dataclass(frozen=True, slots=True)
class Cutoff:
    market_id: str
    t0: datetime
    label: str  # "f=0.25" or "at=2025-11-01T00:00:00Z"
    fraction: float | None = None


def lifetime(market: Market, resolution: Resolution, history: Sequence[PricePoint]) -> Lifetime:
    start = market.opened_at or (history[0].t if history else None)
    if start is None:
        raise CutoffError(
            f"market {market.id}: no opening date and no price history, so no lifetime"
        )
    if start >= resolution.resolved_at:
        raise CutoffError(
            f"market {market.id}: opens at {iso(start)}, not before its resolution "
            f"{iso(resolution.resolved_at)}"
        )
    return Lifetime(market.id, start, resolution.resolved_at)


def check_fraction(fraction: float) -> float:
    if not (math.isfinite(fraction) and 0.0 < fraction <= 1.0):
        raise CutoffError(f"lifetime fraction {fraction!r} must be in (0, 1]")
    return fraction


def fraction_cutoff(life: Lifetime, fraction: float) -> Cutoff:
    """The cutoff at a lifetime fraction; refused when the lifetime is a day or shorter."""
    last = life.end - ONE_DAY
    if last <= life.start:
        raise CutoffError(
            f"market {life.market_id}: lifetime {iso(life.start)} → {iso(life.end)} is one "
            "day or shorter"
        )
    span = int((last - life.start).total_seconds())
    t0 = life.start + timedelta(seconds=math.floor(span * check_fraction(fraction)))
    return Cutoff(life.market_id, t0, f"f={fraction:g}", fraction)


def offset_cutoff(life: Lifetime, offset: timedelta, text: str) -> Cutoff:
    """`offset` before the effective resolution (e.g. 7d)."""
    return instant_cutoff(life, life.end - offset, f"before={text}")


def hindcast_rule_cutoff(life: Lifetime, archive_end: datetime | None) -> Cutoff:
    """The Hindcast paper's rule: the day before resolution, capped at the archive's end
    (the instant after its last full day), so the forecaster can see the whole archive."""
    t0 = life.end - ONE_DAY if archive_end is None else min(life.end - ONE_DAY, archive_end)
    return instant_cutoff(life, t0, "rule=hindcast")


def instant_cutoff(life: Lifetime, t0: datetime, label: str | None = None) -> Cutoff:
    """An explicit cutoff, refused at or after the effective resolution or before opening."""
    t0 = require_aware(t0)
    if t0 >= life.end:
        raise CutoffError(
            f"cutoff {iso(t0)} is at or after market {life.market_id}'s effective resolution "
            f"{iso(life.end)}; a hindcast must stand strictly before the outcome is known"
        )
    if t0 <= life.start:
        raise CutoffError(
            f"cutoff {iso(t0)} is not after market {life.market_id}'s opening {iso(life.start)}"
        )
    return Cutoff(life.market_id, t0, label or f"at={iso(t0)}")


def freeze_cutoff(life: Lifetime, freeze: datetime) -> Cutoff:
    """The one cutoff of a market whose price and text are known at one instant only (e.g. a
    ForecastBench freeze): the second after it, whatever the sweep's rules."""
    return instant_cutoff(life, freeze + timedelta(seconds=1), "freeze")


def schedule(
    lives: Iterable[Lifetime],
    fractions: Sequence[float] = DEFAULT_FRACTIONS,
    instants: Sequence[datetime] = (),
    offsets: Sequence[tuple[timedelta, str]] = (),
    rule_end: datetime | None = None,
    hindcast_rule: bool = False,
) -> list[Cutoff]:
    """Every (market, t0) of a sweep, in a stable order, without duplicate instants.
    Raises on the first refused cutoff."""
    cutoffs = []
    for life in lives:
        planned = [fraction_cutoff(life, f) for f in fractions]
        planned += [offset_cutoff(life, delta, text) for delta, text in offsets]
        planned += [instant_cutoff(life, t) for t in instants]
        planned += [hindcast_rule_cutoff(life, rule_end)] if hindcast_rule else []
        cutoffs += _first_per_instant(planned)
    return cutoffs


def _first_per_instant(planned: list[Cutoff]) -> list[Cutoff]:
    """Two rules landing on one t0 (1.0 and 1d do) are one cutoff, under the first label."""
    seen, kept = set(), []
    for c in planned:
        if c.t0 not in seen:
            seen.add(c.t0)
            kept.append(c)
    return kept
