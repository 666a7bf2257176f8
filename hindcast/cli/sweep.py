"""`hindcast sweep`: replay forecasters on markets at cutoffs, store the run,
print the leaderboard."""

from __future__ import annotations

import os
import signal
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import typer

from hindcast import api, forecasters, replay, scoring
from hindcast import archive as archives
from hindcast.cli.common import DB_HELP, default_sample, now, run_created, verbosity
from hindcast.cli.console import Ticker, leaderboard_table, out_console, say
from hindcast.errors import ConfigError, HindcastError


def _split(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _fractions(text: str) -> list[float]:
    try:
        return [float(x) for x in _split(text)]
    except ValueError as exc:
        raise typer.BadParameter(
            f"{text!r} is not a comma-separated list of numbers", param_hint="--fractions"
        ) from exc


def _subsets(items: list[str]) -> list[tuple[str, int]]:
    pairs = []
    for item in items:
        name, sep, n = item.rpartition("=")
        if not sep or not n.isdigit():
            raise typer.BadParameter(f"{item!r}: expected FORECASTER=N", param_hint="--subset")
        pairs.append((name, int(n)))
    return pairs


def sweep(
    spec_file: Optional[Path] = typer.Option(
        None, "--spec", help="A TOML sweep spec; flags given here override it [default: none]."
    ),
    store: Optional[Path] = typer.Option(
        None, "--store", help="Market store directory [default: the shipped sample]."
    ),
    version: Optional[str] = typer.Option(
        None, "--store-version", help="Store version id [default: LATEST]."
    ),
    ids: Optional[list[str]] = typer.Option(
        None, "--market", "-m", help="Only this market id (repeatable) [default: every market]."
    ),
    topics: Optional[list[str]] = typer.Option(
        None, "--topic", help="Only markets of this topic (repeatable) [default: every topic]."
    ),
    resolved_after: Optional[str] = typer.Option(
        None,
        "--resolved-after",
        help="Only markets resolved at/after this ISO instant [default: no bound].",
    ),
    resolved_before: Optional[str] = typer.Option(
        None,
        "--resolved-before",
        help="Only markets resolved before this ISO instant [default: no bound].",
    ),
    min_volume: Optional[float] = typer.Option(
        None, "--min-volume", help="Only markets with at least this volume [default: no bound]."
    ),
    limit: Optional[int] = typer.Option(
        None, "--limit", min=1, help="At most N markets (first by id) [default: no limit]."
    ),
    exclude: Optional[list[str]] = typer.Option(
        None,
        "--exclude",
        help="Leave out markets the source marks disputed or "
        "whose rules were updated: disputed | rules-updated (repeatable; part "
        "of the run id) [default: none left out].",
    ),
    forecasters: Optional[list[str]] = typer.Option(
        None,
        "--forecaster",
        "-f",
        help="A forecaster spec such as market, constant:p=0.3 or "
        "zero-shot:model=openai:gpt-4.1-mini (repeatable) [default: the baselines plus the "
        "embedded local model on a few markets].",
    ),
    subsets: Optional[list[str]] = typer.Option(
        None,
        "--subset",
        help="SPEC=N: run that forecaster on N markets only (repeatable) [default: every "
        "forecaster on every market].",
    ),
    archive: Optional[Path] = typer.Option(
        None,
        "--archive",
        help="Archive directory for forecasters that read documents [default: none; the shipped "
        "sample for the default forecasters].",
    ),
    snapshot: Optional[str] = typer.Option(
        None, "--snapshot", help="Archive snapshot id [default: LATEST]."
    ),
    vector_search: Optional[str] = typer.Option(
        None,
        "--vector-search",
        help="exact | approx: approx searches months wholly before t0's month through their "
        "approximate index (`hindcast archive embed --approx`; its measured recall is "
        "recorded in the run) [default: exact].",
    ),
    nprobe: Optional[int] = typer.Option(
        None,
        "--nprobe",
        min=1,
        help="Lists probed per month in approx mode [default: the index's].",
    ),
    ray: Optional[str] = typer.Option(
        None,
        "--ray",
        help="auto | HOST:PORT | ray://HOST:PORT | local: search the archive as month shards on "
        "that Ray cluster (the same results as one node) [default: this process].",
    ),
    fractions: Optional[str] = typer.Option(
        None,
        "--fractions",
        help="Lifetime fractions [default: 0.25,0.5,0.75,1.0; 1.0 = the day before resolution].",
    ),
    offsets: Optional[str] = typer.Option(
        None, "--offsets", help="Offsets before resolution, e.g. 1d,7d,30d [default: none]."
    ),
    at: Optional[list[str]] = typer.Option(
        None, "--at", help="Explicit cutoff instant, ISO UTC (repeatable) [default: none]."
    ),
    hindcast_rule: Optional[bool] = typer.Option(
        None,
        "--hindcast-rule/--no-hindcast-rule",
        help="Add the day before resolution, capped at the archive's end [default: off].",
    ),
    repeats: Optional[int] = typer.Option(
        None, "--repeats", min=1, help="Forecasts per (forecaster, market, t0) [default: 1]."
    ),
    seed: Optional[int] = typer.Option(
        None, "--seed", help="Run seed (recorded; part of the run id) [default: 0]."
    ),
    concurrency: Optional[int] = typer.Option(
        None, "--concurrency", min=1, help="Forecasts in flight at once [default: 8]."
    ),
    max_failures: Optional[int] = typer.Option(
        None,
        "--max-failures",
        min=0,
        help="Stop after more than N failed forecasts [default: no limit].",
    ),
    out: Path = typer.Option(
        Path("runs"), "--out", help="Where exports and the report go (OUT/<run-id>/)."
    ),
    db: Optional[str] = typer.Option(
        None,
        "--db",
        help=DB_HELP
        + " The response cache responses.db sits beside a SQLite file (a PostgreSQL database "
        "holds it itself; else in OUT).",
    ),
    no_cache: bool = typer.Option(
        False,
        "--no-cache",
        help="Ask models again instead of replaying cached answers (answers are still recorded) "
        "[default: off].",
    ),
    retry_failed: Optional[bool] = typer.Option(
        None,
        "--retry-failed",
        help="Ask again for stored forecast failures (the old attempt is kept; scores use the "
        "newest) [default: off].",
    ),
    max_cost: Optional[float] = typer.Option(
        None,
        "--max-cost",
        min=0,
        help="Stop scheduling new forecasts once new model calls cost this many dollars (price "
        "table; exit 4, resumable) [default: no budget].",
    ),
    max_tokens: Optional[int] = typer.Option(
        None,
        "--max-tokens",
        min=1,
        help="Stop scheduling new forecasts once new model calls used this many tokens (exit 4, "
        "resumable) [default: no budget].",
    ),
    breaker_threshold: Optional[int] = typer.Option(
        None,
        "--breaker-threshold",
        min=1,
        help="Consecutive outages of one endpoint that stop calls to it (exit 4, resumable) "
        "[default: 5].",
    ),
    prices: Optional[Path] = typer.Option(
        None,
        "--prices",
        help="TOML of model = { input = $, output = $ } per million tokens, over the shipped "
        "price table [default: the shipped table].",
    ),
    shard: Optional[str] = typer.Option(
        None,
        "--shard",
        help="I/N: this is the I-th of N processes (any machines) sweeping the same spec into one "
        "run database: its share first, then it helps with the rest; claims in the database "
        "keep every forecast made once [default: one process].",
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print one JSON document on stdout (run id, counts, leaderboard rows, paths) instead "
        "of the table [default: off].",
    ),
) -> None:
    """Replay forecasters on resolved markets at past cutoffs, score them, print the leaderboard."""

    flags = {  # every spec field, by the flag that sets it (None: not given)
        "store": store,
        "version": version,
        "ids": ids,
        "topics": topics,
        "resolved_after": resolved_after,
        "resolved_before": resolved_before,
        "min_volume": min_volume,
        "limit": limit,
        "exclude": exclude,
        "forecasters": forecasters,
        "subsets": subsets,
        "archive": archive,
        "snapshot": snapshot,
        "vector_search": vector_search,
        "nprobe": nprobe,
        "ray": ray,
        "fractions": fractions,
        "offsets": offsets,
        "at": at,
        "hindcast_rule": hindcast_rule,
        "repeats": repeats,
        "seed": seed,
        "concurrency": concurrency,
        "max_failures": max_failures,
        "retry_failed": retry_failed,
        "max_cost": max_cost,
        "max_tokens": max_tokens,
        "breaker_threshold": breaker_threshold,
    }
    part, created = _shard(shard), run_created()
    spec, prepared, table = _checked(spec_file, flags, prices, out)
    signal.signal(signal.SIGTERM, _terminated)  # bots are stopped and the stop is said
    progress = _Progress(quiet=verbosity() < 0)
    try:
        result = api.sweep(
            spec,
            db=db,
            out=out,
            now=now(),
            on_plan=progress.on_plan,
            advance=progress.ticker.advance,
            no_cache=no_cache,
            prices=table,
            prepared=prepared,
            shard=part,
            created_at=created,
        )
    finally:
        progress.ticker.stop()
    _report(result, as_json)
    if result.empty:
        raise HindcastError(
            f"no valid forecast at all from {', '.join(result.empty)} (stored and exported; "
            f"see hindcast runs show {result.run_id})"
        )


def _checked(spec_file: Optional[Path], flags: dict, prices: Optional[Path], out: Path):
    """The spec (file, flags, sample defaults), prepared, and the price table: every input
    checked before anything is written (a bad forecaster parameter too: policy=bogus,
    constant:p=2 …)."""
    with _naming(spec_file):
        spec = _spec(spec_file, _fields(flags))
        prepared = replay.prepare(spec)  # store, archive, index, cutoffs
        forecasters.registry.check(spec.forecasters)
    table = scoring.load_prices(prices)
    _check_writable(out, "--out")
    return spec, prepared, table


def _terminated(signum, frame) -> None:
    """SIGTERM unwinds the sweep as Ctrl-C does: running bots are killed, what is stored kept."""
    raise KeyboardInterrupt("terminated by SIGTERM")


def _shard(text: Optional[str]) -> Optional[tuple[int, int]]:
    """`--shard I/N` as (I, N), 1 ≤ I ≤ N."""
    if text is None:
        return None
    i, sep, n = text.partition("/")
    if not (sep and i.isdigit() and n.isdigit() and 1 <= int(i) <= int(n)):
        raise typer.BadParameter(
            f"{text!r}: expected I/N with 1 ≤ I ≤ N, e.g. 2/4", param_hint="--shard"
        )
    return int(i), int(n)


_PARSE = {"fractions": _fractions, "offsets": _split, "subsets": _subsets}  # flags given as text


def _fields(flags: dict) -> dict:
    """The spec fields given as flags."""
    return {k: _parsed(k, v) for k, v in flags.items() if v is not None and v != []}


def _parsed(key: str, value):
    return (
        _PARSE[key](value) if key in _PARSE and value != "" else value
    )  # "" is refused by the spec


def _spec(spec_file: Optional[Path], flags: dict):
    """The spec file's values, overridden by the flags given, with the sample defaults."""

    values = replay.load_toml(spec_file) if spec_file else {}
    values.update(flags)
    _sample_defaults(values)
    return replay.spec_from_mapping(values)


@contextmanager
def _naming(spec_file: Optional[Path]):
    """An error in a sweep given by a spec file names the file (`spec.toml: …`)."""

    try:
        yield
    except HindcastError as exc:
        if spec_file is None or str(spec_file) in str(exc):
            raise
        raise ConfigError(f"{spec_file}: {_bare(str(exc))}") from exc


def _bare(message: str) -> str:
    return message.removeprefix("invalid sweep spec: ")


def _check_writable(folder: Path, flag: str) -> None:
    """The export folder (or the nearest existing folder above it) can be written: refused
    before the run database is opened, so a refused sweep writes nothing."""

    existing = Path(folder)
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        raise ConfigError(f"{flag} {folder}: {existing} is not a folder")
    if existing.exists() and not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"{flag} {folder}: {existing} is not writable")


