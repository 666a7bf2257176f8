# recipe: docs/recipes/own_forecaster.py
"""Your own forecaster: a complete class, registered, swept next to `market` on the shipped sample."""
from dataclasses import dataclass
from datetime import datetime, timezone

import hindcast


@dataclass(frozen=True)
class Shrunk:
    """The market's last price before t0, pulled toward 0.5 by `weight` (0 = the market, 1 = a coin flip).

    A forecaster is anything with a `name` and `async def forecast(question, ctx) -> Forecast`.
    `question` is the market as it stood at t0 (no outcome); `ctx` gives only what was known
    before t0: ctx.price_history(), ctx.resolved_before(), and ctx.search/read/thread when
    the sweep has an archive.
    """

    weight: float = 0.2
    name: str = "shrunk"  # the sweep passes the spec ("shrunk:weight=0.3") as the name

    async def forecast(self, question: hindcast.Question, ctx: hindcast.Context) -> hindcast.Forecast:
        history = ctx.price_history()  # YES prices strictly before t0, oldest first
        if not history:  # a failure is stored and counted, never replaced by a number
            return hindcast.Forecast.failure(f"no market price before {question.t0:%Y-%m-%d}")
        p = (1 - self.weight) * history[-1].p + self.weight * 0.5
        return hindcast.Forecast(p, rationale=f"market {history[-1].p:.3f} shrunk by {self.weight}")


# A factory called with name=<the spec> and the spec's parameters (`shrunk:weight=0.3` → weight=0.3).
# Packages register one under the entry-point group `hindcast.forecasters` instead.
hindcast.register_forecaster("shrunk", Shrunk)

result = hindcast.sweep(store=hindcast.sample("markets"), forecasters=["market", "shrunk:weight=0.3"],
                        fractions=[0.5], out="runs", now=datetime.now(timezone.utc))
for row in result.board:
    if row.slice == "all":
        print(f"{row.forecaster:<18} Brier {row.brier:.4f}  vs market {row.brier_diff_vs_market:+.4f} "
              f"({row.n_forecasts} forecasts, {row.n_failed} failed)")
