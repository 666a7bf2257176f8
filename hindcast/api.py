"""The library facade: the operations users, the CLI and the service call. Time is passed in. Each delegates
below (sweep, rescore → replay; analyze → leaderboard + analysis; export → leaderboard; pull, import_markets →
markets; ingest, freeze, embed, search → archive). What else front ends use is re-exported (end)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path


def sweep(spec, *, store, out_dir: Path, now: datetime, **options):
    """`sweep_async` run to its end (`asyncio.run`): the same keywords, the same SweepResult."""
    return asyncio.run(sweep_async(spec, store=store, out_dir=out_dir, now=now, **options))


async def sweep_async(spec, *, store, out_dir: Path, now: datetime, on_plan: Callable[[int], None] = lambda n: None,
                      advance: Callable[[], None] = lambda: None, models=None, prices=None, created_at=None,
                      retry_limit: int | None = None, prepared=None, shard: tuple[int, int] | None = None):
    """Forecast what `spec` misses in `store`, score, export to OUT_DIR/<run id>/: a SweepResult (models None:
    from os.environ; `shard` (i, n): i-th of n processes; `created_at`: a new run's, else `now`). StoppedError once
    stored and exported (resumable)."""
    from hindcast.leaderboard.run_export import write_run
    from hindcast.replay.engine import run_sweep

    return await run_sweep(spec, store=store, out_dir=Path(out_dir), now=now, on_plan=on_plan, advance=advance,
                           models=models, prices=prices, retry_limit=retry_limit, prepared=prepared,
                           export=lambda *parts: write_run(*parts, store=store), shard=shard, created_at=created_at)


def rescore(store, run_id: str, *, models: Path | None = None, bundle=None):
    """A stored run scored from its forecasts alone (no model called): a RunScores (leaderboard_of)."""
    from hindcast.replay.engine import load_scored

    return load_scored(store, run_id, bundle, models)


def pull(store: Path, query=None, *, now: datetime, progress=None, attempts: int = 5, timeout: float = 30.0,
         user_agent: str = "hindcast", **urls: str | None):
    """Resolved binary markets → a new store version: Polymarket's and YES histories (a PullQuery; urls: gamma/clob/
    data_url), or with a KalshiQuery Kalshi's settled markets and candles (urls: kalshi_url; a KalshiSummary)."""
    from hindcast.markets.connect import pull_from

    return pull_from(store, query, now, progress, attempts=attempts, timeout=timeout, user_agent=user_agent, **urls)


def import_markets(store: Path, markets: Path, prices: Path | None = None, *, now: datetime):
    """ForecastBench's markets.jsonl (+ prices_daily.csv) as a new store version: (version id, bundle)."""
    from hindcast.markets import importers, store as stores
    from hindcast.timeutil import iso

    bundle = importers.import_forecastbench(markets, prices)
    provenance = {"source": "forecastbench", "markets": str(markets), "prices": str(prices or ""),
                  "imported_at": iso(now)}
    return stores.write_version(store, bundle, provenance), bundle


def ingest(paths: Sequence[Path], source: str, fmt: str, archive: Path, *, snapshot: str | None = None, ray=None):
    """Ingest inputs into the archive draft, all or nothing (a frozen `snapshot` is refused); summaries.
    `ray`: a Ray address ("local": start one) → a Ray task per input, the same files (archive.distributed)."""
    from hindcast.archive import distributed, ingest as ingesting, layout

    if snapshot:
        ingesting.refuse_frozen(layout.snapshot_dir(archive, snapshot))
    return distributed.ingest_inputs(paths, source, fmt, archive, ray=ray)


def freeze(archive: Path) -> str:
    """Freeze the archive draft as an immutable, content-addressed snapshot; its id."""
    from hindcast.archive.snapshot import freeze as freeze_draft
    return freeze_draft(archive)


def embed(archive: Path, snapshot: str | None = None, embedder="minilm", *, chunk_rows: int = 2048, on_progress:
          Callable[[int, int], None] | None = None, ray=None, device="cpu", approx=False, lists=None) -> dict:
    """Embed a snapshot (None: LATEST) and build its index, resumably (`ray`: on Ray, the same bytes; `approx`:
    then the approximate index of each month, `lists` per month); the index info."""
    from hindcast.archive import distributed, snapshot as snapshots

    return distributed.build(snapshots.open_snapshot(archive, snapshot), embedder, ray=ray, device=device,
                             chunk_rows=chunk_rows, on_progress=on_progress, approx=approx, lists=lists)


