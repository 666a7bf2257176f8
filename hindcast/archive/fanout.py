"""Time-bounded search on a Ray cluster of month shards (the optional extra: `pip install
'hindcast-replay[ray]'`).

One search actor a node (`num_cpus=0`: it reserves nothing an embedder needs; threaded, so
concurrent forecasts are served at once). The index's months are dealt round-robin to the
actors (month i → actor i mod nodes, so any t0 spreads over every node); each actor memory-maps
its own months only — the index folder must be at the same path on every node (a shared
filesystem, or each node's months copied there). A step of a search at t0
(`hindcast.archive.shards.Months`) is sent only to the actors holding months ≤ month(t0) that the
step needs, each over exactly those months, and the driver merges what comes back in the
single-node order: ids, scores and order are the single-node retriever's, bit for bit.

An actor that dies or does not answer within `timeout` seconds fails the step as a whole (never a
short or partial result): the failed actors are replaced and the step is sent again, `retries`
times; then it is an `InfrastructureError` — an outage, which a sweep logs and asks again on its
next run. An error of the search itself (a leak caught, a damaged index) is raised as it is.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

from hindcast.archive import distributed, shards
from hindcast.archive.index import IndexReader, open_index
from hindcast.archive.retriever import Mode, TimeBoundRetriever
from hindcast.errors import HindcastError, InfrastructureError

TIMEOUT = 60.0  # seconds a step may take on a shard before it is an outage
RETRIES = 1  # times a failed step is sent again (to replaced actors) before it is an outage
THREADS = 8  # steps one actor runs at once
START_TIMEOUT = 300.0  # seconds the actors may take to start and open their months


class ShardActor:
    """One node's months of an index: opened (memory-mapped) at start, searched step by step."""

    def __init__(self, root: str, info: dict, months: list[str]):
        self.reader = IndexReader(Path(root), info)
        if months:  # months opened, kernels loaded, pages touched: before the first search
            import numpy as np

            q, last = np.zeros(int(info["dims"]), np.float32), max(months)
            for step, args in (("exact", (q, 1)), ("probed", (q, 1, 1, last))):
                shards.run(shards.BoundIndex(self.reader, last), months, 2**62, None, step, args)

    def step(self, month_t0: str, months: list[str], t0_us: int, mask_from, step: str, args):
        bound = shards.BoundIndex(self.reader, month_t0)
        return shards.run(bound, months, t0_us, mask_from, step, args)

    def pid(self) -> int:
        return os.getpid()


