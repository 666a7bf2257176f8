"""Shared test helpers: where the real data lives, how to run the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("HINDCAST_SHARED_DATA", ROOT.parent / "shared" / "data"))
SAMPLE_MARKETS = ROOT / "markets" / "sample"
SAMPLE_ARCHIVE = ROOT / "archive" / "sample"
UTC = timezone.utc


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def run_cli(*args: str, cwd: Path | None = None, check: bool = False) -> subprocess.CompletedProcess:
    """The real `hindcast` command, as a user types it, in a subprocess."""
    proc = subprocess.run([sys.executable, "-m", "hindcast", *args], cwd=cwd or ROOT, capture_output=True,
                          text=True, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(f"hindcast {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


def days(n: float) -> timedelta:
    return timedelta(days=n)
