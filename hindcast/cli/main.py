"""The `hindcast` command. Sub-apps live in sibling modules; heavy imports stay inside commands."""

from __future__ import annotations

import sys

import typer

from hindcast import __version__
from hindcast.cli.common import EXIT_ERROR

app = typer.Typer(
    name="hindcast",
    help="Judge forecasters on resolved prediction markets replayed at a past instant t0.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        print(f"hindcast {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """hindcast: no look-ahead hindcasts of forecasters on resolved markets."""


def _register() -> None:
    from hindcast.cli import leaderboard, runs, sweep

    app.command(name="sweep")(sweep.sweep)
    app.command(name="rescore")(runs.rescore)
    app.command(name="leaderboard")(leaderboard.leaderboard)
    for module_name in ("runs", "markets", "archive", "schedule"):
        try:
            module = __import__(f"hindcast.cli.{module_name}", fromlist=["app"])
        except ModuleNotFoundError as exc:
            if exc.name != f"hindcast.cli.{module_name}":
                raise
            continue
        app.add_typer(module.app, name=module_name)


_register()


def run() -> None:
    """Console entry point: HindcastError → a one-line message and exit code 1."""
    from hindcast.errors import HindcastError

    try:
        app()
    except HindcastError as exc:
        print(f"hindcast: error: {exc}", file=sys.stderr)
        sys.exit(EXIT_ERROR)
