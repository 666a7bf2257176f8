"""Executing a sweep: forecasters bound to the models object, limits and budgets, the tasks of
a Plan run through `replay.runner`, coverage labelled, every answer stored, the run scored.

`run_sweep` is the whole pass as a coroutine. Writing the exports is not the engine's job
(the leaderboard layer sits above it): the caller passes `export(out_dir, plan, scores,
board, prices) → {kind: path}`, called on the finished run — and on what was stored when
a circuit breaker or a budget stopped it, before the StoppedError propagates.
A stored run is scored again from its forecasts alone by `load_scored` (no model called).

Concurrent sweeps of one run (two terminals, or many machines on one PostgreSQL database)
never ask a forecast twice: each process claims a (forecaster, market, t0, repeat, attempt)
in the run database right before asking it (`RunStore.claim`, a lease of LEASE_SECONDS
renewed while it runs) and releases it once the forecast is stored or given up. A forecast
another live process holds is left to it; when its own work is done, a sweep waits for those
to be stored (taking over any whose claim expired, or whose owner on this machine is no longer
running: a kill -9 is resumed at once), so every sweep ends with the whole run stored, and
each reports what it made itself (`SweepResult.executed`) and what another sweep made while
it ran (`SweepResult.by_others`).

Sharding (`shard=(i, n)`, `hindcast sweep --shard I/N`) only orders that work: the i-th of n
processes asks its share first (every n-th planned forecast, from the i-th), then helps with
the rest from the far end (last planned first), so n processes meet rarely on one claim and
any share a dead process left is finished by the others. Nothing but the run database
coordinates them; what is stored, and so every export, does not depend on n or on who made what.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from hindcast.compat import renamed
from hindcast.errors import ConfigError, InfrastructureError, StoppedError
from hindcast.forecasters import Context, ModelForecaster, hooked, registry
from hindcast.markets import MarketBundle, open_version
from hindcast.markets import venues as venue_registry
from hindcast.records import RunManifest
from hindcast.replay import coverage
from hindcast.replay.plan import (
    Plan,
    context_at,
    prepare,
    question_at,
    retriever_factory,
    subset_rule,
)
from hindcast.replay.runner import Limits, Task, plan, run_tasks, spent
from hindcast.replay.spec import ReplaySpec
from hindcast.runs import HELD, TAKEN, RunStore, manifest
from hindcast.scoring import (
    POLICIES,
    LeaderboardRow,
    ScoredRow,
    leaderboard,
    regimes,
    score_rows,
)


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

    def to_polars(self):
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


def board_json(board) -> list[dict]:
    """Leaderboard rows as JSON-ready dicts (every column; a non-finite number is null)."""
    import math

    def plain(value):
        return None if isinstance(value, float) and not math.isfinite(value) else value

    return [{k: plain(v) for k, v in dataclasses.asdict(row).items()} for row in board]


def board_frame(board):
    """Leaderboard rows as a polars DataFrame (polars imported only here)."""
    import polars as pl

    columns = [f.name for f in dataclasses.fields(LeaderboardRow)]
    return (
        pl.DataFrame(
            [dataclasses.asdict(r) for r in board], schema=columns, infer_schema_length=None
        )
        if board
        else pl.DataFrame(schema=columns)
    )


def scoring_policies() -> dict:
    """The scoring policies in force: what a run scored now is scored under (and a new run's
    manifest records)."""
    return {**POLICIES, **coverage.POLICY}


@dataclass(frozen=True)
class RunScores:
    """A stored run, scored: its manifest (as recorded when the run was created), one ScoredRow
    per stored forecast, and the scoring policies that scored them (a run re-scored by a later
    release may have been created under other ones)."""

    run_id: str
    manifest: RunManifest
    rows: list[ScoredRow]
    policies: dict = dataclasses.field(default_factory=scoring_policies)

    def __post_init__(self) -> None:
        if not isinstance(self.manifest, RunManifest):  # a stored manifest's mapping
            object.__setattr__(self, "manifest", RunManifest.of(self.manifest))

    def to_polars(self):
        """One row per stored forecast (newest attempt): the scored row's columns, its usage
        figures (tokens, requests, cache hits, retries, latency, model name) in place of
        `usage`; polars imported only here."""
        import polars as pl

        from hindcast.scoring import figures

        fields = [f.name for f in dataclasses.fields(ScoredRow) if f.name != "usage"]
        rows = [{**{k: getattr(r, k) for k in fields}, **figures(r.usage)} for r in self.rows]
        if not rows:
            return pl.DataFrame(schema=fields + list(figures({})))
        return pl.DataFrame(rows, infer_schema_length=None)


Export = Callable[
    [Path, Plan, RunScores, list, object], dict
]  # (out_dir, plan, scores, board, prices) → paths


def _no_export(out_dir: Path, p: Plan, scores: RunScores, board: list, prices) -> dict:
    return {}


@dataclass(frozen=True)
class Hooks:
    out_dir: Path  # where `export` writes
    on_plan: Callable[[int], None] = lambda n: None  # told how many forecasts will be made
    advance: Callable[[], None] = lambda: None  # after each one
    export: Export = _no_export
    shard: tuple[int, int] | None = (
        None  # (i, n): this process is the i-th of n sweeping the run (1-based)
    )
    created_at: datetime | None = None  # recorded for a new run instead of `now`


@renamed(store="run_store")
async def run_sweep(
    spec: ReplaySpec,
    *,
    run_store: RunStore,
    out_dir: Path,
    now: datetime,
    on_plan: Callable[[int], None] = lambda n: None,
    advance: Callable[[], None] = lambda: None,
    models=None,
    prices=None,
    retry_limit: int | None = None,
    prepared: Plan | None = None,
    export: Export = _no_export,
    shard: tuple[int, int] | None = None,
    created_at: datetime | None = None,
) -> SweepResult:
    """Forecast every missing (forecaster, market, t0, repeat) of the spec, store it, score the
    run and hand it to `export`. `run_store`: the run database (the keyword `store=` is
    deprecated); `models`: a Models (None: keys from os.environ, cache beside
    the run database, closed after); `prices`: a scoring.costs.PriceTable (None: the shipped
    table); `prepared`: `prepare(spec)` already done. With `spec.retry_failed`, stored failures
    are asked again (`retry_limit`: only those retried fewer times than that). `shard` (i, n):
    this process's share of the plan first, then the rest (see the module notes). `created_at`:
    the creation instant recorded if the run is new (None: `now`); a run already stored keeps its
    own, whichever process of a sharded sweep created it."""
    from hindcast.scoring import load_prices

    owned = models is None
    models = (
        models
        if models is not None
        else default_models(run_store, out_dir, concurrency=spec.concurrency)
    )
    prices = prices if prices is not None else load_prices(None)
    try:
        hooks = Hooks(Path(out_dir), on_plan, advance, export, check_shard(shard), created_at)
        return await _sweep(spec, run_store, now, hooks, models, prices, retry_limit, prepared)
    finally:
        await models.aclose()
        if owned:
            models.close()


def default_models(
    store: RunStore, out_dir: Path, env=None, concurrency: int = 4, no_cache: bool = False
):
    """Keys from `env` (default `os.environ`); the response cache beside the run database
    (`responses.db`; in `out_dir` for a database that is not a SQLite file); at most
    `concurrency` requests in flight per endpoint; `no_cache`: answers recorded, never replayed."""
    import os

    from hindcast.llm import Models

    return Models.from_environment(
        os.environ if env is None else env,
        cache_path(store.url, out_dir),
        no_cache=no_cache,
        concurrency=concurrency,
    )


def cache_path(db_url: str, out_dir: Path) -> Path | str:
    """responses.db beside the run database when it is a SQLite file; the run database itself
    when it is PostgreSQL (every machine of a run shares the cache); else
    responses.db in `out_dir`."""
    from hindcast.llm import is_postgresql
    from hindcast.runs import db_file

    if is_postgresql(db_url):
        return db_url
    path = db_file(db_url)
    return (path.parent if path is not None else Path(out_dir)) / "responses.db"


async def _sweep(
    spec, store, now, hooks: Hooks, models, prices, retry_limit, prepared
) -> SweepResult:
    forecasters = {name: hooked(registry.create(name)).bind(models) for name in spec.forecasters}
    limits = _limits(spec, forecasters, prices)
    p = prepared if prepared is not None else prepare(spec)
    try:
        return await _run_plan(
            spec, store, now, hooks, models, forecasters, limits, prices, retry_limit, p
        )
    finally:
        if prepared is None:  # what this sweep opened (scan threads, Ray shards)
            p.close()


async def _run_plan(
    spec, store, now, hooks: Hooks, models, forecasters, limits, prices, retry_limit, p: Plan
) -> SweepResult:
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
        hooks.created_at or now,
    )
    base, limits = limits, _spent(limits, store, p.run_id)
    allowed = subset_rule(spec, p.markets)
    all_tasks = plan(spec.forecasters, p.cutoffs, set(), spec.repeats, allowed)
    retry = store.retry_attempts(p.run_id, retry_limit) if spec.retry_failed else {}
    done = {k for k in store.done_keys(p.run_id) if k not in retry}
    tasks = sharded(
        plan(spec.forecasters, p.cutoffs, done, spec.repeats, allowed, retry),
        all_tasks,
        hooks.shard,
    )
    hooks.on_plan(len(tasks))
    _label_coverage(p, store)
    claims = Claims(store, p.run_id, now)
    try:
        await _execute(
            tasks,
            forecasters,
            spec,
            p,
            store,
            hooks.advance,
            limits,
            models.reset_breakers(spec.breaker_threshold),
            now,
            claims,
            lambda: _spent(base, store, p.run_id),
        )
    except (
        StoppedError
    ):  # what was answered is stored: score and export it, then say why it stopped
        if store.forecasts(p.run_id):
            _finish(p, store, len(all_tasks), claims, created, prices, hooks)
        raise
    return _finish(p, store, len(all_tasks), claims, created, prices, hooks)


def _finish(
    p: Plan, store: RunStore, planned: int, claims: Claims, created: bool, prices, hooks: Hooks
) -> SweepResult:
    scored = load_scored(store, p.run_id, p.bundle)
    board = leaderboard(scored.rows, prices=prices)
    paths = hooks.export(hooks.out_dir, p, scored, board, prices)
    return SweepResult(
        p.run_id,
        not created,
        planned,
        claims.made,
        len(p.markets),
        board,
        paths,
        _empty(scored.rows),
        len(claims.left),
    )


def check_shard(shard: tuple[int, int] | None) -> tuple[int, int] | None:
    if shard is not None and not (
        isinstance(shard[0], int) and isinstance(shard[1], int) and 1 <= shard[0] <= shard[1]
    ):
        raise ConfigError(f"shard {shard[0]}/{shard[1]}: expected I/N with 1 ≤ I ≤ N (e.g. 2/4)")
    return shard


def sharded(tasks: list[Task], all_tasks: list[Task], shard: tuple[int, int] | None) -> list[Task]:
    """`tasks` in shard `(i, n)`'s order: its share first — the planned forecasts at positions
    i-1, i-1+n, … of the whole plan `all_tasks` (fixed however much is stored already) — then
    every other one, last planned first. No shard: as planned."""
    if shard is None:
        return tasks
    i, n = shard
    position = {t.key: k for k, t in enumerate(all_tasks)}
    mine = [t for t in tasks if position.get(t.key, -1) % n == i - 1]
    rest = [t for t in tasks if position.get(t.key, -1) % n != i - 1]
    return mine + rest[::-1]


LEASE_SECONDS = 60.0  # a claim unrenewed this long is taken by another process
WAIT_SECONDS = 0.5  # between looks at forecasts another live sweep is asking


class Claims:
    """This sweep process's claims in the run database (`RunStore.claim`): one owner id (host,
    process id, a random token), a lease clock running from the sweep's `now`, what it made,
    and the forecasts it left to another live sweep of the run."""

    def __init__(self, store: RunStore, run_id: str, now: datetime, lease: float = LEASE_SECONDS):
        self.store, self.run_id, self.lease, self.owner = store, run_id, lease, owner_id()
        self._base, self._start = now.timestamp(), time.monotonic()
        self._lock = threading.Lock()
        self.made, self.closed = 0, False
        self.held: dict[tuple, Task] = {}  # key → a task another live process holds now
        self.left: set[tuple] = set()  # keys another sweep made (or holds) while this one ran

    def clock(self) -> float:
        return self._base + (time.monotonic() - self._start)

    def take(self, task: Task) -> bool:
        found = self.store.claim(
            self.run_id, task.key, task.attempt, self.owner, self.clock(), self.lease, owner_gone
        )
        if found == TAKEN and self.closed:  # a claim thread that ran on past the sweep's stop:
            self.release(task)  # dropped at once, not held for a whole lease (see `close`)
            return False
        with self._lock:
            if found == HELD:
                self.held[task.key] = task
            if found == TAKEN:
                self.left.discard(task.key)
            else:  # held, or stored since this sweep planned it: another sweep's forecast
                self.left.add(task.key)
        return found == TAKEN

    def release(self, task: Task) -> None:
        self.store.release(self.run_id, task.key, task.attempt, self.owner)

    def close(self) -> None:
        """The sweep is leaving (finished, stopped or cancelled): every claim it still holds is
        dropped, and a claim taken after this drops itself (`take`) — so the next sweep, even in
        this live process, takes them at once instead of waiting out the lease. (A claim
        committed before `closed` is set is deleted here; one after it sees `closed`.)"""
        self.closed = True
        self.store.release_all(self.run_id, self.owner)

    def stored(self) -> None:
        with self._lock:
            self.made += 1

    def pending(self) -> list[Task]:
        """The forecasts last seen held by another process, to look at again."""
        with self._lock:
            tasks, self.held = list(self.held.values()), {}
        return tasks

    async def heartbeat(self) -> None:
        """Renew this process's claims every third of the lease, until cancelled."""
        while True:
            await asyncio.sleep(self.lease / 3)
            await asyncio.to_thread(
                self.store.renew, self.run_id, self.owner, self.clock() + self.lease
            )


