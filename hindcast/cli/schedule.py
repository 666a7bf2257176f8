"""`hindcast schedule …`: the re-run service — `run` (long-running, APScheduler), `once`
(every job once, for cron), `status`."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import typer

from hindcast.cli.common import EXIT_ERROR, fail, now

app = typer.Typer(help="The re-run service: pull, ingest, sweep and export as markets resolve.",
                  no_args_is_help=True)
CONFIG = typer.Option(Path("hindcast.toml"), "--config", help="Service config (see hindcast.example.toml).")
EXIT_LOCKED = 3  # another scheduler holds the lock of this run database


@app.command("run")
def run_command(config: Path = CONFIG) -> None:
    """Run the service until SIGTERM/SIGINT: jobs on their \\[jobs] intervals, persisted in the run database."""
    import threading

    from hindcast.schedule.service import running, serve

    stop = threading.Event()
    _on_stop_signals(stop.set)
    with _guarded(), running(_config(config), "run") as service:
        serve(service, stop)


@app.command("once")
def once_command(
    config: Path = CONFIG,
    at: str | None = typer.Option(None, "--now", hidden=True,
                                     help="Act as if it were this instant (tests, backfills) [default: the clock]."),
) -> None:
    """Run every configured job once (pull, inbox, sweeps, export) and exit; 1 unless every job was ok."""
    from hindcast.schedule.service import running

    instant = _instant(at) if at else now()
    with _guarded(), running(_config(config), "once", clock=lambda: instant) as service:
        _on_stop_signals(service.stopping.set)
        statuses = service.once(instant)
    for job, status in statuses.items():
        typer.echo(f"{job}: {status}")
    if any(s != "ok" for s in statuses.values()):
        raise typer.Exit(EXIT_ERROR)


@app.command("status")
def status_command(config: Path = CONFIG, as_json: bool = typer.Option(False, "--json", help="JSON instead of text.")) -> None:
    """Last and next runs of each job, watermarks, sweeps and recent failures (read-only)."""
    from hindcast.schedule import status

    with _guarded():
        info = status.report(_config(config))
    typer.echo(json.dumps(info, indent=1, ensure_ascii=False) if as_json else status.render(info))


def _on_stop_signals(stop) -> None:
    """SIGTERM and SIGINT ask for a graceful stop (no new job; a sweep stops after its
    in-flight forecasts), instead of ending the process at once."""
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop())


def _config(path: Path):
    from hindcast.schedule.config import load

    return load(path)


def _instant(text: str):
    from hindcast.timeutil import parse_utc

    try:
        return parse_utc(text)
    except ValueError as exc:
        raise fail(f"--now {text!r}: {exc}", 2)


class _guarded:
    """HindcastError → `hindcast: error: …` and exit 1 (3 when another instance runs), also
    when this app runs on its own (tests, before it is registered in `hindcast`)."""

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        from hindcast.errors import HindcastError
        from hindcast.schedule.lock import AlreadyRunning

        if exc is None or not isinstance(exc, HindcastError):
            return False
        raise fail(str(exc), EXIT_LOCKED if isinstance(exc, AlreadyRunning) else EXIT_ERROR) from None


if __name__ == "__main__":  # `python -m hindcast.cli.schedule …`
    sys.exit(app())
