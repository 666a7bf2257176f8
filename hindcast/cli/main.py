"""The `hindcast` command. Sub-apps live in sibling modules; heavy imports stay inside commands."""

from __future__ import annotations

import sys

import typer

from hindcast import __version__
from hindcast.cli.common import EXIT_ERROR, EXIT_OK, EXIT_USAGE

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
    """Console entry point: every error becomes one line on stderr and an exit code
    (0 ok · 1 error · 2 usage · 3 lock held · 4 stopped, resumable). `HINDCAST_DEBUG=1`
    shows the traceback of an unexpected error."""
    sys.exit(guarded(app))


def guarded(command) -> int:
    """Run a click/typer app; map whatever escapes it to (one line on stderr, exit code)."""
    import os

    from hindcast.errors import HindcastError

    try:
        code = command(standalone_mode=False)  # typer returns an Exit's code, else the command's value
        return code if isinstance(code, int) else EXIT_OK
    except typer.Abort:
        return _say("interrupted; what was stored is kept — re-run the same command to resume", 130)
    except typer.TyperException as exc:  # usage (click's errors, vendored by typer): one line, not a box
        return _usage(exc)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_ERROR)
    except HindcastError as exc:
        return _say(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        return _say("interrupted; what was stored is kept — re-run the same command to resume", 130)
    except OSError as exc:  # a read-only folder, a full disk, a missing file …
        where = f" {exc.filename}" if exc.filename else ""
        return _say(f"{exc.strerror or type(exc).__name__}:{where}", EXIT_ERROR)
    except Exception as exc:  # a defect of ours: still one line, the traceback on request
        if os.environ.get("HINDCAST_DEBUG"):
            raise
        return _say(f"unexpected {type(exc).__name__}: {exc} (set HINDCAST_DEBUG=1 for the traceback)", EXIT_ERROR)


def _usage(exc) -> int:
    if type(exc).__name__ == "NoArgsIsHelpError":  # the help was printed already
        return EXIT_USAGE
    context = getattr(exc, "ctx", None)
    hint = f" (see '{context.command_path} --help')" if context is not None else ""
    return _say(f"{exc.format_message()}{hint}", getattr(exc, "exit_code", 2))


def _say(message: str, code: int) -> int:
    first, *rest = str(message).splitlines() or [""]
    print(f"hindcast: error: {first}", file=sys.stderr)
    for line in rest:  # InputFormatError lists its rows under the one line
        print(line, file=sys.stderr)
    return code
