"""`hindcast schedule …`: the re-run service — `run` (long-running, APScheduler), `once`
(every job once, for cron), `status`."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from types import TracebackType
from typing import Optional, Type

import typer

from hindcast import schedule
from hindcast.cli.common import EXIT_ERROR, EXIT_OK, EXIT_STOPPED, EXIT_USAGE, fail, now, verbosity
from hindcast.errors import HindcastError
from hindcast.timeutil import parse_utc

app = typer.Typer(
    help="The re-run service: pull, ingest, sweep and export as markets resolve.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
CONFIG = typer.Option(
    Path("hindcast.toml"), "--config", help="Service config (see hindcast.example.toml)."
)


@app.command("run")
def run_command(config: Path = CONFIG) -> None:
    """Run the service until SIGTERM/SIGINT: jobs on their \\[jobs] intervals,
    persisted in the run database."""
    import threading

    stop = threading.Event()
    _on_stop_signals(stop.set)
    with _guarded(config), schedule.running(_config(config), "run") as service:
        schedule.serve(service, stop)


@app.command("once")
def once_command(
    config: Path = CONFIG,
    at: str | None = typer.Option(
        None,
        "--now",
        hidden=True,
        help="Act as if it were this instant (tests, backfills) [default: the clock].",
    ),
) -> None:
    """Run every configured job once (pull, inbox, sweeps, export) and exit: 0 when every job
    was ok, 4 when the only ones that were not were stopped by a budget or circuit breaker
    (resumable), else 1."""
    instant = _instant(at) if at else now()
    with (
        _guarded(config),
        schedule.running(_config(config), "once", clock=lambda: instant) as service,
    ):
        _on_stop_signals(service.stopping.set)
        statuses = service.once(instant)
    for job, status in statuses.items():
        typer.echo(f"{job}: {status}")
    raise typer.Exit(once_exit_code(statuses.values()))


def once_exit_code(statuses) -> int:
    """0 all ok · 4 the others were stopped (resumable) · 1 any failed, interrupted or skipped."""
    others = {s for s in statuses if s != "ok"}
    return EXIT_OK if not others else EXIT_STOPPED if others == {"stopped"} else EXIT_ERROR


@app.command("status")
def status_command(
    config: Path = CONFIG,
    as_json: bool = typer.Option(False, "--json", help="JSON instead of text."),
) -> None:
    """Last and next runs of each job, watermarks, sweeps and recent failures (read-only)."""
    with _guarded(config):
        info = schedule.status.report(_config(config))
    typer.echo(
        json.dumps(info, indent=1, ensure_ascii=False) if as_json else schedule.status.render(info)
    )


def _on_stop_signals(stop) -> None:
    """SIGTERM and SIGINT ask for a graceful stop (no new job; a sweep stops after its
    in-flight forecasts), instead of ending the process at once."""
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop())


def _config(path: Path):
    return schedule.load(path)


def _instant(text: str):

    try:
        return parse_utc(text)
    except ValueError as exc:
        raise fail(f"--now {text!r}: {exc}", EXIT_USAGE)


class _guarded:
    """Every error → one line `hindcast: error: …` and its exit code (`HindcastError.exit_code`:
    1, 3 when another instance holds the lock, 4 stopped; an OSError names its file; anything
    else is one line too, its traceback only with HINDCAST_DEBUG=1), also when this app runs on
    its own (`python -m hindcast.cli.schedule`, tests) rather than under `hindcast`. A database
    error names the run database of the config."""

    def __init__(self, config: Path) -> None:
        self.config = config

    def __enter__(self):
        return self

    def __exit__(
        self,
        kind: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool:
        import os

        if (
            exc is None
            or not isinstance(exc, Exception)
            or isinstance(exc, (typer.Exit, typer.Abort, typer.TyperException))
        ):
            return False
        if isinstance(exc, HindcastError):
            raise fail(str(exc), exc.exit_code) from None
        if isinstance(exc, OSError):
            where = f" {exc.filename}" if exc.filename else ""
            raise fail(f"{exc.strerror or type(exc).__name__}:{where}", EXIT_ERROR) from None
        if type(exc).__module__.startswith("sqlalchemy"):
            reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
            raise fail(  # fail() redacts
                f"run database {_config(self.config).db_url.removeprefix('sqlite:///')}: "
                f"{type(exc).__name__}: {reason}",
                EXIT_ERROR,
            ) from None

        if os.environ.get("HINDCAST_DEBUG") or verbosity() > 0:  # `hindcast` prints the traceback
            return False
        raise fail(
            f"unexpected {type(exc).__name__}: {exc} "
            "(set HINDCAST_DEBUG=1 for the traceback)".splitlines()[0],
            EXIT_ERROR,
        ) from None


if __name__ == "__main__":  # `python -m hindcast.cli.schedule …`
    sys.exit(app())
