"""Event-level inference and the coherence check.

Markets of one event (a neg-risk group or a shared event id, `MarketMeta.event`) are one resampling
unit in every interval of this package: a bootstrap replicate draws whole events, a permutation
swaps whole events. The coherence check: in a neg-risk event the markets are mutually exclusive (at
most one resolves YES), so at one t0 a coherent forecaster's probabilities over all of them sum to
at most 1 — exactly 1 when they are exhaustive, as neg-risk groups are. For each forecaster (and the
market price) and each t0 at which it answered at least two markets of such an event: the sum, how
many of the event's markets it answered, and the excess over 1."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from hindcast.analysis import series
from hindcast.analysis.units import MarketFacts
from hindcast.scoring import Finding
from hindcast.timeutil import iso


@dataclass(frozen=True)
class Coherence:
    forecaster: str
    event: str
    t0: datetime
    n_answered: int
    n_markets: int
    total: float

    @property
    def excess(self) -> float:
        return self.total - 1.0


def coherence(
    rows: Sequence, facts: MarketFacts, found: Sequence[series.Point] | None = None
) -> list[Coherence]:
    """`found`: `series.points(rows)` if the caller has them."""
    groups = {
        e: ms for e, ms in facts.event_markets().items() if all(m in facts.exclusive for m in ms)
    }
    member = {m: e for e, ms in groups.items() for m in ms}
    if not member:
        return []
    sums: dict[tuple, list[float]] = defaultdict(list)
    for p in series.shared(rows, found):
        if p.market_id in member:
            sums[(p.forecaster, member[p.market_id], p.t0)].append(p.probability)
    return [
        Coherence(name, event, t0, len(ps), len(groups[event]), sum(ps))
        for (name, event, t0), ps in sorted(sums.items())
        if len(ps) > 1
    ]


def units_note(rows: Sequence, facts: MarketFacts) -> str:
    markets = sorted({r.market_id for r in rows})
    units = {facts.unit(m) for m in markets}
    shared = len(markets) - len(units)
    if not shared:
        return (
            f"{len(markets)} markets, none sharing an event (no neg-risk group or event id in "
            "the market store's metadata): each market is resampled alone, and there is no "
            "coherence check to make."
        )
    return (
        f"{len(markets)} markets in {len(units)} resampling units: {shared} markets share an "
        "event with another and are resampled with it."
    )


def finding(found: Sequence[Coherence], note: str) -> Finding:
    columns = ("forecaster", "event", "t0", "n_answered", "n_markets", "sum_p", "excess")
    rows = tuple(
        (c.forecaster, c.event, iso(c.t0), c.n_answered, c.n_markets, c.total, c.excess)
        for c in found
    )
    return Finding(
        "events",
        "Event-level inference: resampling units and the coherence of mutually exclusive markets",
        columns,
        rows,
        (note, " ".join(__doc__.split("\n\n")[1].split())),
    )
