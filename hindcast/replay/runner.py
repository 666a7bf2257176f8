"""The runner: forecasters × cutoffs, bounded concurrency, every answer stored as it arrives.

A forecaster that raises, or returns something that is not a Forecast, is recorded as a
failure with the reason; it never stops the sweep and is never replaced by a number.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from hindcast.errors import LeakageError
from hindcast.forecasters.base import Context, Forecaster
from hindcast.records import Forecast, Question
from hindcast.replay.cutoffs import Cutoff
from hindcast.timeutil import iso


@dataclass(frozen=True, slots=True)
class Task:
    forecaster: str
    cutoff: Cutoff

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.forecaster, self.cutoff.market_id, iso(self.cutoff.t0))


def plan(forecasters: Sequence[str], cutoffs: Sequence[Cutoff], done: set) -> list[Task]:
    """Every (forecaster, cutoff) not stored yet, in a stable order."""
    tasks = [Task(name, c) for c in cutoffs for name in forecasters]
    return [t for t in tasks if t.key not in done]


async def run_tasks(tasks: Sequence[Task], forecasters: Mapping[str, Forecaster],
                    question_for: Callable[[Cutoff], Question], context_for: Callable[[Cutoff], Context],
                    sink: Callable[[Task, Forecast], None], concurrency: int,
                    advance: Callable[[], None] = lambda: None) -> None:
    """Run tasks with at most `concurrency` in flight; `sink` stores each result in order of arrival."""
    gate = asyncio.Semaphore(concurrency)

    async def one(task: Task) -> None:
        async with gate:
            forecast = await _guarded(forecasters[task.forecaster], question_for(task.cutoff), context_for(task.cutoff))
        sink(task, forecast)
        advance()

    await asyncio.gather(*(one(t) for t in tasks))


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