def owner_id() -> str:
    return f"{socket.gethostname()}/{os.getpid()}/{secrets.token_hex(6)}"


def owner_gone(owner: str) -> bool:
    """Whether a claim's owner is a process of this machine that no longer runs (a killed sweep:
    its claims are taken at once); another machine's claims are taken only once they expire."""
    host, _, rest = owner.partition("/")
    pid = rest.partition("/")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # it exists (another user's): alive
        return False
    return False


def _empty(rows) -> tuple[str, ...]:
    """Forecasters with stored rows of which none is a valid probability."""
    valid: dict[str, bool] = {}
    for row in rows:
        valid[row.forecaster] = valid.get(row.forecaster, False) or row.probability is not None
    return tuple(sorted(name for name, ok in valid.items() if not ok))


def _limits(spec: ReplaySpec, forecasters: dict[str, ModelForecaster], prices) -> Limits:
    """The run's limits; with `max_cost`, every model must have a price (before any call)."""
    if spec.max_cost is not None:
        unpriced = sorted(
            {
                n
                for f in forecasters.values()
                if (n := f.model_name()) and prices.cost(n, 0, 0) is None
            }
        )
        if unpriced:
            raise ConfigError(
                f"--max-cost needs a price for every model; none for {', '.join(unpriced)} "
                "(add it to a price table given with --prices)"
            )
    return Limits(spec.max_failures, spec.max_cost, spec.max_tokens, prices)


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