def search(archive: Path, query: str, t0: datetime, *, snapshot: str | None = None, k: int = 10,
           mode: str = "hybrid", vector_search: str = "exact", nprobe: int | None = None) -> list:
    """The archive as it stood before t0, searched: `k` hits (vector | text | hybrid; exact | approx vectors)."""
    from hindcast.archive import retriever, snapshot as snapshots

    snap = snapshots.open_snapshot(archive, snapshot)
    with retriever.TimeBoundRetriever(snap, t0, vector_search=vector_search, nprobe=nprobe) as bound:
        return bound.search(query, k=k, mode=mode)


def export(store, runs: Sequence[str], out: Path, formats: Sequence[str] = ("csv", "json", "parquet", "md", "html"),
           **options):
    """Stored runs' leaderboard, per-forecast table and report (no model called) in `formats` into `out`."""
    from hindcast.leaderboard.run_export import export_runs

    return export_runs(store, runs, out, formats, **options)


def analyze(store, runs: Sequence[str], *, split: datetime | None = None, **settings) -> list:
    """Stored runs' analyses as Findings (no model called; `split` None: median; settings: hindcast.analysis's)."""
    from hindcast import analysis
    from hindcast.leaderboard import findings, tables
    from hindcast.replay.engine import load_scored, recorded_bundle

    bundles = [recorded_bundle(store, rid) for rid in runs]
    scored = [load_scored(store, rid, bundle) for rid, bundle in zip(runs, bundles)]
    return (findings.with_resolution(findings.collect(scored, split), scored)
            + analysis.findings(tables.combine(scored).rows, bundles, **settings))


# ---- re-exports: what front ends reach below the facade by name, loaded on first use (`__getattr__`) ----
_REEXPORTS = {  # module → names; the facade's own operations (above) take precedence over a lower-level name
    "hindcast.timeutil": "iso parse_utc from_unix", "hindcast.frozen": "sha256_file", "hindcast.http": "redact variable_name",
    "hindcast.filelock": "FileLock holder", "hindcast.archive.snapshot": "open_snapshot latest verify_snapshot",
    "hindcast.archive.index": "build_index pending", "hindcast.archive.readers": "FORMATS",
    "hindcast.archive.embed": "get_embedder", "hindcast.archive.layout": "check_source",
    "hindcast.markets.store": "open_version", "hindcast.markets.pull": "PullQuery", "hindcast.markets.kalshi_pull": "KalshiQuery",
    "hindcast.replay.market_view": "market_view list_row find_market",
    "hindcast.replay.spec": "ReplaySpec spec_from_mapping SAMPLE_FORECASTERS SAMPLE_SUBSETS did_you_mean parse_offset "
                            "Text config_error",
    "hindcast.replay.layout": "load_toml flatten_layout refuse_unknown",
    "hindcast.replay.plan": "Plan prepare select_markets", "hindcast.adapters.inspect_import": "import_inspect read_inspect store_inspect",
    "hindcast.replay.engine": "SweepResult RunScores load_scored score_run leaderboard_of board_json default_models "
                              "cache_path",
    "hindcast.runs.store": "RunStore db_url db_file", "hindcast.scoring.costs": "load_prices",
    "hindcast.scoring.usage": "summarize", "hindcast.scoring.regimes": "load_cutoffs",
    "hindcast.scoring.trading": "TradingStrategy load_fees simulate_trading TRADE_COLUMNS",
    "hindcast.scoring.aggregate": "SLICES", "hindcast.leaderboard.tables": "canonical",
    "hindcast.leaderboard.publish": "publish check_slice", "hindcast.leaderboard.export": "check_formats",
    "hindcast.audit.probe_run": "probe_recall probe_models RecallRun",
    "hindcast.audit.probe_store": "default_recall_path load_recall exclude_recalled_runs exclude_recalled_scores "
                                  "RecallTable", "hindcast.audit.run_audit": "audit check_detectors",
}
_MODULES = {  # whole modules the front ends use as namespaces
    "display": "hindcast.leaderboard.display", "registry": "hindcast.forecasters.registry",
    "local_model": "hindcast.forecasters.local", "embedders": "hindcast.archive.embed", "adapters": "hindcast.adapters"}
_WHERE = {name: module for module, names in _REEXPORTS.items() for name in names.split()}


def __getattr__(name: str):
    import importlib

    if name in _MODULES:
        return importlib.import_module(_MODULES[name])
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'hindcast.api' has no attribute {name!r}")
