"""One run of an outside program (`command:`), bounded in time whatever it and its children do.

`run_program(argv, payload, env, timeout)` starts the program in its own session, writes
`payload` on its stdin, and reads its stdout and stderr through pipes of our own (not through
the event loop's subprocess transport, which waits for every holder of a pipe to close it):

- the program exits within `timeout`: what it wrote is its answer. A child it left behind that
  still holds stdout or stderr gets `GRACE` seconds more to close them, then is killed; it
  never turns an answer into a timeout.
- it runs past `timeout`: its whole process group is killed, and every process still holding
  its stdout or stderr too (a grandchild that called `setsid()` has left the group, not the
  pipe); the run ends at `timeout` (+ `GRACE` at most), answering `None` for the exit code.
- the sweep is interrupted or terminated while it runs: the same kill, synchronously, before
  the interruption goes on (no program outlives the sweep).

What is kept of each stream is at most `KEPT` bytes (the rest is read and dropped).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass, field

GRACE = 1.0  # seconds a finished program's leftover children get to close its pipes
KEPT = 4_000_000  # bytes kept of each stream


@dataclass
class _Pipe:
    """A pipe whose write end the program gets and whose read end the event loop drains."""

    read_fd: int
    write_fd: int
    data: bytearray = field(default_factory=bytearray)
    eof: asyncio.Event = field(default_factory=asyncio.Event)

    @classmethod
    def open(cls) -> _Pipe:
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        return cls(read_fd, write_fd)

    def start(self) -> None:
        os.close(self.write_fd)  # the program holds it now
        self.write_fd = -1
        asyncio.get_running_loop().add_reader(self.read_fd, self._read)

    def _read(self) -> None:
        try:
            chunk = os.read(self.read_fd, 65536)
        except (BlockingIOError, InterruptedError):
            return
        if not chunk:
            self.eof.set()
            asyncio.get_running_loop().remove_reader(self.read_fd)
        elif len(self.data) < KEPT:
            self.data += chunk[: KEPT - len(self.data)]

    def inode(self) -> int:
        return os.fstat(self.read_fd).st_ino

    def close(self) -> None:
        with contextlib.suppress(RuntimeError):
            asyncio.get_running_loop().remove_reader(self.read_fd)
        for fd in (self.read_fd, self.write_fd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)


async def run_program(
    argv: Sequence[str], payload: bytes, env: dict, timeout: float
) -> tuple[int | None, bytes, bytes]:
    """(exit code, or None if it ran past `timeout`; stdout; stderr). OSError: it cannot start."""
    out, err = _Pipe.open(), _Pipe.open()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=out.write_fd,
            stderr=err.write_fd,
            env=env,
            start_new_session=True,
        )
    except BaseException:
        out.close(), err.close()
        raise
    out.start(), err.start()
    try:
        try:
            code: int | None = await asyncio.wait_for(_exited(proc, payload), timeout)
        except TimeoutError:
            code = None
        if code is not None:  # what a leftover child still writes, for GRACE seconds at most
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_closed(out, err), GRACE)
    finally:
        _end(proc, (out, err))
    return code, bytes(out.data), bytes(err.data)


async def _exited(proc, payload: bytes) -> int:
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(payload)
        await proc.stdin.drain()
    with contextlib.suppress(OSError):
        proc.stdin.close()
    return await proc.wait()


async def _closed(*pipes: _Pipe) -> None:
    for pipe in pipes:
        await pipe.eof.wait()


def _end(proc, pipes: Sequence[_Pipe]) -> None:
    """Kill the program's process group and whoever still holds its pipes; close our ends.
    Synchronous, so an interruption cannot stop it halfway."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.stdin.close()  # (a timeout may have cut the write short)
    open_pipes = [p for p in pipes if not p.eof.is_set()]
    if open_pipes:
        for holder in holders({p.inode() for p in open_pipes}):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(holder, signal.SIGKILL)
    for pipe in pipes:
        pipe.close()  # (the event loop's child watcher reaps the program)


def holders(inodes: set[int]) -> list[int]:
    """The processes (other than this one) with a descriptor on one of the pipes `inodes`
    (from /proc; none where there is no /proc)."""
    wanted = {f"pipe:[{i}]" for i in inodes}
    found = []
    for entry in _pids():
        if entry != os.getpid() and _holds(entry, wanted):
            found.append(entry)
    return found


def _pids() -> list[int]:
    try:
        return [int(e) for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return []


def _holds(pid: int, wanted: set[str]) -> bool:
    folder = f"/proc/{pid}/fd"
    try:
        fds = os.listdir(folder)
    except OSError:
        return False
    for fd in fds:
        with contextlib.suppress(OSError):
            if os.readlink(f"{folder}/{fd}") in wanted:
                return True
    return False
