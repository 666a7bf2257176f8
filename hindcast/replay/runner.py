"""The runner: forecasters × cutoffs × repeats, bounded concurrency, each answer stored as it arrives.

A forecaster that raises, or returns something that is not a Forecast, is recorded as a
failure with the reason; it never stops the sweep and is never replaced by a number —
unless failures in this invocation pass `max_failures`, which stops scheduling new
forecasts (those stored are kept; re-running resumes).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from hindcast.errors import HindcastError, LeakageError
from hindcast.forecasters.base import Context, Forecaster
from hindcast.records import Forecast, Question
from hindcast.replay.cutoffs import Cutoff
from hindcast.timeutil import iso


@dataclass(frozen=True, slots=True)
class Task:
    forecaster: str
    cutoff: Cutoff
    repeat: int = 0

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.forecaster, self.cutoff.market_id, iso(self.cutoff.t0), self.repeat)


def plan(forecasters: Sequence[str], cutoffs: Sequence[Cutoff], done: set, repeats: int = 1,
         allowed: Callable[[str, str], bool] = lambda forecaster, market: True) -> list[Task]:
    """Every (forecaster, cutoff, repeat) not stored yet, in a stable order."""
    tasks = [Task(name, c, r) for c in cutoffs for name in forecasters for r in range(repeats)
             if allowed(name, c.market_id)]
    return [t for t in tasks if t.key not in done]


class FailureBudget:
    def __init__(self, limit: int | None):
        self.limit, self.failures = limit, 0

    def record(self, forecast: Forecast) -> None:
        self.failures += not forecast.ok

    @property
    def exhausted(self) -> bool:
        return self.limit is not None and self.failures > self.limit


async def run_tasks(tasks: Sequence[Task], forecasters: Mapping[str, Forecaster],
                    question_for: Callable[[Cutoff], Question], context_for: Callable[[Task], Context],
                    sink: Callable[[Task, Forecast, tuple], None], concurrency: int,
                    advance: Callable[[], None] = lambda: None, max_failures: int | None = None) -> None:
    """Run tasks with at most `concurrency` in flight; `sink` stores each result (with the
    context's retrieval log) in order of arrival."""
    gate, budget = asyncio.Semaphore(concurrency), FailureBudget(max_failures)

    async def one(task: Task) -> None:
        async with gate:
            if budget.exhausted:
                return
            ctx = context_for(task)
            forecast = await _guarded(forecasters[task.forecaster], question_for(task.cutoff), ctx)
            await asyncio.to_thread(sink, task, forecast, ctx.retrievals)  # the loop keeps serving others
            budget.record(forecast)
        advance()

    await asyncio.gather(*(one(t) for t in tasks))
    if budget.exhausted:
        raise HindcastError(f"stopped after {budget.failures} failed forecasts (max failures {max_failures}); "
                            "what was stored is kept — re-run the same sweep to resume")


async def _guarded(forecaster: Forecaster, question: Question, ctx: Context) -> Forecast:
    try:
        result = await forecaster.forecast(question, ctx)
    except LeakageError:
        raise  # a harness defect, never a forecaster's failure: stop the sweep
    except Exception as exc:  # errors are data: recorded with their reason
        return Forecast.failure(f"{type(exc).__name__}: {exc}")
    if not isinstance(result, Forecast):
        return Forecast.failure(f"forecaster returned {type(result).__name__}, not a Forecast")
    return result
