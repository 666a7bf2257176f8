"""Who asks which forecast: claims in the run database, and the order of a sharded sweep.

Concurrent sweeps of one run (two terminals, or many machines on one PostgreSQL database)
never ask a forecast twice: each process claims a (forecaster, market, t0, repeat, attempt)
in the run database right before asking it (`RunStore.claim`, a lease of LEASE_SECONDS
renewed while it runs) and releases it once the forecast is stored or given up. Cheap
forecasts (the baselines) are claimed a batch at a time (`Claims.take_batch`: one INSERT for
the batch, then one at a time for any another process holds). A forecast another live process
holds is left to it; when its own work is done, a sweep waits for those to be stored (taking
over any whose claim expired, or whose owner on this machine is no longer running: a kill -9
is resumed at once), so every sweep ends with the whole run stored, and each reports what it
made itself (`SweepResult.executed`) and what another sweep made while it ran
(`SweepResult.by_others`).

Sharding (`shard=(i, n)`, `hindcast sweep --shard I/N`) only orders that work: the i-th of n
processes asks its share first (every n-th planned forecast, from the i-th), then helps with
the rest from the far end (last planned first), so n processes meet rarely on one claim and
any share a dead process left is finished by the others. Nothing but the run database
coordinates them; what is stored, and so every export, does not depend on n or on who made what.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import threading
import time
from collections.abc import Iterable
from datetime import datetime

from hindcast.errors import ConfigError
from hindcast.replay.runner import Task
from hindcast.runs import HELD, TAKEN, RunStore, claim_many, release_many

LEASE_SECONDS = 60.0  # a claim unrenewed this long is taken by another process
WAIT_SECONDS = 0.5  # between looks at forecasts another live sweep is asking


class Claims:
    """This sweep process's claims in the run database (`RunStore.claim`): one owner id (host,
    process id, a random token), a lease clock running from the sweep's `now`, what it made,
    and the forecasts it left to another live sweep of the run."""

    def __init__(
        self, store: RunStore, run_id: str, now: datetime, lease: float = LEASE_SECONDS
    ) -> None:
        self.store, self.run_id, self.lease, self.owner = store, run_id, lease, owner_id()
        self.now = now  # the sweep's instant (an outage's `at`)
        self._base, self._start = now.timestamp(), time.monotonic()
        self._lock = threading.Lock()
        self.made, self.closed = 0, False
        self.held: dict[tuple, Task] = {}  # key → a task another live process holds now
        self.left: set[tuple] = set()  # keys another sweep made (or holds) while this one ran

    def clock(self) -> float:
        return self._base + (time.monotonic() - self._start)

    def take(self, task: Task) -> bool:
        found = self.store.claim(
            self.run_id, task.key, task.attempt, self.owner, self.clock(), self.lease, owner_gone
        )
        if found == TAKEN and self.closed:  # a claim thread that ran on past the sweep's stop:
            self.release(task)  # dropped at once, not held for a whole lease (see `close`)
            return False
        with self._lock:
            if found == HELD:
                self.held[task.key] = task
            if found == TAKEN:
                self.left.discard(task.key)
            else:  # held, or stored since this sweep planned it: another sweep's forecast
                self.left.add(task.key)
        return found == TAKEN

    def take_batch(self, tasks: list[Task]) -> list[Task]:
        """The tasks of a batch this process now holds: one INSERT for those no one holds, then
        `take` for each of the rest (an expired or dead owner's claim is taken over)."""
        until = self.clock() + self.lease
        taken = claim_many(
            self.store, self.run_id, [(t.key, t.attempt) for t in tasks], self.owner, until
        )
        mine = [t for t in tasks if (t.key, t.attempt) in taken]
        with self._lock:
            self.left.difference_update(t.key for t in mine)
        mine += [t for t in tasks if (t.key, t.attempt) not in taken and self.take(t)]
        if self.closed:
            self.release_batch(mine)
            return []
        return mine

    def release(self, task: Task) -> None:
        self.store.release(self.run_id, task.key, task.attempt, self.owner)

    def release_batch(self, tasks: list[Task]) -> None:
        release_many(self.store, self.run_id, [(t.key, t.attempt) for t in tasks], self.owner)

    def close(self) -> None:
        """The sweep is leaving (finished, stopped or cancelled): every claim it still holds is
        dropped, and a claim taken after this drops itself (`take`) — so the next sweep, even in
        this live process, takes them at once instead of waiting out the lease. (A claim
        committed before `closed` is set is deleted here; one after it sees `closed`.)"""
        self.closed = True
        self.store.release_all(self.run_id, self.owner)

    def stored(self, keys: Iterable[tuple], others: Iterable[tuple] = ()) -> None:
        """`keys` were stored by this process; `others` were found stored by another one."""
        with self._lock:
            self.made += sum(1 for _ in keys)
            self.left.update(others)

    def pending(self) -> list[Task]:
        """The forecasts last seen held by another process, to look at again."""
        with self._lock:
            tasks, self.held = list(self.held.values()), {}
        return tasks

    async def heartbeat(self) -> None:
        """Renew this process's claims every third of the lease, until cancelled."""
        while True:
            await asyncio.sleep(self.lease / 3)
            await asyncio.to_thread(
                self.store.renew, self.run_id, self.owner, self.clock() + self.lease
            )


def owner_id() -> str:
    return f"{socket.gethostname()}/{os.getpid()}/{secrets.token_hex(6)}"


def owner_gone(owner: str) -> bool:
    """Whether a claim's owner is a process of this machine that no longer runs (a killed sweep:
    its claims are taken at once); another machine's claims are taken only once they expire."""
    host, _, rest = owner.partition("/")
    pid = rest.partition("/")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # it exists (another user's): alive
        return False
    return False


def check_shard(shard: tuple[int, int] | None) -> tuple[int, int] | None:
    if shard is not None and not (
        isinstance(shard[0], int) and isinstance(shard[1], int) and 1 <= shard[0] <= shard[1]
    ):
        raise ConfigError(f"shard {shard[0]}/{shard[1]}: expected I/N with 1 ≤ I ≤ N (e.g. 2/4)")
    return shard


def sharded(tasks: list[Task], all_tasks: list[Task], shard: tuple[int, int] | None) -> list[Task]:
    """`tasks` in shard `(i, n)`'s order: its share first — the planned forecasts at positions
    i-1, i-1+n, … of the whole plan `all_tasks` (fixed however much is stored already) — then
    every other one, last planned first. No shard: as planned."""
    if shard is None:
        return tasks
    i, n = shard
    position = {t.key: k for k, t in enumerate(all_tasks)}
    mine = [t for t in tasks if position.get(t.key, -1) % n == i - 1]
    rest = [t for t in tasks if position.get(t.key, -1) % n != i - 1]
    return mine + rest[::-1]
