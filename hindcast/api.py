"""The library facade: what the CLI, the scheduler and users call. Time is passed in.

Model calls go through a `hindcast.forecasters.models.Models` value: the CLI and the
service build one from their environment; called without one, `sweep` builds a default
(keys from `os.environ`, responses cached beside the run database) and closes it after.
`sweep_async` is the same sweep as a coroutine, for callers inside a running event loop
(Jupyter); `sweep` is `asyncio.run` of it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from hindcast.errors import (
    ConfigError,
    HindcastError,
    InfrastructureError,
    StoppedError,
)
from hindcast.forecasters import registry
from hindcast.forecasters.base import Context
from hindcast.leaderboard import export, report
from hindcast.markets.bundle import MarketBundle, market_at
from hindcast.markets.store import open_version
from hindcast.records import Market, Question
from hindcast.replay import coverage
from hindcast.replay import cutoffs as cutoff_rules
from hindcast.replay.runner import Limits, Task, plan, run_tasks, spent
from hindcast.replay.spec import ReplaySpec, parse_offset, run_id, run_identity
from hindcast.runs import manifest
from hindcast.runs.store import RunStore
from hindcast.scoring import regimes
from hindcast.scoring.aggregate import (
    LeaderboardRow,
    ScoredRow,
    leaderboard,
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

    def to_polars(self):
        """The leaderboard as a polars DataFrame (one row per forecaster, every column)."""
        return board_frame(self.board)

    def to_json(self) -> dict:
        """The sweep as one JSON-ready document: run id, counts, leaderboard rows, paths."""
        return {"run_id": self.run_id, "resumed": self.resumed, "markets": self.markets, "planned": self.planned,
                "executed": self.executed, "already_stored": self.planned - self.executed,
                "no_valid_forecast": list(self.empty), "leaderboard": board_json(self.board),
                "paths": {k: str(v) for k, v in self.paths.items()}}


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
    return pl.DataFrame([dataclasses.asdict(r) for r in board], schema=columns, infer_schema_length=None) \
        if board else pl.DataFrame(schema=columns)


@dataclass(frozen=True)
class Plan:
    """A sweep resolved against its frozen inputs: what will be forecast, under which run id."""

    run_id: str
    identity: dict
    bundle: MarketBundle
    markets: list[str]
    cutoffs: list[cutoff_rules.Cutoff]
    snapshot: object | None  # hindcast.archive.snapshot.Snapshot
    index: object | None  # its opened embedding/full-text index
    store_root: Path


def prepare(spec: ReplaySpec) -> Plan:
    """Open the frozen inputs, select markets, schedule cutoffs; refuse any invalid cutoff."""
    version = open_version(spec.store, spec.version)
    snapshot = _open_snapshot(spec)
    index = _open_index(snapshot)
    markets = select_markets(version.bundle, spec)
    cutoffs = plan_cutoffs(version.bundle, markets, spec, _archive_end(snapshot) if spec.hindcast_rule else None)
    identity = run_identity(spec, version.id, markets, snapshot.id if snapshot else None)
    if index is not None:  # which vectors the run searched is part of what it is
        identity["index"] = {k: index.info.get(k) for k in ("embedder", "dims", "embedder_dtype")}
    return Plan(run_id(identity), identity, version.bundle, markets, cutoffs, snapshot, index, Path(spec.store))


def sweep(spec: ReplaySpec, *, store: RunStore, out_dir: Path, now: datetime,
          on_plan: Callable[[int], None] = lambda n: None, advance: Callable[[], None] = lambda: None,
          models=None, prices=None, retry_limit: int | None = None, prepared: Plan | None = None) -> SweepResult:
    """Forecast every missing (forecaster, market, t0, repeat) of the spec, then score and export.
    With `spec.retry_failed`, stored failures are asked again (`retry_limit`: only those
    retried fewer times than that).

    Raises StoppedError (after storing and exporting what was answered) when a circuit
    breaker or a budget stopped the run: re-running the same sweep resumes it."""
    return asyncio.run(sweep_async(spec, store=store, out_dir=out_dir, now=now, on_plan=on_plan, advance=advance,
                                   models=models, prices=prices, retry_limit=retry_limit, prepared=prepared))


async def sweep_async(spec: ReplaySpec, *, store: RunStore, out_dir: Path, now: datetime,
                      on_plan: Callable[[int], None] = lambda n: None, advance: Callable[[], None] = lambda: None,
                      models=None, prices=None, retry_limit: int | None = None,
                      prepared: Plan | None = None) -> SweepResult:
    """`sweep` as a coroutine (usable from a running event loop). `models`: a Models (None:
    keys from os.environ, cache beside the run database); `prices`: a scoring.costs.PriceTable
    (None: the shipped table) for `max_cost`, the leaderboards and the report; `prepared`:
    `prepare(spec)` already done (a caller that validated the inputs before opening `store`)."""
    from hindcast.scoring.costs import load_prices

    owned = models is None
    models = models if models is not None else default_models(store, out_dir, concurrency=spec.concurrency)
    prices = prices if prices is not None else load_prices(None)
    try:
        return await _sweep(spec, store, Path(out_dir), now, on_plan, advance, models, prices, retry_limit, prepared)
    finally:
        await models.aclose()
        if owned:
            models.close()


def default_models(store: RunStore, out_dir: Path, env=None, concurrency: int = 4, no_cache: bool = False):
    """Keys from `env` (default `os.environ`); the response cache beside the run database
    (`responses.db`; in `out_dir` for a database that is not a SQLite file); at most
    `concurrency` requests in flight per endpoint; `no_cache`: answers recorded, never replayed."""
    import os

    from hindcast.forecasters.models import Models

    return Models.from_environment(os.environ if env is None else env, cache_path(store.url, out_dir),
                                   no_cache=no_cache, concurrency=concurrency)


def cache_path(db_url: str, out_dir: Path) -> Path:
    """responses.db beside the run database when it is a SQLite file, else in `out_dir`."""
    from hindcast.runs.store import db_file

    path = db_file(db_url)
    return (path.parent if path is not None else Path(out_dir)) / "responses.db"


async def _sweep(spec, store, out_dir, now, on_plan, advance, models, prices, retry_limit, prepared) -> SweepResult:
    forecasters = {name: _bound(registry.create(name), models) for name in spec.forecasters}
    limits = _limits(spec, forecasters, prices)
    p = prepared if prepared is not None else prepare(spec)
    created = store.ensure_run(p.run_id, p.identity, manifest.build(p.identity, p.store_root, forecasters), now)
    limits = _spent(limits, store, p.run_id)
    allowed = _subset_rule(spec, p.markets)
    all_tasks = plan(spec.forecasters, p.cutoffs, set(), spec.repeats, allowed)
    retry = store.retry_attempts(p.run_id, retry_limit) if spec.retry_failed else {}
    done = {k for k in store.done_keys(p.run_id) if k not in retry}
    tasks = plan(spec.forecasters, p.cutoffs, done, spec.repeats, allowed, retry)
    on_plan(len(tasks))
    _label_coverage(p, store)
    try:
        await _execute(tasks, forecasters, spec, p, store, advance, limits, models.reset_breakers(spec.breaker_threshold),
                       now)
    except StoppedError:  # what was answered is stored: score and export it, then say why it stopped
        if store.forecasts(p.run_id):
            _finish(p, store, out_dir, len(all_tasks), len(tasks), created, prices)
        raise
    return _finish(p, store, out_dir, len(all_tasks), len(tasks), created, prices)


def _finish(p: Plan, store: RunStore, out_dir: Path, planned: int, executed: int, created: bool,
            prices) -> SweepResult:
    scored = load_scored(store, p.run_id, p.bundle)
    board = leaderboard(scored.rows, prices=prices)
    folder, title = Path(out_dir) / p.run_id, f"hindcast leaderboard — run {p.run_id}"
    paths = export.write_all(board, folder, title, _notes(p.identity["store_version"], p.markets, p.cutoffs))
    paths["html"] = report.write_report(folder, [scored], title, questions={m.id: m.question for m in p.bundle.markets},
                                        prices=prices)
    return SweepResult(p.run_id, not created, planned, executed, len(p.markets), board, paths, _empty(scored.rows))


def _empty(rows) -> tuple[str, ...]:
    """Forecasters with stored rows of which none is a valid probability."""
    valid: dict[str, bool] = {}
    for row in rows:
        valid[row.forecaster] = valid.get(row.forecaster, False) or row.probability is not None
    return tuple(sorted(name for name, ok in valid.items() if not ok))


def _bound(forecaster, models):
    """The forecaster calling models through `models` (forecasters without models are unchanged)."""
    bind = getattr(forecaster, "bind", None)
    return bind(models) if callable(bind) else forecaster


def _limits(spec: ReplaySpec, forecasters: dict, prices) -> Limits:
    """The run's limits; with `max_cost`, every model must have a price (before any call)."""
    if spec.max_cost is not None:
        unpriced = sorted({n for f in forecasters.values() if (n := _model_name(f)) and prices.cost(n, 0, 0) is None})
        if unpriced:
            raise ConfigError(f"--max-cost needs a price for every model; none for {', '.join(unpriced)} "
                              "(add it to a price table given with --prices)")
    return Limits(spec.max_failures, spec.max_cost, spec.max_tokens, prices)


