"""The runner: forecasters × cutoffs × repeats, bounded concurrency, each
answer stored as it arrives, through one port (`Port`: a `replay.sweep.Sweep`).

Cheap forecasters (`ModelForecaster.cheap`: the baselines) are computed and stored BATCH at a
time — one claim transaction, one store transaction per batch — alongside the model forecasts,
never queued behind them: the model forecasts wait on the concurrency gate, the cheap ones
do not, and they claim and store on threads of their own (not the shared worker threads a
local model's start holds), so in the default run the baselines are stored (and shown
progressing) while the first model call is still under way.

A forecaster that raises, or returns something that is not a Forecast, is recorded as a
failure with the reason; it never stops the sweep and is never replaced by a number —
unless failures in this invocation pass `max_failures`, which stops scheduling new
forecasts (those stored are kept; re-running resumes).

An outage (`InfrastructureError`: the model could not be reached) is not a forecast: it
goes to `on_outage` (the engine logs it as an attempt) and counts against its endpoint's
circuit breaker; once a breaker is open no new call goes to that endpoint (calls in flight
finish, other forecasters go on) and the run ends with `StoppedError` naming the endpoint.
`Limits.max_cost` (dollars, by the price table) and `max_tokens` are budgets of the whole
run: they count the tokens of every model call the run made (its stored forecasts, every
attempt) and makes now, never replays from the cache. Once reached no new forecast
starts, those in flight finish (the overshoot is at most the forecasts in flight), and the
run ends with `StoppedError`; re-running with a higher budget resumes where it stopped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from hindcast.errors import (
    CircuitOpen,
    HindcastError,
    InfrastructureError,
    LeakageError,
    StoppedError,
)
from hindcast.forecasters import Context, ModelForecaster
from hindcast.llm import Breakers
from hindcast.records import Forecast, Question, Retrieval, Usage
from hindcast.replay.cutoffs import Cutoff
from hindcast.timeutil import iso

if TYPE_CHECKING:
    from hindcast.scoring import PriceTable

BATCH = 500  # cheap forecasts claimed, computed and stored together


@dataclass(frozen=True, slots=True)
class Task:
    forecaster: str
    cutoff: Cutoff
    repeat: int = 0
    attempt: int = 0  # 0, or the number of the retry of a stored failure (--retry-failed)

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.forecaster, self.cutoff.market_id, iso(self.cutoff.t0), self.repeat)


def plan(
    forecasters: Sequence[str],
    cutoffs: Sequence[Cutoff],
    done: set,
    repeats: int = 1,
    allowed: Callable[[str, str], bool] = lambda forecaster, market: True,
    retry: Mapping[tuple, int] | None = None,
) -> list[Task]:
    """Every (forecaster, cutoff, repeat) not stored yet, in a stable order; a key in `retry`
    (a stored failure asked again) is planned as that attempt number."""
    retry = retry or {}
    tasks = [
        Task(name, c, r)
        for c in cutoffs
        for name in forecasters
        for r in range(repeats)
        if allowed(name, c.market_id)
    ]
    return [
        Task(t.forecaster, t.cutoff, t.repeat, retry.get(t.key, 0))
        for t in tasks
        if t.key not in done
    ]


class FailureBudget:
    def __init__(self, limit: int | None) -> None:
        self.limit, self.failures = limit, 0

    def record(self, forecast: Forecast) -> None:
        self.failures += not forecast.ok

    @property
    def exhausted(self) -> bool:
        return self.limit is not None and self.failures > self.limit


@dataclass(frozen=True)
class Limits:
    """What stops a run before its plan is done. `prices` is a scoring.costs.PriceTable."""

    max_failures: int | None = None
    concurrency: int = 8  # model forecasts in flight at once
    breaker_threshold: int = 5  # consecutive outages of one endpoint that stop calls to it
    max_cost: float | None = None
    max_tokens: int | None = None
    prices: PriceTable | None = None
    spent_tokens: int = 0  # by the run's stored forecasts, before this invocation
    spent_cost: float = 0.0


class Spend:
    """Tokens and dollars of the run's model calls (cache replays cost nothing): what the run's
    stored forecasts already spent (`Limits.spent_*`) plus the calls made now."""

    def __init__(self, limits: Limits) -> None:
        self.limits, self.tokens, self.cost = (
            limits,
            int(limits.spent_tokens),
            float(limits.spent_cost),
        )

    def record(self, usage: Usage) -> None:
        tokens, cost = spent(usage, self.limits.prices)
        self.tokens, self.cost = self.tokens + tokens, self.cost + cost

    def reached(self) -> str | None:
        cap = self.limits
        if cap.max_cost is not None and self.cost >= cap.max_cost:
            return (
                f"cost budget reached: ${self.cost:.6f} of --max-cost ${cap.max_cost:g} spent on "
                "the run's model calls"
            )
        if cap.max_tokens is not None and self.tokens >= cap.max_tokens:
            return (
                f"token budget reached: {self.tokens} of --max-tokens {cap.max_tokens} used by "
                "the run's model calls"
            )
        return None


def spent(usage: Usage, prices: PriceTable | None) -> tuple[int, float]:
    """(tokens, dollars) of a forecast's calls not replayed from the cache (unpriced: $0 here;
    a budgeted run refuses unpriced models before it starts)."""
    prompt, completion = usage.fresh_prompt_tokens or 0, usage.fresh_completion_tokens or 0
    cost = (
        prices.cost(usage.model_name, prompt, completion)
        if prices is not None and usage.model_name
        else 0
    )
    return prompt + completion, float(cost or 0.0)


class Port(Protocol):
    """What the runner asks of a sweep (`replay.sweep.Sweep`): the question and the t0-bound
    Context of a task, where answers and outages go, claims, limits and breakers."""

    limits: Limits
    breakers: Breakers

    def question(self, cutoff: Cutoff) -> Question: ...

    def context(self, task: Task) -> Context: ...

    def record(self, task: Task, forecast: Forecast, retrievals: tuple[Retrieval, ...]) -> None: ...

    def record_batch(
        self, answered: list[tuple[Task, Forecast, tuple[Retrieval, ...]]], held: list[Task]
    ) -> None: ...

    def outage(self, task: Task, exc: InfrastructureError) -> None: ...

    def claim(self, tasks: list[Task]) -> list[Task]: ...

    def release(self, tasks: list[Task]) -> None: ...


async def run_tasks(
    tasks: Sequence[Task],
    forecasters: Mapping[str, ModelForecaster],
    port: Port,
    progress: Callable[[], None] = lambda: None,
) -> None:
    """Run `tasks`: the cheap forecasters' BATCH at a time, the others with at most
    `port.limits.concurrency` in flight, each answer stored through the port as it arrives (with
    the context's retrieval log) and each outage recorded; `progress` after each stored one.
    A task is claimed (`port.claim`, in a worker thread, right before it would start) and skipped
    when not taken (another sweep of the run is asking it, or it is stored already); it is
    released once stored or given up. Raises why the plan was not completed, if it was not."""
    run = _Run(forecasters, port, progress)
    cheap = [t for t in tasks if forecasters[t.forecaster].cheap]
    slow = [t for t in tasks if not forecasters[t.forecaster].cheap]
    try:
        await asyncio.gather(run.batches(cheap), *(run.one(t) for t in slow))
    finally:
        run.cheap_threads.shutdown(wait=False)
    _stop_reason(run.budget, run.spend, port.breakers, run.missed, port.limits.max_failures)


class _Run:
    """One `run_tasks` call: its failure budget, spend, outages and what it did not make."""

    def __init__(
        self, forecasters: Mapping[str, ModelForecaster], port: Port, progress: Callable[[], None]
    ) -> None:
        self.forecasters, self.port, self.progress = forecasters, port, progress
        self.gate = asyncio.Semaphore(port.limits.concurrency)
        self.budget, self.spend = FailureBudget(port.limits.max_failures), Spend(port.limits)
        self.missed = {"budget": 0, "outage": 0, "breaker": 0}
        self.reached: dict[str, set[str]] = {}  # forecaster → endpoints it had an outage on
        # the cheap batches' own threads: never queued behind model calls holding the shared
        # worker threads (a local model's start blocks one per forecast in flight for minutes)
        self.cheap_threads = ThreadPoolExecutor(2, thread_name_prefix="hindcast-cheap")

    def on_cheap_thread(self, call: Callable, *args: object) -> asyncio.Future:
        return asyncio.get_running_loop().run_in_executor(self.cheap_threads, call, *args)

    def blocked(self, task: Task) -> bool:
        """Not to be started: a budget is spent, or its endpoint's breaker is open."""
        if self.budget.exhausted or self.spend.reached():
            self.missed["budget"] += 1
            return True
        breakers = self.port.breakers
        if any(breakers.reason(e) is not None for e in self.reached.get(task.forecaster, ())):
            self.missed["breaker"] += 1  # its endpoint's breaker is open: not scheduled
            return True
        return False

    async def one(self, task: Task) -> None:
        async with self.gate:
            if self.blocked(task) or not await asyncio.to_thread(self.port.claim, [task]):
                return
            try:
                async with _Asked(self, task) as asked:
                    asked.answered(await asked.forecaster.forecast(asked.question, asked.context))
                if asked.forecast is not None:
                    await asyncio.to_thread(
                        self.port.record, task, asked.forecast, asked.context.retrievals
                    )
                    self.accounted(asked.forecast)
            finally:
                await asyncio.to_thread(self.port.release, [task])

    async def batches(self, tasks: list[Task]) -> None:
        """Claim, compute and store BATCH tasks at a time; a batch is stored (in a worker thread)
        while the next one is claimed and computed."""
        storing: asyncio.Future | None = None
        try:
            for start in range(0, len(tasks), BATCH):
                mine = await self.claimed(tasks[start : start + BATCH])
                answered: list[tuple[Task, Forecast, tuple]] = []
                try:
                    for task in mine:
                        if answered and self.blocked(task):  # the failure budget ran out just now
                            continue
                        async with _Asked(self, task) as asked:
                            asked.answered(
                                await asked.forecaster.forecast(asked.question, asked.context)
                            )
                        if asked.forecast is not None:
                            answered.append((task, asked.forecast, asked.context.retrievals))
                            _account(asked.forecast, self.budget, self.spend, self.port.breakers)
                except BaseException:
                    await self.on_cheap_thread(self.port.release, mine)
                    raise
                if storing is not None:
                    await storing
                storing = asyncio.ensure_future(self.stored(answered, mine))
        finally:
            if storing is not None:
                await storing

    async def claimed(self, tasks: list[Task]) -> list[Task]:
        """Those of `tasks` this sweep holds now (claimed on a cheap thread), none blocked."""
        wanted = [t for t in tasks if not self.blocked(t)]
        return await self.on_cheap_thread(self.port.claim, wanted) if wanted else []

    async def stored(self, answered: list[tuple[Task, Forecast, tuple]], mine: list[Task]) -> None:
        """Store a batch in one transaction, then drop its claims (one worker thread)."""
        await self.on_cheap_thread(self.port.record_batch, answered, mine)
        for _ in answered:
            self.progress()

    async def outage(self, task: Task, exc: InfrastructureError) -> None:
        """An endpoint not reached: counted against its breaker, recorded as an attempt."""
        self.missed["outage"] += 1
        self.reached.setdefault(task.forecaster, set()).add(exc.endpoint)
        self.port.breakers.failure(exc.endpoint, str(exc))
        await asyncio.to_thread(self.port.outage, task, exc)

    def accounted(self, forecast: Forecast) -> None:
        _account(forecast, self.budget, self.spend, self.port.breakers)
        self.progress()


class _Asked:
    """One task asked of its forecaster, `async with` around the call (the runner calls the
    forecaster itself): `forecast` is what was answered — a failure with the reason when the
    forecaster raised or returned something that is not a Forecast (errors are data) — or None
    when no forecast was made (an outage, recorded by `_Run.outage`; an open breaker). A
    LeakageError (a harness defect) and what is not an Exception (a cancellation) go through."""

    def __init__(self, run: _Run, task: Task) -> None:
        self.run, self.task = run, task
        self.forecast: Forecast | None = None
        self.context = run.port.context(task)
        self.forecaster = _for_attempt(run.forecasters[task.forecaster], task.attempt)
        self.question = run.port.question(task.cutoff)

    def answered(self, result: object) -> None:
        self.forecast = (
            result
            if isinstance(result, Forecast)
            else Forecast.failure(f"forecaster returned {type(result).__name__}, not a Forecast")
        )

    async def __aenter__(self) -> _Asked:
        return self

    async def __aexit__(self, kind: type | None, exc: BaseException | None, tb: object) -> bool:
        if isinstance(exc, CircuitOpen):
            self.run.missed["breaker"] += 1  # no call was made: not an attempt
            return True
        if isinstance(exc, InfrastructureError):
            await self.run.outage(self.task, exc)
            return True
        if exc is None or isinstance(exc, LeakageError) or not isinstance(exc, Exception):
            return False
        self.forecast = Forecast.failure(f"{type(exc).__name__}: {exc}")
        return True


def _for_attempt(forecaster: ModelForecaster, attempt: int) -> ModelForecaster:
    """A retried failure is asked anew: forecasters that cache (`for_attempt`)
    get the attempt number."""
    return forecaster.for_attempt(attempt) if attempt else forecaster


def _account(forecast: Forecast, budget: FailureBudget, spend: Spend, breakers: Breakers) -> None:
    budget.record(forecast)
    usage = forecast.usage
    spend.record(usage)
    if usage.endpoint is not None and (usage.requests or usage.cache_hits):
        breakers.success(usage.endpoint)  # the endpoint answered


def _stop_reason(
    budget: FailureBudget, spend: Spend, breakers: Breakers, missed: dict, max_failures: int | None
) -> None:
    """Raise why the plan was not completed, if it was not (nothing when every task ran)."""
    resume = "what was stored is kept — re-run the same sweep to resume"
    if budget.exhausted:
        raise HindcastError(
            f"stopped after {budget.failures} failed forecasts (max failures "
            f"{max_failures}); {resume}"
        )
    if missed["budget"] and (reason := spend.reached()) is not None:
        raise StoppedError(
            f"stopped: {reason}; {missed['budget']} forecast(s) not started; {resume} "
            "(with a higher budget)"
        )
    opened = breakers.opened()
    if opened:
        detail = "; ".join(
            f"{endpoint or 'unnamed endpoint'}: {why}" for endpoint, why in sorted(opened.items())
        )
        raise StoppedError(
            f"stopped: circuit breaker open after {breakers.threshold} consecutive infrastructure "
            f"failure(s), {missed['outage'] + missed['breaker']} forecast(s) not made — {detail}; "
            f"{resume}"
        )
    if missed["outage"]:
        raise StoppedError(
            f"stopped: {missed['outage']} forecast(s) not made because a model could not be "
            f"reached (see the run's attempts: hindcast runs show); {resume}"
        )
