"""One service per run database: an exclusive lock on a lock file (`hindcast.filelock`).

The holder writes its pid, command and start instant into the file so that a second
instance can say who is running.
"""

from __future__ import annotations

import os
from datetime import datetime

from hindcast.errors import AlreadyRunning, Busy
from hindcast.filelock import FileLock, holder
from hindcast.timeutil import iso

__all__ = ["AlreadyRunning", "InstanceLock", "describe", "holder"]


class InstanceLock(FileLock):
    def acquire(self, command: str, wall: datetime) -> InstanceLock:
        try:
            super().acquire({"pid": os.getpid(), "command": command, "since": iso(wall)})
        except Busy as busy:
            raise AlreadyRunning(
                f"another hindcast scheduler is running ({describe(busy.holder)}); "
                f"it holds {self.path}. Stop it first (SIGTERM), or wait for it to finish"
            ) from None
        return self


def describe(info: dict | None) -> str:
    if not info:
        return "holder unknown"
    return f"pid {info.get('pid')}, `schedule {info.get('command')}` since {info.get('since')}"
