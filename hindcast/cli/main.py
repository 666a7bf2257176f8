"""The `hindcast` command. Sub-apps live in sibling modules; heavy imports stay inside commands."""

from __future__ import annotations

import sys

import typer

from hindcast import __version__
from hindcast.cli import (
    analyze,
    audit,
    catalog,
    inspect_cli,  # Inspect AI itself is imported only when the command runs
    leaderboard,
    runs,
    sweep,
    trade,
)
from hindcast.cli.common import ENVIRONMENT, EXIT_ERROR, EXIT_OK, EXIT_USAGE, VERBOSITY
from hindcast.errors import HindcastError
from hindcast.http import redact


def _epilog() -> str:
    """Exit codes and environment variables, one per line (\b keeps click from rewrapping)."""
    codes = [
        "0 ok",
        "1 error in input, config or run",
        "2 usage",
        "3 lock held by another instance",
        "4 stopped by a budget, a circuit breaker or an unreachable or stopped Ray cluster "
        "(re-run to resume)",
    ]
    env = [f"{name}: {text}" for name, text in ENVIRONMENT.items()]
    return (
        "\b\nExit codes:\n  "
        + "\n  ".join(codes)
        + "\n\n\b\nEnvironment:\n  "
        + "\n  ".join(env)
        + "\n\n\b\nShell completion: hindcast --install-completion (bash, zsh, fish, PowerShell),\n"
        "or hindcast --show-completion to install it yourself."
    )


app = typer.Typer(
    name="hindcast",
    help="Judge forecasters on resolved prediction markets replayed at a past instant t0.",
    epilog=_epilog(),
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        print(f"hindcast {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    verbose: int = typer.Option(
        0,
        "--verbose",
        "-v",
        count=True,
        help="More detail on stderr: debug logging, the traceback of an unexpected error.",
    ),
    quiet: bool = typer.Option(
        False,
        "--quiet",
        "-q",
        help="No progress bars or informational lines on stderr (errors still print).",
    ),
) -> None:
    """hindcast: no look-ahead hindcasts of forecasters on resolved markets."""
    level = -1 if quiet else verbose
    ctx.meta[VERBOSITY] = (
        level  # shared by every sub-command's context; read with common.verbosity()
    )
    if isinstance(
        ctx.obj, dict
    ):  # `guarded` passes its own dict: it reads the level after an error
        ctx.obj[VERBOSITY] = level
    _logging(level)


def _logging(level: int) -> None:
    import logging

    if level:  # the default leaves logging as it is
        logging.basicConfig(format="%(levelname)s %(name)s: %(message)s")
        logging.getLogger().setLevel(logging.DEBUG if level > 0 else logging.ERROR)


def _register() -> None:
    app.command(name="sweep")(sweep.sweep)
    app.command(name="rescore")(runs.rescore)
    app.command(name="analyze")(analyze.analyze)
    app.command(name="trade")(trade.trade)
    app.command(name="audit")(audit.audit)
    app.command(name="leaderboard")(leaderboard.leaderboard)
    app.command(name="forecasters")(catalog.forecasters)
    app.command(name="models")(catalog.models)
    app.command(name="import-inspect")(inspect_cli.import_inspect)
    for module_name in ("runs", "markets", "archive", "schedule", "live", "probe", "mcp"):
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


def guarded(command: typer.Typer) -> int:
    """Run a click/typer app; map whatever escapes it to (one line on stderr, exit code)."""
    import os

    state: dict = {}  # the root callback records -v/-q here, still readable after an error
    try:
        code = command(
            standalone_mode=False, obj=state
        )  # typer returns an Exit's code, else the command's value
        return code if isinstance(code, int) else EXIT_OK
    except typer.Abort:
        return _say("interrupted; what was stored is kept — re-run the same command to resume", 130)
    except (
        typer.TyperException
    ) as exc:  # usage (click's errors, vendored by typer): one line, not a box
        return _usage(exc)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else EXIT_ERROR)
    except HindcastError as exc:
        return _say(str(exc), exc.exit_code)
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM where a command turns it into one
        what = str(exc) or "interrupted"
        return _say(f"{what}; what was stored is kept — re-run the same command to resume", 130)
    except OSError as exc:  # a read-only folder, a full disk, a missing file …
        where = f" {exc.filename}" if exc.filename else ""
        return _say(f"{exc.strerror or type(exc).__name__}:{where}", EXIT_ERROR)
    except Exception as exc:  # a defect of ours: still one line, the traceback on request
        if os.environ.get("HINDCAST_DEBUG") or state.get(VERBOSITY, 0) > 0:
            import traceback

            traceback.print_exc()
            return _say(f"unexpected {type(exc).__name__}: {exc}", EXIT_ERROR)
        return _say(
            f"unexpected {type(exc).__name__}: {exc} (set HINDCAST_DEBUG=1 or -v for the "
            "traceback)",
            EXIT_ERROR,
        )


def _usage(exc: typer.TyperException) -> int:
    if type(exc).__name__ == "NoArgsIsHelpError":  # the help was printed already
        return EXIT_USAGE
    context = getattr(exc, "ctx", None)
    hint = f" (see '{context.command_path} --help')" if context is not None else ""
    return _say(f"{exc.format_message()}{hint}", getattr(exc, "exit_code", 2))


def _say(message: str, code: int) -> int:

    first, *rest = redact(message).splitlines() or [""]
    print(f"hindcast: error: {first}", file=sys.stderr)
    for line in rest:  # InputFormatError lists its rows under the one line
        print(line, file=sys.stderr)
    return code