def _spent(limits: Limits, store: RunStore, rid: str) -> Limits:
    """Budgets are per run: start from what the run's stored forecasts (every attempt) spent."""
    if limits.max_cost is None and limits.max_tokens is None:
        return limits
    totals = [spent(s.forecast.usage or {}, limits.prices) for s in store.forecasts(rid, all_attempts=True)]
    return dataclasses.replace(limits, spent_tokens=sum(t for t, _ in totals), spent_cost=sum(c for _, c in totals))


def _model_name(forecaster) -> str | None:
    name = getattr(forecaster, "model_name", None)
    return name() if callable(name) else None


def select_markets(bundle: MarketBundle, spec: ReplaySpec) -> list[str]:
    """Markets of the spec with a Yes/No outcome, sorted by id; unknown ids are an error."""
    markets = {m.id: m for m in bundle.markets}
    resolutions = {r.market_id: r for r in bundle.resolutions}
    missing = [m for m in spec.ids if m not in markets]
    if missing:
        raise HindcastError(f"market(s) not in store {spec.store}: {', '.join(missing)}")
    chosen = [i for i in sorted(spec.ids or markets)
              if resolutions[i].outcome is not None and _matches(markets[i], resolutions[i], spec)]
    return chosen[: spec.limit] if spec.limit else chosen