def _sample_defaults(values: dict) -> None:
    """With no store, the shipped sample; with no forecasters, the baselines and the embedded
    local model (zero-shot and retrieval agent, over the sample archive) on a few markets."""

    if "store" not in values:
        values["store"] = default_sample("markets")
    if "forecasters" not in values:
        values["forecasters"], values["subsets"] = (
            list(replay.SAMPLE_FORECASTERS),
            list(replay.SAMPLE_SUBSETS),
        )
        if "archive" not in values:
            values["archive"] = default_sample("archive")
            _embed_once(values["archive"])


# documents/s of the default embedder on 2 idle cores, for the estimate printed before embedding
# (fp32 on an AVX2-only EPYC: 160-181; bf16 where the CPU has it natively: about 1.4-2x fp32)
EMBED_RATE = {"float32": 160.0, "bfloat16": 250.0}


def _embed_once(archive: Path) -> None:
    """The shipped archive sample's index is built on first use (then a no-op), said first: from
    the vectors shipped with it (the same on every CPU; nothing embedded), else embedded
    (resumable)."""
    snapshot = archives.open_snapshot(archive)
    embedder = archives.get_embedder(archives.embed.default_embedder(snapshot))
    documents, left = archives.pending(snapshot, embedder.name)
    if left == 0:
        return
    found = archives.shipped.find(snapshot, embedder)
    quiet = verbosity() < 0
    ticker = Ticker(
        f"{'indexing' if found else 'embedding'} {snapshot.id}", "headlines", quiet=quiet
    )
    if not quiet:
        say(_embed_notice(snapshot.id, embedder, left, documents, found is not None))
    try:
        archives.build.build(snapshot, embedder, on_progress=ticker.update)
    finally:
        ticker.stop()


