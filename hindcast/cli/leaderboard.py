"""`hindcast leaderboard RUN [RUN...]`: score stored runs and export tables and the HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def leaderboard(
    runs: list[str] = typer.Argument(..., metavar="RUN [RUN...]", help="Run ids (several: compared on matched (market, t0) rows)."),
    formats: list[str] = typer.Option(["csv", "json", "parquet", "md", "html"], "--format",
                                      help="csv|json|parquet|md|html (repeatable or comma-separated; default: all)."),
    out: Path = typer.Option(..., "--out", help="Folder for the files."),
    by: Optional[str] = typer.Option(None, "--by", help="Slice: topic|fraction|regime|coverage."),
    baseline: str = typer.Option("market price", "--baseline", help="Baseline of the recovered/regressed figure: a forecaster or 'market price'."),
    tolerance: float = typer.Option(0.01, "--tolerance", min=0.0, help="Brier margin for a market to count as recovered or regressed."),
    db: Optional[str] = typer.Option(None, "--db", help="Run database URL [default: sqlite:///runs/hindcast.db]."),
    title: Optional[str] = typer.Option(None, "--title", help="Report title."),
    prices: Optional[Path] = typer.Option(None, "--prices", metavar="FILE",
                                          help="Price table (TOML, dollars per million tokens) laid over the shipped one "
                                               "for the cost column [default: the shipped table only]."),
) -> None:
    """Score stored runs (no model is called) and write the leaderboard, the per-forecast table and the report."""
    from hindcast.leaderboard import publish
    from hindcast.runs.store import RunStore, default_url
    from hindcast.scoring.costs import load_prices

    table = load_prices(prices)  # a bad price file stops here, before any file is written
    store = RunStore(db or default_url(Path("runs")))
    loaded = [_load(store, rid) for rid in runs]
    questions = {market: text for _, q in loaded for market, text in q.items()}
    formats = [f.strip() for item in formats for f in item.split(",") if f.strip()]
    result = publish.publish([run for run, _ in loaded], out, formats, title=title or _title(runs), by=by,
                             baseline=baseline, tolerance=tolerance, questions=questions, prices=table)
    _report(result)


def _load(store, rid: str):
    """A stored run scored against the market store version it recorded, and that version's questions."""
    from hindcast import api
    from hindcast.markets.store import open_version

    recorded = _market_store(store, rid)
    bundle = open_version(Path(recorded["root"]), recorded["version"]).bundle
    return api.load_scored(store, rid, bundle), {m.id: m.question for m in bundle.markets}


def _market_store(store, rid: str) -> dict:
    import json

    return json.loads(store.run(rid).manifest_json)["market_store"]


def _title(runs: list[str]) -> str:
    return f"hindcast leaderboard — run{'s' if len(runs) > 1 else ''} {', '.join(runs)}"


def _report(result) -> None:
    from hindcast.cli.console import leaderboard_table, out_console

    console = out_console()
    console.print(result.combined.note())
    console.print(leaderboard_table(result.board))
    for kind, path in result.paths.items():
        console.print(f"{kind}: {path}")

