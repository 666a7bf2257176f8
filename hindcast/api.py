"""The library facade: the operations users, the CLI and the service call; time is passed in.
Each delegates below (sweep, rescore → replay; analyze → leaderboard + analysis; export →
leaderboard; pull, import_markets → markets; ingest, freeze, embed, search → archive). Front
ends import every other name from its package's face (its `__init__`)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from hindcast import archive as archives
from hindcast import leaderboard, replay
from hindcast import markets as market_data
from hindcast import runs as run_stores
from hindcast.timeutil import iso


def sweep(spec=None, *, now: datetime, out="runs", db=None, runs=None, **options):
    """`sweep_async` run to its end (`asyncio.run`): the same keywords, the same SweepResult."""
    resolved, store, engine = _sweep_parts(spec, db, runs, options)
    return asyncio.run(
        replay.run_sweep(resolved, run_store=store, out_dir=Path(out), now=now, **engine)
    )


async def sweep_async(spec=None, *, now: datetime, out="runs", db=None, runs=None, **options):
    """Forecast what the spec misses in the run database, score, export to OUT/<run id>/: a
    SweepResult; StoppedError once stored and exported when a breaker or budget stopped it (the
    same call resumes). `spec`: a ReplaySpec, a mapping of spec keys or a TOML file, the other
    `options` that are spec keys laid over it; `db` a path or URL (default $HINDCAST_DB, else
    runs/hindcast.db) or `runs` an open RunStore; engine options: models (None: from os.environ),
    prices, retry_limit, on_plan, advance, prepared, shard ((i, n): the i-th of n processes),
    created_at (a new run's creation instant, else `now`), no_cache (models answer anew; with
    models=None)."""
    resolved, store, engine = _sweep_parts(spec, db, runs, options)
    return await replay.run_sweep(resolved, run_store=store, out_dir=Path(out), now=now, **engine)


def _sweep_parts(spec, db, runs, options: dict):
    """The resolved spec, the run store and the engine's options (exports by the leaderboard)."""
    engine = {k: options.pop(k) for k in _ENGINE if options.get(k) is not None}
    resolved = replay.replay_spec(spec, {k: v for k, v in options.items() if k not in _ENGINE})
    store = run_stores.open_store(db, runs)
    engine["export"] = lambda *parts: leaderboard.write_run(*parts, run_store=store)
    return resolved, store, engine


_ENGINE = tuple(
    "models prices retry_limit on_plan advance prepared shard created_at no_cache".split()
)


def rescore(run_store, run_id: str, *, model_cutoffs: Path | None = None, bundle=None):
    """A stored run scored from its forecasts alone (no model called): a RunScores."""
    return replay.load_scored(run_store, run_id, bundle, model_cutoffs)


def pull(store: Path, query=None, *, now: datetime, progress=None, **options):
    """Resolved binary markets → a new store version: Polymarket's and YES histories (a PullQuery;
    options gamma_url, clob_url, data_url), or with a KalshiQuery Kalshi's settled markets and
    candles (kalshi_url), or with a ManifoldQuery Manifold's (manifold_url, per_minute,
    page_limit). Options attempts (5), timeout (30 s), user_agent."""
    defaults = {"attempts": 5, "timeout": 30.0, "user_agent": "hindcast"}
    return market_data.pull_from(store, query, now, progress, **{**defaults, **options})


def import_markets(store: Path, markets: Path, prices: Path | None = None, *, now: datetime):
    """ForecastBench's markets.jsonl (+ prices_daily.csv) as a new store version: (id, bundle)."""
    bundle = market_data.importers.import_forecastbench(markets, prices)
    provenance = {
        "source": "forecastbench",
        "markets": str(markets),
        "prices": str(prices or ""),
        "imported_at": iso(now),
    }
    return market_data.store.write_version(store, bundle, provenance), bundle


def ingest(
    paths: Sequence[Path],
    source: str,
    fmt: str,
    archive: Path,
    *,
    snapshot: str | None = None,
    ray=None,
):
    """Ingest inputs into the archive draft, all or nothing (a frozen `snapshot` is refused);
    summaries. `ray`: a Ray address ("local": start one) → a Ray task per input, the same files
    (archive.build)."""
    if snapshot:
        archives.ingest.refuse_frozen(archives.layout.snapshot_dir(archive, snapshot))
    return archives.build.ingest_inputs(paths, source, fmt, archive, ray=ray)


def freeze(archive: Path) -> str:
    """Freeze the archive draft as an immutable, content-addressed snapshot; its id."""
    return archives.freeze(archive)


def embed(archive: Path, snapshot: str | None = None, embedder="minilm", **options) -> dict:
    """Embed a snapshot (None: LATEST) and build its index, resumably; the index info. Options:
    chunk_rows, on_progress, ray (on Ray, the same bytes), device, approx (then the approximate
    index of each month), lists (per month), partition (codebook | projection)."""
    return archives.build.build(archives.open_snapshot(archive, snapshot), embedder, **options)


def search(
    archive: Path, query: str, t0: datetime, *, snapshot=None, k=10, mode="hybrid", **options
):
    """The archive as it stood before t0, searched: `k` hits (vector | text | hybrid; options
    vector_search exact | approx, nprobe; ray: an address, its months as shards on Ray)."""
    return archives.fanout.search(
        archives.open_snapshot(archive, snapshot), t0, query, k, mode, **options
    )


def export(
    run_store,
    runs: Sequence[str],
    out: Path,
    formats: Sequence[str] = ("csv", "json", "parquet", "md", "html"),
    **options,
):
    """Stored runs' leaderboard, per-forecast table and report (no model called) in `formats`."""
    return leaderboard.export_runs(run_store, runs, out, formats, **options)


def analyze(
    run_store, runs: Sequence[str], *, split: datetime | None = None, ray=None, **settings
) -> list:
    """Stored runs' analyses as Findings (no model called; `split` None: median; `ray`: the
    evidence strata search the archive on that Ray cluster; settings: hindcast.analysis's)."""
    return leaderboard.analyze_runs(run_store, runs, split, ray, **settings)
