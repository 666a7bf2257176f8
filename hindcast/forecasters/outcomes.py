"""Other markets' outcomes as a Context sees them: those certainly public before t0.

`Outcomes` orders a sweep's resolutions by the instant each became certainly public, once;
`Outcomes.before(t0, market_id)` is then a bisection and two list slices instead of a scan
of every resolution per forecast (at 10,000 markets × 4 cutoffs the scan alone was 1.6 billion
comparisons). What it returns, `KnownBefore`, holds only the outcomes known before t0 — nothing
later is reachable from it — with their count and Yes total, and lists them in the order of the
resolutions given (the order a Context has always shown)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import accumulate

from hindcast.records import Resolution


@dataclass(frozen=True, slots=True)
class PastResolution:
    """Another market's outcome, public before t0 (its id and outcome only)."""

    market_id: str
    outcome: float


class Outcomes:
    """Every Yes/No resolution of a sweep, ordered by when it became certainly public."""

    __slots__ = ("_known", "_past", "_order", "_yes", "_rows_of")

    def __init__(self, resolutions: Sequence[Resolution]) -> None:
        rows = sorted(
            (r.known_at, i, PastResolution(r.market_id, outcome))
            for i, r in enumerate(resolutions)
            if (outcome := r.outcome) is not None
        )
        self._known = [known for known, _, _ in rows]
        self._order = [i for _, i, _ in rows]
        self._past = [past for _, _, past in rows]
        self._yes = [0.0, *accumulate(p.outcome for p in self._past)]
        self._rows_of: dict[str, list[int]] = {}
        for row, past in enumerate(self._past):
            self._rows_of.setdefault(past.market_id, []).append(row)

    def before(self, t0: datetime, market_id: str) -> KnownBefore:
        """The outcomes of markets other than `market_id` known strictly before `t0`."""
        n = bisect_left(self._known, t0)
        past, order = self._past[:n], self._order[:n]
        yes = self._yes[n]
        for row in reversed([r for r in self._rows_of.get(market_id, ()) if r < n]):
            yes -= past[row].outcome
            del past[row], order[row]
        return KnownBefore(past, order, yes)


class KnownBefore:
    """The outcomes known before one t0 (another market's only): their count, Yes total, list."""

    __slots__ = ("_past", "_order", "_yes", "_listed")

    def __init__(self, past: list[PastResolution], order: list[int], yes: float) -> None:
        self._past, self._order, self._yes = past, order, yes
        self._listed: tuple[PastResolution, ...] | None = None

    def counts(self) -> tuple[int, float]:
        """(how many, how many Yes)."""
        return len(self._past), self._yes

    def listed(self) -> tuple[PastResolution, ...]:
        """Each outcome, in the order of the resolutions the sweep was given (made on first use)."""
        if self._listed is None:
            self._listed = tuple(p for _, p in sorted(zip(self._order, self._past)))
        return self._listed
