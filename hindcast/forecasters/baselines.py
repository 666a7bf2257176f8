"""Baselines every leaderboard needs: the market itself, a coin flip, a walk-forward base rate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from hindcast.forecasters.base import Context, ModelForecaster
from hindcast.records import Forecast, Question
from hindcast.timeutil import iso


@dataclass(frozen=True)
class MarketForecaster(ModelForecaster):
    """The market's YES price at t0 (last point strictly before t0): the human yardstick."""

    name: str = "market"
    cheap: ClassVar[bool] = True

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
    cheap: ClassVar[bool] = True

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
    cheap: ClassVar[bool] = True

    async def forecast(self, question: Question, ctx: Context) -> Forecast:
        n, yes = ctx.resolved_counts()
        p = (yes + 1.0) / (n + 2.0)
        return Forecast(
            p,
            rationale=f"{yes:g} Yes of {n} markets resolved before t0",
            evidence=(evidence(n, yes),),
        )


RULE = "other markets' Yes/No outcomes known before t0"


def evidence(n: int, yes: float) -> str:
    """What a base-rate forecast read, in bounded size: the rule and its counts. The ids are not
    kept (they grew with the store: 147 KB a forecast at 10,000 markets); they are recomputable
    from the run's store version and t0 (`Context.resolved_before()`)."""
    return f"{RULE}: n={n}, yes={yes:g}"