async def _execute(
    tasks: list[Task],
    forecasters: dict,
    spec: ReplaySpec,
    p: Plan,
    store: RunStore,
    advance,
    limits: Limits,
    breakers,
    now: datetime,
    claims: Claims,
    relimit: Callable[[], Limits],
) -> None:
    """Run the tasks, then (until none is left) those another live sweep held, each such round
    with the budgets re-read from what the run has stored by then (`relimit`)."""
    retriever_for = retriever_factory(p.snapshot, p.index, p.search)

    def context_for(task: Task) -> Context:
        return context_at(p, task.cutoff, task.repeat, retriever_for)

    def sink(task: Task, forecast, retrievals) -> None:
        c = task.cutoff
        if store.add(
            p.run_id,
            task.forecaster,
            c.market_id,
            c.t0,
            c.label,
            forecast,
            retrievals,
            task.repeat,
            task.attempt,
        ):
            claims.stored()

    def on_outage(task: Task, exc: InfrastructureError) -> None:
        c = task.cutoff
        store.add_attempt(
            p.run_id,
            task.forecaster,
            c.market_id,
            c.t0,
            task.repeat,
            "infrastructure",
            str(exc),
            now,
        )

    async def run(batch: list[Task], limits: Limits) -> None:
        await run_tasks(
            batch,
            forecasters,
            lambda c: question_at(p.bundle, c),
            context_for,
            sink,
            spec.concurrency,
            advance,
            limits=limits,
            breakers=breakers,
            on_outage=on_outage,
            claim=claims.take,
            release=claims.release,
        )

    heartbeat = asyncio.ensure_future(claims.heartbeat())
    try:
        await run(tasks, limits)
        while (
            pending := claims.pending()
        ):  # held by another live sweep: wait until stored or taken over
            await asyncio.sleep(WAIT_SECONDS)
            await run(pending, await asyncio.to_thread(relimit))
    finally:
        heartbeat.cancel()
        claims.close()  # in this thread: an await here may be cancelled again
        with contextlib.suppress(asyncio.CancelledError):
            await heartbeat
        await _close(forecasters)


