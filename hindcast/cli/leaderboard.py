"""`hindcast leaderboard RUN [RUN...]`: score stored runs and export tables and the HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from hindcast import audit, runs, scoring
from hindcast.api import export
from hindcast.cli.common import DB_HELP, RECALL_FILE_HELP, RECALL_HELP, db_url, sqlite_path
from hindcast.cli.console import leaderboard_table, out_console
from hindcast.errors import RunStoreError


def leaderboard(
    runs: list[str] = typer.Argument(
        ...,
        metavar="RUN [RUN...]",
        help="Run ids (several: compared on matched (market, t0) rows).",
    ),
    formats: list[str] = typer.Option(
        ["csv", "json", "parquet", "md", "html"],
        "--format",
        help="csv|json|parquet|md|html|forecastbench (repeatable or comma-separated; "
        "forecastbench: ForecastBench forecast-set JSON of the questions imported from its "
        "question sets).",
    ),
    out: Path = typer.Option(
        ..., "--out", help="Where the exports go (a folder; created if needed)."
    ),
    by: Optional[str] = typer.Option(
        None,
        "--by",
        help="Slice: topic|fraction|regime|coverage|policy|venue [default: none, one row "
        "per forecaster].",
    ),
    baseline: str = typer.Option(
        "market price",
        "--baseline",
        help="Baseline of the recovered/regressed figure: a forecaster or 'market price'.",
    ),
    tolerance: float = typer.Option(
        0.01,
        "--tolerance",
        min=0.0,
        help="Brier margin for a market to count as recovered or regressed.",
    ),
    db: Optional[str] = typer.Option(
        None, "--db", metavar="PATH|URL", help=DB_HELP + " Read, never created."
    ),
    title: Optional[str] = typer.Option(
        None, "--title", help="Report title [default: hindcast leaderboard — runs …]."
    ),
    prices: Optional[Path] = typer.Option(
        None,
        "--prices",
        metavar="FILE",
        help="Price table (TOML, dollars per million tokens) laid over the shipped one "
        "for the cost column [default: the shipped table only].",
    ),
    archive: Optional[Path] = typer.Option(
        None,
        "--archive",
        metavar="DIR",
        help="Archive folder holding the "
        "snapshots the runs read, for the report's forecast viewer [default: the "
        "folder each run recorded; documents by id when it is gone].",
    ),
    exclude_recalled: bool = typer.Option(False, "--exclude-recalled", help=RECALL_HELP),
    recall: Optional[Path] = typer.Option(None, "--recall", metavar="FILE", help=RECALL_FILE_HELP),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="One JSON document on stdout (every column of every row, "
        "the files written) instead of the table.",
    ),
) -> None:
    """Score stored runs (no model is called) and write the leaderboard, the per-forecast
    table and the report."""
    table = scoring.load_prices(prices)  # a bad price file stops here, before any file is written
    formats = [f.strip() for item in formats for f in item.split(",") if f.strip()]
    store = open_existing(db)
    results = (recall or audit.default_recall_path(db_url(db))) if exclude_recalled else None
    result = export(
        store,
        runs,
        out,
        formats,
        title=title,
        by=by,
        baseline=baseline,
        tolerance=tolerance,
        prices=table,
        archive=archive,
        recall=results,
    )
    print_json(result, runs) if as_json else _report(result)


def open_existing(db: str | None):
    """The run database --db names (a path or a URL; default $HINDCAST_DB, else runs/hindcast.db),
    opened read-only: refused when it is a SQLite file that does not exist, is not a run
    database, or needs a migration (reading never creates, adds or migrates anything)."""
    url = db_url(db)
    path = sqlite_path(url)
    if path is not None and not path.is_file():
        raise RunStoreError(
            f"no run database at {path} (give one with --db PATH|URL or $HINDCAST_DB)"
        )
    return runs.RunStore(url, read_only=True)


def print_json(result, runs: list[str]) -> None:
    """The leaderboard as one JSON document: nothing else goes to stdout."""
    import json
    import math
    from dataclasses import asdict

    def plain(value):
        return None if isinstance(value, float) and not math.isfinite(value) else value

    rows = [{k: plain(v) for k, v in asdict(row).items()} for row in result.board]
    document = {
        "runs": list(runs),
        "note": result.combined.note(),
        "rows": rows,
        "paths": {kind: str(path) for kind, path in result.paths.items()},
    }
    typer.echo(json.dumps(document, indent=1, ensure_ascii=False, allow_nan=False))


def _report(result) -> None:
    console = out_console()
    console.print(result.combined.note())
    console.print(leaderboard_table(result.board))
    for kind, path in result.paths.items():
        console.print(f"{kind}: {path}")
