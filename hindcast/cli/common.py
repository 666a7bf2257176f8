"""What every CLI sub-app shares: the console, the wall clock, and error → exit-code mapping."""

from __future__ import annotations

import sys
from datetime import datetime, timezone

import typer

EXIT_OK = 0
EXIT_ERROR = 1  # a HindcastError: bad input or config, refused cutoff, integrity failure …
EXIT_USAGE = 2  # typer/click usage errors
EXIT_LOCKED = 3  # another instance holds the lock (LockHeldError)
EXIT_STOPPED = 4  # stopped by a circuit breaker or a budget; re-run the same command to resume (StoppedError)


def now() -> datetime:
    """The wall clock. Only the CLI and the scheduler read it; the library receives it."""
    return datetime.now(timezone.utc)


def fail(message: str, code: int = EXIT_ERROR) -> typer.Exit:
    """Print `hindcast: error: …` on stderr and return the Exit to raise."""
    print(f"hindcast: error: {message}", file=sys.stderr)
    return typer.Exit(code)


def default_sample(kind: str):
    """`markets/sample` or `archive/sample`: in the working directory, else in the source checkout."""
    from pathlib import Path

    checkout = Path(__file__).resolve().parents[2]
    for base in (Path.cwd(), checkout):
        if (base / kind / "sample").is_dir():
            return base / kind / "sample"
    raise fail(f"the shipped sample {kind}/sample is not here (it comes with the source checkout); pass a directory")