async def _close(forecasters: dict[str, ModelForecaster]) -> None:
    for forecaster in forecasters.values():
        await forecaster.aclose()


# ---- scoring a stored run (no model is called) -----------------------------------------------
def recorded_bundle(store: RunStore, rid: str) -> MarketBundle:
    """The market store version a stored run recorded (from its manifest)."""
    return _bundle_of(RunManifest.of(json.loads(store.run(rid).manifest_json)))


def _bundle_of(run_manifest: RunManifest) -> MarketBundle:
    recorded = run_manifest.market_store
    return open_version(Path(str(recorded["root"])), str(recorded["version"])).bundle


def recorded_snapshots(scored: Sequence, archive: Path | None) -> list:
    """The archive snapshots the runs recorded, opened (and verified) from `archive`, else from
    the folder each run recorded; a recorded folder that no longer holds the snapshot is
    skipped (its documents are then listed by id), a folder given explicitly must hold it."""
    from hindcast.archive import open_snapshot, snapshot_dir

    manifests = [RunManifest.of(s.manifest) for s in scored]  # records, or their stored form
    if archive is not None:
        ids = sorted({str(i) for m in manifests if (i := m.identity.get("snapshot")) is not None})
        return [open_snapshot(Path(archive), sid) for sid in ids]
    recorded = sorted({(str(a["root"]), str(a["snapshot"])) for m in manifests if (a := m.archive)})
    return [
        open_snapshot(Path(root), sid)
        for root, sid in recorded
        if snapshot_dir(Path(root), sid).is_dir()
    ]