def _matches(market: Market, resolution, spec: ReplaySpec) -> bool:
    return ((not spec.topics or market.topic in spec.topics)
            and (spec.resolved_after is None or resolution.resolved_at >= spec.resolved_after)
            and (spec.resolved_before is None or resolution.resolved_at < spec.resolved_before)
            and (spec.min_volume is None or (market.volume or 0.0) >= spec.min_volume))


def plan_cutoffs(bundle: MarketBundle, market_ids: list[str], spec: ReplaySpec,
                 archive_end: datetime | None = None) -> list[cutoff_rules.Cutoff]:
    markets = {m.id: m for m in bundle.markets}
    resolutions = {r.market_id: r for r in bundle.resolutions}
    lives = [cutoff_rules.lifetime(markets[i], resolutions[i], bundle.prices.get(i, ())) for i in market_ids]
    offsets = [(parse_offset(o), o) for o in spec.offsets]
    return cutoff_rules.schedule(lives, spec.fractions, spec.at, offsets, archive_end, spec.hindcast_rule)


@dataclass(frozen=True)
class RunScores:
    """A stored run, scored: its manifest and one ScoredRow per stored forecast."""

    run_id: str
    manifest: dict
    rows: list[ScoredRow]

    def to_polars(self):
        """One row per stored forecast (newest attempt): the scored row's columns, its usage
        figures (tokens, requests, cache hits, retries, latency, model name) in place of
        `usage`; polars imported only here."""
        import polars as pl

        from hindcast.scoring.usage import figures

        fields = [f.name for f in dataclasses.fields(ScoredRow) if f.name != "usage"]
        rows = [{**{k: getattr(r, k) for k in fields}, **figures(dict(r.usage))} for r in self.rows]
        if not rows:
            return pl.DataFrame(schema=fields + list(figures({})))
        return pl.DataFrame(rows, infer_schema_length=None)


def load_scored(store: RunStore, rid: str, bundle: MarketBundle | None = None,
                models: Path | None = None) -> RunScores:
    """Score a stored run from its forecasts alone (no forecaster is called), against the
    market store version the run recorded; label regimes (model registry, `models`
    overriding the shipped one) and coverage strata."""
    run_manifest = json.loads(store.run(rid).manifest_json)
    if bundle is None:
        recorded = run_manifest["market_store"]
        bundle = open_version(Path(recorded["root"]), recorded["version"]).bundle
    resolutions = {r.market_id: r for r in bundle.resolutions}
    markets = {m.id: m for m in bundle.markets}
    label = _regime_labeler(run_manifest.get("forecasters", {}), resolutions, regimes.load_cutoffs(models))
    rows = score_rows(store.forecasts(rid), markets, resolutions, bundle.prices, label, store.coverage(rid))
    return RunScores(rid, run_manifest, rows)


