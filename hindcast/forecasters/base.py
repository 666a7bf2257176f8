"""The Forecaster protocol and the t0-bound Context: all a forecaster may see.

A forecaster receives a Question (the market as it stood at t0, no outcome) and a
Context whose every capability is bounded by t0 by the harness, not by the forecaster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from hindcast.errors import LeakageError
from hindcast.markets.prices import history_before
from hindcast.records import Forecast, PricePoint, Question, Resolution
from hindcast.timeutil import iso


@runtime_checkable
class Forecaster(Protocol):
    """Anything with a `name` and this one coroutine can be judged."""

    name: str

    async def forecast(self, question: Question, ctx: "Context") -> Forecast: ...


@dataclass(frozen=True, slots=True)
class PastResolution:
    """Another market's outcome, public before t0 (its id and outcome only)."""

    market_id: str
    outcome: float


class Context:
    """t0-bound capabilities. Built by the harness; the forecaster cannot change t0."""

    __slots__ = ("_t0", "_history", "_resolutions", "_market_id")

    def __init__(self, t0, market_id: str, history: Sequence[PricePoint], resolutions: Sequence[Resolution]):
        self._t0 = t0
        self._market_id = market_id
        self._history = history_before(history, t0)
        self._resolutions = tuple(resolutions)

    @property
    def t0(self):
        return self._t0

    def price_history(self) -> tuple[PricePoint, ...]:
        """The market's YES prices known strictly before t0, oldest first."""
        for point in self._history:
            if point.t >= self._t0:
                raise LeakageError(f"price at {iso(point.t)} is not before t0 {iso(self._t0)}")
        return self._history

    def resolved_before(self) -> tuple[PastResolution, ...]:
        """Other markets whose Yes/No outcome was certainly public before t0."""
        return tuple(
            PastResolution(r.market_id, r.outcome)
            for r in self._resolutions
            if r.known_at < self._t0 and r.outcome is not None and r.market_id != self._market_id
        )