def _embed_notice(snapshot: str, embedder, left: int, documents: int, shipped: bool) -> str:
    if shipped:
        return (
            "the default forecasters include a retrieval agent: indexing the shipped archive "
            f"sample once ({left:,} headlines) from the {embedder.name} vectors shipped with it "
            "(nothing to embed, the same on every CPU); later runs reuse it"
        )
    rate = EMBED_RATE.get(embedder.dtype, EMBED_RATE["float32"])
    return (
        "the default forecasters include a retrieval agent: embedding the shipped archive "
        f"sample once ({left:,} of {documents:,} headlines, {embedder.name}, "
        f"{embedder.dtype}) — about {max(1, round(left / rate / 60))} min on 2 "
        "idle cores, longer under load; later runs reuse it (the baselines alone need none: "
        "hindcast sweep -f market -f constant -f base-rate)"
    )


class _Progress:
    """The sweep's progress on stderr, said once the plan is known."""

    def __init__(self, quiet: bool) -> None:
        self.quiet, self.ticker = quiet, Ticker("forecasting", "forecasts", quiet=quiet)

    def on_plan(self, total: int) -> None:
        if not self.quiet:
            say(f"{total:,} forecasts to make now")
        self.ticker.update(0, total)


def _report(result, as_json: bool = False) -> None:
    if as_json:
        import json

        print(json.dumps(result.to_json(), indent=2, ensure_ascii=False, allow_nan=False))
        return
    console = out_console()
    state = "resumed" if result.resumed else "new"
    console.print(
        f"run {result.run_id} ({state}): {result.markets} markets, {result.planned} forecasts "
        f"planned, {result.executed} made now, "
        + (f"{result.by_others} by a concurrent sweep, " if result.by_others else "")
        + f"{result.planned - result.executed - result.by_others} already stored"
    )
    console.print(leaderboard_table(result.board))
    for kind, path in result.paths.items():
        console.print(f"{kind}: {path}")