def score_run(store: RunStore, rid: str, bundle: MarketBundle | None = None, by: str | None = None,
              models: Path | None = None, prices=None) -> list[LeaderboardRow]:
    return leaderboard_of(load_scored(store, rid, bundle, models), by=by, prices=prices)


def leaderboard_of(scores: RunScores, by: str | None = None, prices=None) -> list[LeaderboardRow]:
    """The leaderboard of a scored run (costs from `prices`; None: the shipped table)."""
    return leaderboard(scores.rows, by=by, prices=prices)


def _regime_labeler(provenance: dict, resolutions: dict, cutoffs: dict) -> Callable:
    def label(stored) -> str:
        model = regimes.model_of(stored.forecaster, provenance.get(stored.forecaster))
        return regimes.regime(model, stored.t0, resolutions[stored.market_id].resolved_at, cutoffs)
    return label


def _label_coverage(p: Plan, store: RunStore) -> None:
    """Archive-only coverage stratum of every (market, t0) not labelled yet (needs an archive)."""
    if p.snapshot is None:
        return
    done = store.coverage(p.run_id)
    markets = {m.id: m for m in p.bundle.markets}
    retriever_for = _retriever_factory(p.snapshot, p.index)
    for c in p.cutoffs:
        if (c.market_id, c.t0) not in done:
            n = coverage.relevant_count(retriever_for(c.t0), markets[c.market_id].question)
            store.add_coverage(p.run_id, c.market_id, c.t0, n, coverage.stratum(n))


def question_at(bundle: MarketBundle, cutoff: cutoff_rules.Cutoff) -> Question:
    """The market as it stood at the cutoff (its description version of that time) and t0;
    nothing about the outcome."""
    market = market_at(bundle, cutoff.market_id, cutoff.t0)
    return Question(market.id, market.question, market.description, cutoff.t0, market.url, market.topic,
                    market.scheduled_close)


async def _execute(tasks: list[Task], forecasters: dict, spec: ReplaySpec, p: Plan, store: RunStore, advance,
                   limits: Limits, breakers, now: datetime) -> None:
    retriever_for = _retriever_factory(p.snapshot, p.index)

    def context_for(task: Task) -> Context:
        c = task.cutoff
        return Context(c.t0, c.market_id, p.bundle.prices.get(c.market_id, ()), p.bundle.resolutions,
                       retriever_for(c.t0), task.repeat)

    def sink(task: Task, forecast, retrievals) -> None:
        c = task.cutoff
        store.add(p.run_id, task.forecaster, c.market_id, c.t0, c.label, forecast, retrievals, task.repeat, task.attempt)

    def on_outage(task: Task, exc: InfrastructureError) -> None:
        c = task.cutoff
        store.add_attempt(p.run_id, task.forecaster, c.market_id, c.t0, task.repeat, "infrastructure", str(exc), now)

    try:
        await run_tasks(tasks, forecasters, lambda c: question_at(p.bundle, c), context_for, sink,
                        spec.concurrency, advance, limits=limits, breakers=breakers, on_outage=on_outage)
    finally:
        await _close(forecasters)


async def _close(forecasters: dict) -> None:
    for forecaster in forecasters.values():
        close = getattr(forecaster, "aclose", None)
        if close is not None:
            await close()


def _subset_rule(spec: ReplaySpec, markets: list[str]) -> Callable[[str, str], bool]:
    """A forecaster with a subset size runs on that many markets, taken in a fixed hash order."""
    order = sorted(markets, key=lambda m: hashlib.sha256(m.encode()).hexdigest())
    subsets = {name: set(order[:n]) for name, n in spec.subsets}
    return lambda forecaster, market: forecaster not in subsets or market in subsets[forecaster]


def _open_snapshot(spec: ReplaySpec):
    if spec.archive is None:
        return None
    from hindcast.archive.snapshot import open_snapshot

    return open_snapshot(Path(spec.archive), spec.snapshot)


