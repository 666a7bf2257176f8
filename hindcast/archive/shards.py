"""The per-month work of a time-bounded search, and where it runs.

A `TimeBoundRetriever` asks its `Shards` to run one step of a search (`Months`' methods) over the
months ≤ month(t0) and merges what comes back. Every step is a function of the months it is given
alone — per month the exact top-n, the approximate index's two groups, BM25's integer counts,
rows read by position or by a LanceDB filter — and every merge orders by (−score, month,
position), the single-node tie rule. So the months may be split among shards in any way and the
merged result is the same, bit for bit: `Local` runs every step in this process over all the
months (one shard), `hindcast.archive.fanout.RayShards` sends each shard's months to the Ray actor
that memory-maps them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from hindcast.archive import ann, scan, text
from hindcast.archive.index import IndexReader, MonthData, run_async
from hindcast.errors import LeakageError

Best = list[tuple[float, str, int]]  # (score, month, position in the month's time order)


class BoundIndex:
    """An `IndexReader` seen from one t0: only months ≤ month(t0) are listed or opened."""

    def __init__(self, reader: IndexReader, month: str):
        self._reader, self._month = reader, month

    @property
    def months(self) -> tuple[str, ...]:
        return tuple(m for m in self._reader.months if m <= self._month)

    @property
    def info(self) -> dict:
        return self._reader.info

    @property
    def root(self):
        return self._reader.root

    @property
    def opened(self) -> set[str]:
        return self._reader.opened

    @property
    def scanner(self):
        return self._reader.scanner

    def embedder(self):
        return self._reader.embedder()

    def open_month(self, month: str) -> MonthData:
        if month > self._month:
            raise LeakageError(f"month {month} is after month(t0) {self._month}: not opened")
        return self._reader.open_month(month)


def merge(lists: Sequence[Sequence[tuple]], n: int | None = None) -> list:
    """Candidates of several shards in the single-node order: best score first, then month,
    then position (the first `n`; None: all)."""
    best = sorted((c for found in lists for c in found), key=lambda c: (-c[0], c[1], c[2]))
    return best if n is None else best[:n]


class Months:
    """One search step over some months of an index bound to month(t0) (`BoundIndex`), at the
    instant `t0_us` (µs); `mask_from`: the edit mask (rows edited at/after it hidden; None:
    none)."""

    def __init__(self, index: BoundIndex, months: Sequence[str], t0_us: int, mask_from):
        self.index, self.t0_us, self.mask_from = index, t0_us, mask_from
        self.opened = [index.open_month(m) for m in months]

    def _cut(self, data: MonthData) -> int:
        """How many of the month's time-sorted rows were created before t0."""
        import numpy as np

        return int(np.searchsorted(data.created_us, self.t0_us, side="left"))

    def exact(self, q, n: int) -> Best:
        parts = [(data.vectors, self._cut(data)) for data in self.opened]
        tops = scan.top_each(parts, q, self.mask_from, n, self.index.scanner)
        return merge([[(s, d.month, p) for s, p in top] for d, top in zip(self.opened, tops)], n)

    def _parts(self, month_t0: str) -> list[ann.Part]:
        """Closed months (before month(t0)) through their approximate index; the boundary
        month, and any month without one, by the exact scan."""
        return [
            ann.Part(data.vectors, self._cut(data), data.ann if data.month < month_t0 else None)
            for data in self.opened
        ]

    def probed(self, q, n: int, nprobe: int, month_t0: str) -> tuple[Best, bool]:
        """`ann.probed` over these months: its best n, and whether any went through its index."""
        found, indexed = ann.probed(
            self._parts(month_t0), q, self.mask_from, n, nprobe=nprobe, scanner=self.index.scanner
        )
        return [(s, self.opened[i].month, p) for s, i, p in found], indexed

    def rest(self, q, n: int, nprobe: int, month_t0: str) -> Best:
        found = ann.rest(
            self._parts(month_t0), q, self.mask_from, n, nprobe=nprobe, scanner=self.index.scanner
        )
        return [(s, self.opened[i].month, p) for s, i, p in found]

    def _views(self) -> list[text.View]:
        return [
            text.View(d.month, d.postings, self._cut(d), d.vectors.edit_us, self.mask_from)
            for d in self.opened
        ]

    def text_counts(self, terms: list[str]) -> tuple[int, int, list[int]]:
        return text.counts(self._views(), terms)

    def text_top(self, terms: list[str], idf: list[float], avg: float, n: int) -> Best:
        return text.tops(self._views(), terms, idf, avg, n)

    def take(self, wanted: dict[str, list[int]]) -> dict[tuple[str, int], dict]:
        """The rows at these positions of these months (one `take` a month: 2-3x cheaper than a
        one-row slice each, measured on 12 rows)."""
        rows: dict[tuple[str, int], dict] = {}
        for data in self.opened:
            offsets = sorted(wanted.get(data.month, ()))
            if offsets:
                rows.update(zip(((data.month, o) for o in offsets), data.rows_at(offsets)))
        return rows

    def rows(self, where: str, columns: list[str], limit: int | None) -> dict[str, list[dict]]:
        """Each month's rows matching the LanceDB filter `where` (months queried concurrently)."""
        import asyncio

        async def one(data: MonthData) -> list[dict]:
            query = data.atable.query().where(where).select(columns)
            return (await (query.limit(limit) if limit else query).to_arrow()).to_pylist()

        async def gather():
            return await asyncio.gather(*(one(data) for data in self.opened))

        return {d.month: found for d, found in zip(self.opened, run_async(gather()))}


class Shards(Protocol):
    """Where the steps run: `each` gives one result per shard holding any of `months`."""

    def each(
        self, month_t0: str, months: Sequence[str], t0_us: int, mask_from, step: str, *args
    ) -> list: ...


class Local:
    """Every month in this process: one shard (the single-node search)."""

    def __init__(self, index: BoundIndex):
        self.index = index

    def each(
        self, month_t0: str, months: Sequence[str], t0_us: int, mask_from, step: str, *args
    ) -> list:
        return [run(self.index, months, t0_us, mask_from, step, args)]


def run(index: BoundIndex, months: Sequence[str], t0_us: int, mask_from, step: str, args) -> object:
    """One step (a `Months` method) over `months` of `index`."""
    if step not in STEPS:
        raise ValueError(f"unknown search step {step!r}")
    return getattr(Months(index, months, t0_us, mask_from), step)(*args)


STEPS = ("exact", "probed", "rest", "text_counts", "text_top", "take", "rows")
