"""One sweep behind one port: `Sweep` is what the runner (`replay.runner.run_tasks`) asks of a
plan being executed — the question and t0-bound Context of a task, where each answer and each
outage goes, which tasks this process holds — for a hindcast (`replay.engine`) and for the
service's live arm (`schedule.live`, a plan of live cutoffs at the tick's instant) alike.

Its parts: the Plan, the run store, the models (forecasters are bound to them, breakers reset
from the limits), the Limits, and the claims (`replay.claims.Claims`; `Unclaimed` for a caller
that is the only writer of its run). A `Journal` (the live log) sees each answer before it is
stored, one at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from hindcast.errors import InfrastructureError
from hindcast.forecasters import Context, ModelForecaster, hooked, registry
from hindcast.records import Forecast, Question
from hindcast.replay.claims import Claims
from hindcast.replay.cutoffs import Cutoff
from hindcast.replay.plan import Plan, context_at, question_at, retriever_factory
from hindcast.replay.runner import Limits, Task, run_tasks
from hindcast.runs import RunStore, add_many, forecast_row

if TYPE_CHECKING:
    from hindcast.llm import Models


class Journal(Protocol):
    """Something that records each answer before the run store does (the live log)."""

    def entry(
        self, task: Task, question: Question, forecast: Forecast
    ) -> AbstractContextManager[None]: ...

    def outage(self, task: Task) -> None: ...


class Unclaimed:
    """The claims of a sweep that is its run's only writer: every task is its own."""

    def __init__(self, now: datetime) -> None:
        self.now, self.made = now, 0
        self.owner: str | None = None  # no claim rows to drop with a stored forecast
        self._lock = threading.Lock()

    def take_batch(self, tasks: list[Task]) -> list[Task]:
        return tasks

    def release_batch(self, tasks: list[Task]) -> None:
        pass

    def stored(self, keys: Iterable[tuple], others: Iterable[tuple] = ()) -> None:
        with self._lock:
            self.made += sum(1 for _ in keys)


class Sweep:
    """A plan being executed: the runner's port (`replay.runner.Port`)."""

    def __init__(
        self,
        plan: Plan,
        store: RunStore,
        models: Models,
        limits: Limits,
        claims: Claims | Unclaimed,
        journal: Journal | None = None,
    ) -> None:
        self.plan, self.store, self.models, self.limits = plan, store, models, limits
        self.claims, self.journal = claims, journal
        self.breakers = models.reset_breakers(limits.breaker_threshold)
        self.outcomes = plan.outcomes  # other markets' outcomes, indexed once for every Context
        self._retriever_for = retriever_factory(plan.snapshot, plan.index, plan.search)
        self.bound: dict[str, ModelForecaster] = {}
        self._question: tuple[Cutoff, Question] | None = None
        self._lock = threading.Lock()

    def forecasters(self, names: Sequence[str]) -> dict[str, ModelForecaster]:
        """Each forecaster spec, made and bound to the models: the ones `run` asks (closed by
        `aclose`)."""
        self.bound = {name: hooked(registry.create(name)).bind(self.models) for name in names}
        return self.bound

    async def run(self, tasks: Sequence[Task], progress: Callable[[], None]) -> None:
        """Run `tasks` with the bound forecasters (`replay.runner.run_tasks`)."""
        await run_tasks(tasks, self.bound, self, progress)

    async def aclose(self) -> None:
        for forecaster in self.bound.values():
            await forecaster.aclose()

    # ---- the port ------------------------------------------------------------------------
    def question(self, cutoff: Cutoff) -> Question:
        """The question at `cutoff` (the last one is kept: a cutoff's tasks come together)."""
        last = self._question
        if last is None or last[0] != cutoff:
            last = self._question = (cutoff, question_at(self.plan.bundle, cutoff))
        return last[1]

    def context(self, task: Task) -> Context:
        return context_at(self.plan, task.cutoff, task.repeat, self._retriever_for)

    def record(self, task: Task, forecast: Forecast, retrievals: tuple) -> None:
        self.record_batch([(task, forecast, retrievals)], [])

    def record_batch(self, answered: list[tuple[Task, Forecast, tuple]], held: list[Task]) -> None:
        """Store the answers in one transaction (through the journal first, if any: then one by
        one, in order), then drop the claims of `held` (stored or given up)."""
        try:
            rows = []
            for task, forecast, retrievals in answered:
                c = task.cutoff
                rows.append(
                    forecast_row(
                        self.plan.run_id,
                        task.forecaster,
                        c.market_id,
                        c.t0,
                        c.label,
                        forecast,
                        retrievals,
                        task.repeat,
                        task.attempt,
                    )
                )
            if self.journal is not None:
                for (task, forecast, _), row in zip(answered, rows, strict=True):
                    self._journalled(task, forecast, row)
                return
            stored = add_many(self.store, rows, release=self.claims.owner)
            keys = [(t.key, t.attempt) for t, _, _ in answered]
            self.claims.stored(
                (k for k in keys if k in stored), (k[0] for k in keys if k not in stored)
            )
        finally:
            self.claims.release_batch(held)

    def outage(self, task: Task, exc: InfrastructureError) -> None:
        c = task.cutoff
        self.store.add_attempt(
            self.plan.run_id,
            task.forecaster,
            c.market_id,
            c.t0,
            task.repeat,
            "infrastructure",
            str(exc),
            self.claims.now,
        )
        if self.journal is not None:
            self.journal.outage(task)

    def claim(self, tasks: list[Task]) -> list[Task]:
        return self.claims.take_batch(tasks)

    def release(self, tasks: list[Task]) -> None:
        self.claims.release_batch(tasks)

    # ---- storing ---------------------------------------------------------------------------
    def _journalled(self, task: Task, forecast: Forecast, row: dict[str, object]) -> None:
        with self._lock, self._entry(task, forecast):
            stored = add_many(self.store, [row])
            self.claims.stored([k for k in [(task.key, task.attempt)] if k in stored])

    def _entry(self, task: Task, forecast: Forecast) -> AbstractContextManager[None]:
        if self.journal is None:
            return nullcontext()
        return self.journal.entry(task, self.question(task.cutoff), forecast)
