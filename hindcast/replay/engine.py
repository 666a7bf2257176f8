"""Executing a sweep: the spec's plan run through one `replay.sweep.Sweep` (forecasters bound
to the models object, limits and budgets, claims), coverage labelled, every answer stored,
the run scored (`replay.scored`).

`run_sweep` is the whole pass as a coroutine. Writing the exports is not the engine's job
(the leaderboard layer sits above it): the caller passes `export(out_dir, plan, scores,
board, prices) → {kind: path}`, called on the finished run — and on what was stored when
a circuit breaker or a budget stopped it, before the StoppedError propagates.
Concurrent and sharded sweeps of one run coordinate through claims in the run database
(`replay.claims`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hindcast import environment, llm, runs, scoring
from hindcast.errors import ConfigError, StoppedError
from hindcast.forecasters import ModelForecaster
from hindcast.replay import coverage
from hindcast.replay.claims import WAIT_SECONDS, Claims, check_shard, sharded
from hindcast.replay.plan import Plan, prepare, retriever_factory, subset_rule
from hindcast.replay.runner import Limits, Task, plan, run_tasks, spent
from hindcast.replay.scored import (
    RunScores,
    board_frame,
    board_json,
    empty_forecasters,
    load_scored,
    scoring_policies,
)
from hindcast.replay.spec import ReplaySpec
from hindcast.replay.sweep import Sweep
from hindcast.runs import RunStore, manifest
from hindcast.scoring import LeaderboardRow, leaderboard

if TYPE_CHECKING:
    import polars as pl

    from hindcast.llm import Models
    from hindcast.scoring import PriceTable


@dataclass(frozen=True)
class SweepResult:
    run_id: str
    resumed: bool
    planned: int
    executed: int
    markets: int
    board: list[LeaderboardRow]
    paths: dict[str, Path]
    empty: tuple[str, ...] = ()  # forecasters with no valid forecast at all in the run
    by_others: int = 0  # planned forecasts a concurrent sweep of the run made while this one ran

    def to_polars(self) -> pl.DataFrame:
        """The leaderboard as a polars DataFrame (one row per forecaster, every column)."""
        return board_frame(self.board)

    def to_json(self) -> dict:
        """The sweep as one JSON-ready document: run id, counts, leaderboard rows, paths."""
        return {
            "run_id": self.run_id,
            "resumed": self.resumed,
            "markets": self.markets,
            "planned": self.planned,
            "executed": self.executed,
            "made_by_concurrent_sweep": self.by_others,
            "already_stored": self.planned - self.executed - self.by_others,
            "no_valid_forecast": list(self.empty),
            "leaderboard": board_json(self.board),
            "paths": {k: str(v) for k, v in self.paths.items()},
        }


Export = Callable[
    [Path, Plan, RunScores, list, object], dict
]  # (out_dir, plan, scores, board, prices) → paths


def _no_export(out_dir: Path, p: Plan, scores: RunScores, board: list, prices: object) -> dict:
    return {}


@dataclass(frozen=True)
class Options:
    """How a sweep is executed, besides its spec (none of it is part of the run id)."""

    models: Models | None = None  # None: keys from os.environ, the cache beside the database
    prices: PriceTable | None = None  # None: the shipped table
    retry_limit: int | None = None  # with spec.retry_failed: failures retried fewer times
    prepared: Plan | None = None  # `prepare(spec)` already done
    on_plan: Callable[[int], None] = lambda n: None  # told how many forecasts will be made
    advance: Callable[[], None] = lambda: None  # after each one
    export: Export = _no_export
    shard: tuple[int, int] | None = None  # (i, n): the i-th of n processes (1-based)
    created_at: datetime | None = None  # recorded for a new run instead of `now`
    no_cache: bool = False  # with models None: answers recorded, never replayed


async def run_sweep(
    spec: ReplaySpec, *, run_store: RunStore, out_dir: Path, now: datetime, **options: Any
) -> SweepResult:
    """Forecast every missing (forecaster, market, t0, repeat) of the spec, store it, score the
    run and hand it to `export`. `run_store`: the run database; `options`: the fields of
    `Options` — `models` (closed after when None), `prices`, `prepared`; with
    `spec.retry_failed`, stored failures are asked again (`retry_limit`: only those retried
    fewer times than that); `shard` (i, n): this process's share of the plan first, then the
    rest (`replay.claims`); `created_at`: the creation instant recorded if the run is new
    (None: `now`) — a run already stored keeps its own, whichever process of a sharded sweep
    created it."""
    async with contextlib.AsyncExitStack() as opened:  # the models and the plan: closed last
        given, p = _opened(spec, run_store, Path(out_dir), _options(options), opened)
        sweep, tasks, finish = _begun(spec, run_store, now, p, (Path(out_dir), given))
        try:
            async with _heartbeat(sweep, finish.claims):
                await run_tasks(tasks, sweep.bound, sweep, given.advance)
                await _held_elsewhere(sweep, finish.claims, given.advance)
        except StoppedError:  # what was answered is stored: score and export it, then say why
            if run_store.forecasts(p.run_id):
                finish.result()
            raise
        return finish.result()


def _options(options: Mapping[str, Any]) -> Options:
    unknown = sorted(set(options) - {f.name for f in dataclasses.fields(Options)})
    if unknown:
        raise TypeError(f"run_sweep() got unexpected keyword argument(s) {', '.join(unknown)}")
    given = Options(**options)
    check_shard(given.shard)
    return given


def _opened(
    spec: ReplaySpec,
    store: RunStore,
    out_dir: Path,
    given: Options,
    opened: contextlib.AsyncExitStack,
) -> tuple[Options, Plan]:
    """The options with their models (the default ones when None: closed by `opened`) and
    prices, and the plan (prepared here when not given: closed by `opened`, first)."""
    models = given.models
    if models is None:
        models = default_models(
            store, out_dir, concurrency=spec.concurrency, no_cache=given.no_cache
        )
        opened.callback(models.close)
    opened.push_async_callback(models.aclose)
    prices = given.prices if given.prices is not None else scoring.load_prices(None)
    p = given.prepared
    if p is None:
        p = prepare(spec)
        opened.callback(p.close)  # what this sweep opened (scan threads, Ray shards)
    return dataclasses.replace(given, models=models, prices=prices), p


def default_models(
    store: RunStore,
    out_dir: Path,
    env: Mapping[str, str] | None = None,
    concurrency: int = 4,
    no_cache: bool = False,
) -> Models:
    """Keys from `env` (default `os.environ`); the response cache beside the run database
    (`responses.db`; in `out_dir` for a database that is not a SQLite file); at most
    `concurrency` requests in flight per endpoint; `no_cache`: answers recorded, never replayed."""
    return llm.Models.from_environment(
        environment.of(env),
        cache_path(store.url, out_dir),
        no_cache=no_cache,
        concurrency=concurrency,
    )


def cache_path(db_url: str, out_dir: Path) -> Path | str:
    """responses.db beside the run database when it is a SQLite file; the run database itself
    when it is PostgreSQL (every machine of a run shares the cache); else
    responses.db in `out_dir`."""
    if llm.is_postgresql(db_url):
        return db_url
    path = runs.db_file(db_url)
    return (path.parent if path is not None else Path(out_dir)) / "responses.db"


def _begun(
    spec: ReplaySpec, store: RunStore, now: datetime, p: Plan, where: tuple[Path, Options]
) -> tuple[Sweep, list[Task], _Finish]:
    """The run recorded (once: a stored run keeps its own), its sweep with the forecasters bound,
    the tasks this process makes now (after every input is checked), the coverage labelled."""
    out_dir, given = where
    claims = Claims(store, p.run_id, now)
    assert given.models is not None  # _opened sets them
    sweep = Sweep(p, store, given.models, _limits(spec, given.prices), claims)
    forecasters = sweep.forecasters(spec.forecasters)
    _check_priced(spec, forecasters, given.prices)  # before anything is written
    created = store.ensure_run(
        p.run_id,
        p.identity,
        manifest.build(
            p.identity,
            p.store_root,
            {name: f.provenance() for name, f in forecasters.items()},
            spec.archive,
            scoring_policies(),
        ),
        given.created_at or now,
    )
    sweep.limits = _spent(sweep.limits, store, p.run_id)
    all_tasks, tasks = _tasks(spec, store, p, given)
    given.on_plan(len(tasks))
    _label_coverage(p, store)
    return sweep, tasks, _Finish(p, store, len(all_tasks), claims, created, where)


def _tasks(
    spec: ReplaySpec, store: RunStore, p: Plan, given: Options
) -> tuple[list[Task], list[Task]]:
    """The whole plan, and what this process makes now in its order (stored keys left out)."""
    allowed = subset_rule(spec, p.markets)
    all_tasks = plan(spec.forecasters, p.cutoffs, set(), spec.repeats, allowed)
    retry = store.retry_attempts(p.run_id, given.retry_limit) if spec.retry_failed else {}
    done = {k for k in store.done_keys(p.run_id) if k not in retry}
    tasks = sharded(
        plan(spec.forecasters, p.cutoffs, done, spec.repeats, allowed, retry),
        all_tasks,
        given.shard,
    )
    return all_tasks, tasks


@dataclass(frozen=True)
class _Finish:
    """The end of a sweep: the run scored, exported, and counted."""

    p: Plan
    store: RunStore
    planned: int
    claims: Claims
    created: bool
    where: tuple[Path, Options]  # the export folder, the options

    def result(self) -> SweepResult:
        p, (out_dir, given) = self.p, self.where
        scored = load_scored(self.store, p.run_id, p.bundle)
        board = leaderboard(scored.rows, prices=given.prices)
        paths = given.export(out_dir, p, scored, board, given.prices)
        return SweepResult(
            p.run_id,
            not self.created,
            self.planned,
            self.claims.made,
            len(p.markets),
            board,
            paths,
            empty_forecasters(scored.rows),
            len(self.claims.left),
        )


def _limits(spec: ReplaySpec, prices: PriceTable | None) -> Limits:
    """The run's limits (its budgets before what the run has spent already: `_spent`)."""
    return Limits(
        spec.max_failures,
        spec.concurrency,
        spec.breaker_threshold,
        spec.max_cost,
        spec.max_tokens,
        prices,
    )