@renamed(store="run_store", models="model_cutoffs")
def load_scored(
    run_store: RunStore,
    rid: str,
    bundle: MarketBundle | None = None,
    model_cutoffs: Path | None = None,
) -> RunScores:
    """Score a stored run from its forecasts alone (no forecaster is called), against the
    market store version the run recorded; label regimes (the model cutoff registry,
    `model_cutoffs` overriding the shipped one; the keyword `models=` is deprecated) and
    coverage strata."""
    run_manifest = RunManifest.of(json.loads(run_store.run(rid).manifest_json))
    bundle = bundle if bundle is not None else _bundle_of(run_manifest)
    resolutions = {r.market_id: r for r in bundle.resolutions}
    markets = {m.id: m for m in bundle.markets}
    label = _regime_labeler(
        run_manifest.forecasters, resolutions, regimes.load_cutoffs(model_cutoffs)
    )
    rows = score_rows(
        run_store.forecasts(rid),
        markets,
        resolutions,
        bundle.prices,
        label,
        run_store.coverage(rid),
        venue_registry.venues(bundle),
    )
    return RunScores(rid, run_manifest, rows, scoring_policies())


@renamed(store="run_store", models="model_cutoffs")
def score_run(
    run_store: RunStore,
    rid: str,
    bundle: MarketBundle | None = None,
    by: str | None = None,
    model_cutoffs: Path | None = None,
    prices=None,
) -> list[LeaderboardRow]:
    scores = load_scored(run_store, rid, bundle, model_cutoffs)
    return leaderboard_of(scores, by=by, prices=prices)


def leaderboard_of(scores: RunScores, by: str | None = None, prices=None) -> list[LeaderboardRow]:
    """The leaderboard of a scored run (costs from `prices`; None: the shipped table)."""
    return leaderboard(scores.rows, by=by, prices=prices)


def _regime_labeler(provenance: Mapping, resolutions: dict, cutoffs: dict) -> Callable:
    def label(stored) -> str:
        model = regimes.model_of(stored.forecaster, provenance.get(stored.forecaster))
        return regimes.regime(model, stored.t0, resolutions[stored.market_id].resolved_at, cutoffs)

    return label
