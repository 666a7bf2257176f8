"""Baselines every leaderboard needs: the market itself, a coin flip, a walk-forward base rate."""

from __future__ import annotations

from dataclasses import dataclass

from hindcast.forecasters.base import Context, ModelForecaster
from hindcast.records import Forecast, Question
from hindcast.timeutil import iso


@dataclass(frozen=True)
class MarketForecaster(ModelForecaster):
    """The market's YES price at t0 (last point strictly before t0): the human yardstick."""

    name: str = "market"

    async def forecast(self, question: Question, ctx: Context) -> Forecast:
        history = ctx.price_history()
        if not history:
            return Forecast.failure(f"no market price before t0 {iso(question.t0)}")
        last = history[-1]
        return Forecast(last.p, rationale=f"market price at {iso(last.t)}")


@dataclass(frozen=True)
class ConstantForecaster(ModelForecaster):
    """The same probability for every question (0.5 by default)."""

    p: float = 0.5
    name: str = "constant"

    def __post_init__(self) -> None:
        if not 0.0 <= float(self.p) <= 1.0:
            raise ValueError(f"p={self.p!r} is not a probability")

    async def forecast(self, question: Question, ctx: Context) -> Forecast:
        return Forecast(self.p, rationale=f"constant {self.p:g}")


@dataclass(frozen=True)
class BaseRateForecaster(ModelForecaster):
    """Walk-forward Yes rate among markets whose outcome was public before t0.

    Uses the rule of succession, (yes + 1) / (n + 2): a plain rate of 0 or 1 from a
    handful of markets would be a certainty no forecaster should state, and with no
    resolved market yet it is 0.5. Later resolutions never enter (the Context filters them).
    """

    name: str = "base-rate"

    async def forecast(self, question: Question, ctx: Context) -> Forecast:
        past = ctx.resolved_before()
        yes = sum(r.outcome for r in past)
        p = (yes + 1.0) / (len(past) + 2.0)
        return Forecast(
            p,
            rationale=f"{yes:g} Yes of {len(past)} markets resolved before t0",
            evidence=tuple(sorted(r.market_id for r in past)),
        )
