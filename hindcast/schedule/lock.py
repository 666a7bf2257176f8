"""One service per run database: an exclusive `flock` on a lock file.

The kernel drops the lock when the holder dies (even by SIGKILL), so a crash never leaves
a stale lock behind. The holder writes its pid and start instant into the file so that a
second instance can say who is running.
"""

from __future__ import annotations

import fcntl
import json
import os
from datetime import datetime
from pathlib import Path

from hindcast.schedule.config import ScheduleError
from hindcast.timeutil import iso


class AlreadyRunning(ScheduleError):
    """Another scheduler holds the lock of this run database."""


class InstanceLock:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.handle = None

    def acquire(self, command: str, wall: datetime) -> InstanceLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise AlreadyRunning(f"another hindcast scheduler is running ({describe(holder(self.path))}); "
                                 f"it holds {self.path}. Stop it first (SIGTERM), or wait for it to finish") from None
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "command": command, "since": iso(wall)}) + "\n")
        handle.flush()
        self.handle = handle
        return self

    def release(self) -> None:
        if self.handle is not None:
            fcntl.flock(self.handle, fcntl.LOCK_UN)
            self.handle.close()
            self.handle = None

    def __enter__(self) -> InstanceLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def holder(path: Path) -> dict | None:
    """Who holds the lock now (pid, command, since), or None when nobody does."""
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


def describe(info: dict | None) -> str:
    if not info:
        return "holder unknown"
    return f"pid {info.get('pid')}, `schedule {info.get('command')}` since {info.get('since')}"


def _read(handle) -> dict:
    try:
        return json.loads(handle.read() or "{}")
    except json.JSONDecodeError:
        return {}
