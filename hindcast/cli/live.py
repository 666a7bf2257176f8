"""`hindcast live …`: the service's live arm — `verify` a forecast log, `repair` what a killed tick
left in it, `report` the backtest–live gap (docs/live.md)."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Literal, Optional, Self, Type

import typer

from hindcast import schedule
from hindcast.cli.common import EXIT_ERROR, fail
from hindcast.errors import HindcastError

app = typer.Typer(
    help="The live arm: verify its hash-chained forecast log, report the backtest–live gap.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@app.command("verify")
def verify_command(
    log: Path = typer.Argument(..., help="The live forecast log (JSON lines)."),
    config: Path | None = typer.Option(
        None,
        "--config",
        help="The service config: also check the head it recorded and the run store's rows.",
    ),
) -> None:
    """Check the log's hash chain (and, with --config, its recorded head and the stored
    forecasts); exit 1 naming the first bad record."""
    if not log.is_file():
        raise fail(f"live log {log}: no such file", EXIT_ERROR)
    with _guarded(config):
        verified = schedule.live.verify(log, schedule.load(config) if config else None)
    if not verified.ok:
        number, why = verified.bad or (0, "")
        raise fail(f"live log {log}: record {number}: {why}", EXIT_ERROR)
    typer.echo(
        f"live log {log}: {len(verified.records)} record(s), chain intact, head seq "
        f"{verified.head.seq} sha256 {verified.head.sha256}"
    )


@app.command("repair")
def repair_command(
    config: Path = typer.Option(Path("hindcast.toml"), "--config", help="The service config."),
) -> None:
    """Settle what a tick killed half-way left in the live log (what every tick does first):
    an unfinished last line, or a last record never stored, is cut (kept in <log>.dropped); a
    last record the run store holds becomes the recorded head. Anything else changes nothing."""
    with _guarded(config):
        done = schedule.live.repair_config(schedule.load(config))
    for line in done or ["nothing to repair"]:
        typer.echo(f"live log: {line}")


@app.command("report")
def report_command(
    config: Path = typer.Option(Path("hindcast.toml"), "--config", help="The service config."),
) -> None:
    """Per forecaster: live against matched hindcast Brier (the gap, with a market-clustered
    interval), and the sweep's hindcast Brier by regime against live."""
    with _guarded(config):
        text = schedule.live_report.text(schedule.live_report.for_config(schedule.load(config)))
    typer.echo(text)


class _guarded:
    """Our errors as one line with their exit code; a database error names the config's run
    database (these commands open it read-only: nothing is created or changed)."""

    def __init__(self, config: Path | None) -> None:
        self.config = config

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> Literal[False]:
        from sqlalchemy.exc import SQLAlchemyError

        if isinstance(exc, HindcastError):
            raise fail(str(exc), exc.exit_code)
        if isinstance(exc, SQLAlchemyError):
            reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
            raise fail(f"the run database of {self.config}: {reason}", EXIT_ERROR)
        return False