def _open_index(snapshot):
    """A sweep given an archive needs its index: refused before any forecast, not per forecast."""
    if snapshot is None:
        return None
    from hindcast.archive.index import open_index

    return open_index(snapshot)


def _retriever_factory(snapshot, index) -> Callable[[datetime], object]:
    if snapshot is None:
        return lambda t0: None
    from hindcast.archive.retriever import TimeBoundRetriever

    return lambda t0: TimeBoundRetriever(snapshot, t0, index=index)


def _archive_end(snapshot) -> datetime | None:
    """The instant after the archive's last full day (for the Hindcast rule)."""
    if snapshot is None or not snapshot.months:
        return None
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from hindcast.timeutil import ONE_DAY, day_start

    files = snapshot.partition_files(snapshot.months[-1])
    last = max(pc.max(pq.read_table(f, columns=["created_at"])["created_at"]).as_py() for f in files)
    return day_start(last) + ONE_DAY


def _notes(version_id: str, markets: list[str], cutoffs: list) -> list[str]:
    return [
        f"market store version {version_id}; {len(markets)} markets; {len(cutoffs)} (market, t0) cutoffs",
        "Brier: mean squared error of the YES probability (lower is better); market Brier: the market's last "
        "price strictly before the same t0, on the rows where it had one; skill = 1 − Brier/market Brier.",
        "95% intervals: bootstrap over markets (2,000 replicates, seed 0). Failures are counted, never imputed.",
    ]


# ---- the facade's re-exports -----------------------------------------------------------------
# What the CLI, the service and users reach below the facade, by name: `from hindcast.api import
# open_snapshot`. Loaded on first use (module `__getattr__`), so `hindcast --help` stays instant.
_REEXPORTS = {
    "hindcast.timeutil": ("iso", "parse_utc", "from_unix"),
    "hindcast.frozen": ("sha256_file",),
    "hindcast.filelock": ("FileLock", "holder"),
    "hindcast.archive.snapshot": ("open_snapshot", "latest", "verify_snapshot", "freeze"),
    "hindcast.archive.index": ("build_index",),
    "hindcast.archive.ingest": ("ingest", "refuse_frozen"),
    "hindcast.archive.readers": ("FORMATS",),
    "hindcast.archive.retriever": ("TimeBoundRetriever",),
    "hindcast.archive.embed": ("get_embedder",),
    "hindcast.archive.layout": ("check_source", "snapshot_dir"),
    "hindcast.markets.store": ("open_version", "write_version"),
    "hindcast.markets.pull": ("PullQuery", "pull"),
    "hindcast.markets.polymarket": ("CLOB_URL", "GAMMA_URL", "PolymarketClient", "RetryPolicy"),
    "hindcast.markets.prices": ("price_at",),
    "hindcast.markets.importers": ("import_forecastbench",),
    "hindcast.markets.bundle": ("description_at",),
    "hindcast.markets.connect": ("polymarket_client",),
    "hindcast.replay.market_view": ("market_view", "list_row", "find_market", "jsonable"),
    "hindcast.replay.spec": ("ReplaySpec", "load_toml", "spec_from_mapping", "SAMPLE_FORECASTERS", "SAMPLE_SUBSETS",
                             "did_you_mean", "flatten_layout", "parse_offset"),
    "hindcast.replay.cutoffs": ("lifetime", "instant_cutoff"),
    "hindcast.runs.store": ("RunStore", "db_url", "db_file"),
    "hindcast.scoring.costs": ("load_prices",),
    "hindcast.scoring.usage": ("summarize",),
    "hindcast.scoring.regimes": ("load_cutoffs",),
    "hindcast.scoring.aggregate": ("SLICES",),
    "hindcast.leaderboard.tables": ("canonical",),
    "hindcast.leaderboard.publish": ("publish", "check_slice"),
    "hindcast.leaderboard.export": ("check_formats",),
}
_MODULES = {  # whole modules the front ends use as namespaces
    "display": "hindcast.leaderboard.display", "registry": "hindcast.forecasters.registry",
    "local_model": "hindcast.forecasters.local", "embedders": "hindcast.archive.embed",
}
_WHERE = {name: module for module, names in _REEXPORTS.items() for name in names}


def __getattr__(name: str):
    import importlib

    if name in _MODULES:
        return importlib.import_module(_MODULES[name])
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'hindcast.api' has no attribute {name!r}")