class RayShards:
    """`hindcast.archive.shards.Shards` on Ray: see the module doc. Close it (or use `with`)."""

    def __init__(self, ray, index: IndexReader, *, timeout=TIMEOUT, retries=RETRIES, where=""):
        self.ray, self.timeout, self.retries, self.where = ray, float(timeout), int(retries), where
        self.root, self.info = str(index.root), index.info
        self.stack = contextlib.ExitStack()  # what `open_shards` opened for it
        self.nodes = sorted(n["NodeID"] for n in ray.nodes() if n.get("Alive"))
        months = sorted(index.info["months"])
        self.holder = {month: k % len(self.nodes) for k, month in enumerate(months)}
        self.actors = [self._start(k) for k in range(len(self.nodes))]
        self._started([a.pid.remote() for a in self.actors])  # every shard open before a search

    def _months(self, k: int) -> list[str]:
        return [m for m, holder in self.holder.items() if holder == k]

    def _start(self, k: int):
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        actor = self.ray.remote(
            num_cpus=0,
            max_concurrency=THREADS,
            max_restarts=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(self.nodes[k], soft=False),
        )(ShardActor)
        return actor.remote(self.root, self.info, self._months(k))

    def _started(self, refs: list) -> None:
        ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=START_TIMEOUT)
        if len(ready) < len(refs):
            self.close()
            raise InfrastructureError(
                f"archive shards on Ray{self.where}: not every shard started within "
                f"{START_TIMEOUT:g} s",
                self.where,
            )

    def each(
        self, month_t0: str, months: Sequence[str], t0_us: int, mask_from, step: str, *args
    ) -> list:
        groups: dict[int, list[str]] = {}
        for month in months:
            groups.setdefault(self.holder[month], []).append(month)
        why = ""
        for _ in range(self.retries + 1):
            refs = {
                k: self.actors[k].step.remote(month_t0, group, t0_us, mask_from, step, args)
                for k, group in sorted(groups.items())
            }
            results, failed, why = self._gather(refs)
            if not failed:
                return results
            for k in failed:
                self._replace(k)
        raise InfrastructureError(
            f"archive search on Ray{self.where} stopped: {why} (sent {self.retries + 1} times); "
            "an outage, not an answer — asked again on the next run",
            self.where,
        )

    def _gather(self, refs: dict) -> tuple[list, list[int], str]:
        """(every shard's result, the shards that failed, why) — all or none of them."""
        from ray.exceptions import GetTimeoutError, RayActorError, RaySystemError

        ready, _ = self.ray.wait(list(refs.values()), num_returns=len(refs), timeout=self.timeout)
        done = set(ready)
        failed = [k for k, ref in refs.items() if ref not in done]
        why = f"shard(s) {failed} did not answer within {self.timeout:g} s" if failed else ""
        results = []
        for k, ref in refs.items():
            if ref not in done:
                continue
            try:
                results.append(self.ray.get(ref))
            except (RayActorError, RaySystemError, GetTimeoutError) as exc:
                failed.append(k)
                why = f"shard {k} failed ({type(exc).__name__})"
            except Exception as exc:  # the search's own error, wrapped by Ray: as it is
                cause = distributed._unwrapped(exc)
                raise cause if isinstance(cause, HindcastError) else exc from None
        return results, failed, why

    def _replace(self, k: int) -> None:
        if not self.actors:  # closed
            return
        with contextlib.suppress(Exception):
            self.ray.kill(self.actors[k], no_restart=True)
        self.actors[k] = self._start(k)

    def close(self) -> None:
        """Stop the actors, and Ray when `open_shards` started it."""
        for actor in self.actors:
            with contextlib.suppress(Exception):
                self.ray.kill(actor, no_restart=True)
        self.actors = []
        self.stack.close()

    def __enter__(self) -> RayShards:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_shards(index: IndexReader, address: str | None, **options) -> RayShards:
    """The month shards of `index` served on the Ray cluster at `address` (see
    `distributed.connected`) until closed; options: timeout, retries."""
    stack = contextlib.ExitStack()
    ray = stack.enter_context(distributed.connected(address))
    try:
        found = RayShards(ray, index, where=f" at {address or 'local'}", **options)
    except BaseException:
        stack.close()
        raise
    found.stack = stack
    return found


def searched_on(index: IndexReader | None, address: str | None) -> dict:
    """The `TimeBoundRetriever` keywords that search `index` where `address` says: its months
    as shards on that Ray cluster ({"shards": …}, to close when done), or {} (this machine)."""
    return {} if address is None or index is None else {"shards": open_shards(index, address)}


def search(snapshot, t0, query: str, k: int, mode: Mode, *, ray: str | None = None, **options):
    """`TimeBoundRetriever(snapshot, t0, **options).search(query, k, mode)`; with `ray` (an
    address), the index's months served as shards on that cluster for the search."""
    if ray is None:
        with TimeBoundRetriever(snapshot, t0, **options) as bound:
            return bound.search(query, k=k, mode=mode)
    embedder = options.get("embedder")
    name = embedder if isinstance(embedder, str) or embedder is None else embedder.name
    with open_index(snapshot, name) as index, open_shards(index, ray) as found:
        return TimeBoundRetriever(snapshot, t0, index=index, shards=found, **options).search(
            query, k=k, mode=mode
        )
