"""What every CLI sub-app shares: the console, the wall clock, and error → exit-code mapping."""

from __future__ import annotations

import sys
from datetime import datetime, timezone

import typer

from hindcast import runs
from hindcast.http import redact
from hindcast.timeutil import parse_utc

EXIT_OK = 0
EXIT_ERROR = 1  # a HindcastError: bad input or config, refused cutoff, integrity failure …
EXIT_USAGE = 2  # typer/click usage errors
EXIT_LOCKED = 3  # another instance holds the lock (LockHeldError)
EXIT_STOPPED = (
    4  # stopped by a circuit breaker or a budget; re-run the same command to resume (StoppedError)
)
RECALL_HELP = (
    "Leave out the rows of every (model, market) pair the memorisation probe (`hindcast probe "
    "recall`) found the model recalls; a note says how many [default: off]."
)
RECALL_FILE_HELP = (
    "Probe results read by --exclude-recalled [default: recall.json beside the run database; "
    "a PostgreSQL run database's table probe_answers]."
)


def now() -> datetime:
    """The wall clock. Only the CLI and the scheduler read it; the library receives it."""
    return datetime.now(timezone.utc)


CREATED_ENV = "HINDCAST_CREATED_AT"


def run_created(env=None) -> datetime | None:
    """The creation instant `hindcast sweep` records for a new run: $HINDCAST_CREATED_AT (an ISO
    8601 instant with its zone), else None (the wall clock). Pinned, a sweep's export is the same
    to the byte whenever and by whichever process the run was swept; instants the command
    logs (outages, leases) keep the wall clock."""
    import os

    text = (os.environ if env is None else env).get(CREATED_ENV, "").strip()
    if not text:
        return None
    try:
        if not any(sep in text for sep in "Tt "):  # a bare date: no time, so no zone either
            raise ValueError("a date without a time and zone")
        return parse_utc(text)
    except ValueError as exc:
        raise fail(f"{CREATED_ENV}={text!r} is not an ISO 8601 instant with a zone ({exc})")


def fail(message: str, code: int = EXIT_ERROR) -> typer.Exit:
    """Print `hindcast: error: …` on stderr (credentials redacted) and return the Exit to raise."""

    print(f"hindcast: error: {redact(message)}", file=sys.stderr)
    return typer.Exit(code)


def default_sample(kind: str):
    """`markets/sample` or `archive/sample`: in the working directory, else
    in the source checkout."""
    from pathlib import Path

    checkout = Path(__file__).resolve().parents[2]
    for base in (Path.cwd(), checkout):
        if (base / kind / "sample").is_dir():
            return base / kind / "sample"
    raise fail(
        f"the shipped sample {kind}/sample is not here (it comes with the source checkout); "
        "pass a directory"
    )


# -- the run database: a path or a URL, everywhere ----------------------------------------------
DB_ENV = "HINDCAST_DB"
DEFAULT_DB = "runs/hindcast.db"
DB_HELP = (
    f"Run database: a file path (SQLite) or a SQLAlchemy URL [default: ${DB_ENV}, else "
    f"{DEFAULT_DB}]."
)

# Environment variables hindcast reads, as `hindcast --help` lists them.
ENVIRONMENT = {
    DB_ENV: f"run database (path or URL) when --db is not given [default: {DEFAULT_DB}]",
    CREATED_ENV: "creation instant (ISO 8601, e.g. 2026-01-01T00:00:00Z) `sweep` records for a new "
    "run, for an export reproducible to the byte [default: the wall clock]",
    "HINDCAST_DEBUG": "1 prints the traceback of an unexpected error (as -v does)",
    "OPENAI_API_KEY": "key of openai:MODEL forecasters (others: key_env=VARIABLE in the spec)",
}


def db_url(value: str | None, env=None) -> str:
    """--db (a path or a URL) → a database URL (`hindcast.runs.db_url`, loaded through the
    face only when a command calls it, so `--help` stays light)."""
    return runs.db_url(value, env)


def sqlite_path(url: str):
    """The file of a `sqlite:///…` URL, or None for any other database."""
    return runs.db_file(url)


# -- verbosity: -v / -q on the root command, kept in the click context --------------------------
VERBOSITY = "hindcast.verbosity"


def verbosity() -> int:
    """-1 with -q, 0 by default, 1 and more with -v (-vv …); read from the current click context."""
    from typer._click.globals import get_current_context

    ctx = get_current_context(silent=True)
    return int(ctx.meta.get(VERBOSITY, 0)) if ctx is not None else 0


def info(message: str) -> None:
    """An informational line on stderr, hidden by -q."""
    if verbosity() >= 0:
        print(message, file=sys.stderr)
