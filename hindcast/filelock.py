"""An exclusive lock on a file that says who holds it: `flock`, so the kernel drops it when
the holder dies (even by SIGKILL) and a crash never leaves a stale lock behind. The holder
writes a small JSON record (pid, what, since) into the file for the next comer to read."""

from __future__ import annotations

import fcntl
import json
from pathlib import Path

from hindcast.errors import Busy


class FileLock:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.handle = None

    def acquire(self, record: dict) -> FileLock:
        """Take the lock at once or raise Busy; then write `record` into the file."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise Busy(self.path, holder(self.path)) from None
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(record) + "\n")
        handle.flush()
        self.handle = handle
        return self

    def release(self) -> None:
        """Empty the record, then unlock: a file the lock guards is left as it was found (a
        failed pull into a store leaves every byte of it, its lock file included, unchanged)."""
        if self.handle is not None:
            self.handle.seek(0)
            self.handle.truncate()
            self.handle.flush()
            fcntl.flock(self.handle, fcntl.LOCK_UN)
            self.handle.close()
            self.handle = None

    def __enter__(self) -> FileLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def holder(path: Path) -> dict | None:
    """Who holds the lock now (their record), or None when nobody does."""
    try:
        handle = open(path, encoding="utf-8")
    except FileNotFoundError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read(handle)
        fcntl.flock(handle, fcntl.LOCK_UN)
        return None


def _read(handle) -> dict:
    try:
        return json.loads(handle.read() or "{}")
    except json.JSONDecodeError:
        return {}
