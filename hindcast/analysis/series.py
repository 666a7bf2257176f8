"""The stored forecasts as series: per (forecaster, market), its probability at each t0 (repeats
averaged), with the market's price at the same t0 as a forecaster of its own ("market price")."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from hindcast.analysis.units import MARKET_PRICE


@dataclass(frozen=True)
class Point:
    """One (forecaster, market, t0): the mean probability of its repeats and the market's price."""

    forecaster: str
    market_id: str
    t0: datetime
    label: str
    probability: float
    outcome: float
    market_price: float | None
    resolved_at: datetime | None


def points(rows: Sequence, with_market: bool = True) -> list[Point]:
    """Every (forecaster, market, t0) with a valid probability, sorted; `with_market`: also the
    market price as forecaster "market price" at every (market, t0) that had one."""
    groups: dict[tuple, list] = defaultdict(list)
    for r in rows:
        if r.probability is not None:
            groups[(r.forecaster, r.market_id, r.t0)].append(r)
    found = [_point(name, members, _mean(members)) for (name, _, _), members in groups.items()]
    if with_market:
        priced = {(r.market_id, r.t0): r for r in rows if r.market_price is not None}
        found += [_point(MARKET_PRICE, [r], r.market_price) for r in priced.values()]
    return sorted(found, key=lambda p: (p.forecaster, p.market_id, p.t0))


def shared(rows: Sequence, found: Sequence[Point] | None) -> Sequence[Point]:
    """`found` (the caller's `points(rows)`, computed once for several analyses), else computed."""
    return points(rows) if found is None else found


def _mean(members: list) -> float:
    """The repeats' mean probability: np.mean's value, without its cost for a single repeat
    (x + 0.0 is np.mean([x]) to the bit, −0.0 included)."""
    if len(members) == 1:
        return float(members[0].probability) + 0.0
    return float(np.mean([m.probability for m in members]))


def _point(name: str, members: list, probability: float) -> Point:
    first = members[0]
    return Point(
        name,
        first.market_id,
        first.t0,
        first.label,
        probability,
        first.outcome,
        first.market_price,
        first.resolved_at,
    )


def by_forecaster_market(found: Sequence[Point]) -> dict[str, dict[str, list[Point]]]:
    """forecaster → market → its points in t0 order."""
    out: dict[str, dict[str, list[Point]]] = defaultdict(lambda: defaultdict(list))
    for p in found:
        out[p.forecaster][p.market_id].append(p)
    return out


def failures(rows: Sequence) -> dict[str, int]:
    """Failed forecasts per forecaster (counted, never imputed)."""
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        if r.probability is None:
            counts[r.forecaster] += 1
    return dict(counts)
