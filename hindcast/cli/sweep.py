"""`hindcast sweep`: replay forecasters on markets at cutoffs, store the run, print the leaderboard."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from hindcast.cli.common import default_sample, fail, now


def _floats(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError as exc:
        raise typer.BadParameter(f"{text!r} is not a comma-separated list of numbers") from exc


def sweep(
    markets: Optional[Path] = typer.Option(None, "--markets", help="Market store directory [default: the shipped sample]."),
    store_version: Optional[str] = typer.Option(None, "--store-version", help="Store version id [default: LATEST]."),
    market_id: list[str] = typer.Option([], "--market", "-m", help="Only this market id (repeatable)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="At most N markets (first by id)."),
    forecasters: str = typer.Option("market,constant,base-rate", "--forecasters", "-f", help="Comma-separated forecaster specs."),
    fractions: str = typer.Option("0.25,0.5,0.75,1.0", "--fractions", help="Lifetime fractions (1.0 = the day before resolution)."),
    at: list[str] = typer.Option([], "--at", help="Explicit cutoff instant, ISO UTC (repeatable)."),
    out: Path = typer.Option(Path("runs"), "--out", help="Where the run database and leaderboards go."),
    db: Optional[str] = typer.Option(None, "--db", help="Run database URL [default: sqlite:///OUT/hindcast.db]."),
    concurrency: int = typer.Option(8, "--concurrency", min=1, help="Forecasts in flight at once."),
) -> None:
    """Replay forecasters on resolved markets at past cutoffs, score them, print the leaderboard."""
    from hindcast import api
    from hindcast.replay.spec import ReplaySpec
    from hindcast.runs.store import RunStore, default_url
    from hindcast.timeutil import parse_utc

    try:
        instants = tuple(parse_utc(t) for t in at)
    except ValueError as exc:
        raise fail(f"--at: {exc}") from exc
    spec = ReplaySpec(markets=markets or default_sample("markets"), store_version=store_version, market_ids=tuple(market_id),
                      limit=limit, forecasters=tuple(f.strip() for f in forecasters.split(",") if f.strip()),
                      fractions=_floats(fractions), instants=instants, concurrency=concurrency)
    store = RunStore(db or default_url(out))
    result = _with_progress(lambda on_plan, advance: api.sweep(spec, store=store, out_dir=out, now=now(),
                                                               on_plan=on_plan, advance=advance))
    _report(result)


def _with_progress(job):
    """Run job(on_plan, advance) with a progress bar on stderr, shown once the plan is known."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from hindcast.cli.console import err_console

    bar = Progress(TextColumn("forecasting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=err_console())
    task = bar.add_task("forecasting", total=None)

    def on_plan(total: int) -> None:
        bar.update(task, total=total)
        bar.start()

    try:
        return job(on_plan, lambda: bar.advance(task))
    finally:
        bar.stop()


def _report(result) -> None:
    from hindcast.cli.console import leaderboard_table, out_console

    console = out_console()
    state = "resumed" if result.resumed else "new"
    console.print(f"run {result.run_id} ({state}): {result.markets} markets, {result.planned} forecasts planned, "
                  f"{result.executed} made now, {result.planned - result.executed} already stored")
    console.print(leaderboard_table(result.board))
    for kind, path in result.paths.items():
        console.print(f"{kind}: {path}")