def _check_priced(
    spec: ReplaySpec, forecasters: dict[str, ModelForecaster], prices: PriceTable | None
) -> None:
    """With `max_cost`, every model must have a price (before any call)."""
    if spec.max_cost is None:
        return
    unpriced = sorted(
        {
            n
            for f in forecasters.values()
            if (n := f.model_name()) and (prices is None or prices.cost(n, 0, 0) is None)
        }
    )
    if unpriced:
        raise ConfigError(
            f"--max-cost needs a price for every model; none for {', '.join(unpriced)} "
            "(add it to a price table given with --prices)"
        )


def _spent(limits: Limits, store: RunStore, rid: str) -> Limits:
    """Budgets are per run: start from what the run's stored forecasts (every attempt) spent."""
    if limits.max_cost is None and limits.max_tokens is None:
        return limits
    totals = [
        spent(s.forecast.usage, limits.prices) for s in store.forecasts(rid, all_attempts=True)
    ]
    return dataclasses.replace(
        limits, spent_tokens=sum(t for t, _ in totals), spent_cost=sum(c for _, c in totals)
    )


def _label_coverage(p: Plan, store: RunStore) -> None:
    """Archive-only coverage stratum of every (market, t0) not labelled yet (needs an archive)."""
    if p.snapshot is None:
        return
    done = store.coverage(p.run_id)
    markets = {m.id: m for m in p.bundle.markets}
    retriever_for = retriever_factory(p.snapshot, p.index, p.search)
    for c in p.cutoffs:
        if (c.market_id, c.t0) not in done:
            n = coverage.relevant_count(retriever_for(c.t0), markets[c.market_id].question)
            store.add_coverage(p.run_id, c.market_id, c.t0, n, coverage.stratum(n))


@contextlib.asynccontextmanager
async def _heartbeat(sweep: Sweep, claims: Claims) -> AsyncIterator[None]:
    """The claims kept alive while the sweep runs; after it, the claims and forecasters closed."""
    beat = asyncio.ensure_future(claims.heartbeat())
    try:
        yield
    finally:
        beat.cancel()
        claims.close()  # in this thread: an await here may be cancelled again
        with contextlib.suppress(asyncio.CancelledError):
            await beat
        await sweep.aclose()


async def _held_elsewhere(sweep: Sweep, claims: Claims, advance: Callable[[], None]) -> None:
    """The tasks another live sweep held, until none is left (stored by it or taken over), each
    round with the budgets re-read from what the run has stored by then."""
    while pending := claims.pending():
        await asyncio.sleep(WAIT_SECONDS)
        sweep.limits = await asyncio.to_thread(_spent, sweep.limits, sweep.store, sweep.plan.run_id)
        await run_tasks(pending, sweep.bound, sweep, advance)
