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


class BlockingServer:
    """A ThreadingHTTPServer on 127.0.0.1 whose handler can hold chosen requests.

    `block(predicate)` makes matching requests wait until `release()` (a test kills its
    client meanwhile). Subclasses give `handler_for(self)` → a BaseHTTPRequestHandler class.
    """

    never = staticmethod(lambda *args: False)

    def __init__(self, handler_factory):
        import threading
        from http.server import ThreadingHTTPServer

        self.blocking = self.never
        self.blocked, self.released = threading.Event(), threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler_factory(self))
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def block(self, predicate) -> None:
        self.blocked.clear()
        self.released.clear()
        self.blocking = predicate

    def release(self) -> None:
        self.blocking = self.never
        self.released.set()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
        self.httpd.shutdown()
        self.httpd.server_close()
