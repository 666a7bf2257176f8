"""Approximate vector search of closed months: an IVF index per month, exact within what it probes.

A month that ended before t0 may be searched through an inverted-file index whose lists come
from a fixed codebook shipped with the package (`hindcast.archive.codebook`), never from the
archive, so masking a document edited after t0 changes nothing else; the month of t0 and any
month without an index keep the exact scan (`hindcast.archive.scan`). This module holds a
month's index (`Ann`, `load_month`) and the search (`rank`, its two groups `probed` and `rest`);
`hindcast.archive.ann_month` builds one month's lists atomically, `hindcast.archive.ann_index`
a whole index's, resumably. Why a codebook, the search order's proof and the measured recall
and speed: docs/archive.md, "Approximate search".
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hindcast.archive import ann_projected, scan
from hindcast.archive.ann_projected import Projected
from hindcast.errors import ArchiveIntegrityError, RetrievalError

FORMAT = "hindcast-ann/2"
NPROBE = 256
SPLIT = 8192  # exact ranges are cut into pieces of this many rows to share them among threads
ARRAYS = ("centroids", "offsets", "positions", "codes", "scales", "edit_us")


@dataclass(frozen=True)
class Ann:
    """One month's IVF: centroids (lists × dims), list offsets (lists + 1), and per row in list
    order its time-order position, int8 code, scale and edit instant."""

    centroids: np.ndarray
    offsets: np.ndarray
    positions: np.ndarray
    codes: np.ndarray
    scales: np.ndarray
    edit_us: np.ndarray
    meta: dict

    @property
    def lists(self) -> int:
        return int(self.centroids.shape[0])

    @property
    def rows(self) -> int:
        return int(self.positions.shape[0])


@dataclass(frozen=True)
class Part:
    """One month to search: rows [0, end) of `vectors`; through `ann` when given for a month
    closed at t0 (then end is all its rows; `rank` checks that, and that the month ended by
    t0 when the edit mask tells t0, else scans exactly), else by the exact scan."""

    vectors: scan.Vectors
    end: int
    ann: Ann | Projected | None = None


def load_month(folder: Path) -> Ann | Projected | None:
    """The approximate index of the month whose vector folder is `folder` (arrays
    memory-mapped): its IVF, or its projected codes (`hindcast.archive.ann_projected`), or None."""
    target = Path(folder) / "ann"
    if not (target / "meta.json").exists():
        return None
    meta = json.loads((target / "meta.json").read_text(encoding="utf-8"))
    if meta.get("partition") == ann_projected.PARTITION:
        return ann_projected.load(target, meta)
    arrays = {name: np.load(target / f"{name}.npy", mmap_mode="r") for name in ARRAYS}
    return Ann(**arrays, meta=meta)


# ---- search -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    codes: np.ndarray
    scales: np.ndarray
    edit_us: np.ndarray
    ranges: np.ndarray  # (R, 3) int64: source start, source stop, output start
    size: int
    where: Callable | None  # output index → time-order position (None: the same)


def rank(
    parts: list[Part],
    q,
    mask_from: int | None,
    n: int,
    *,
    nprobe: int,
    scanner: scan.Scanner | None = None,
) -> list[tuple[float, int, int]]:
    """The first `n` eligible rows (score, part index, position) in one fixed order: the rows
    of the `nprobe` best lists of every part with an index and every row of the parts without
    one, best first (ties: part, then position); then, when those hold fewer than n eligible
    rows, the indexed parts' other rows, best first. Rows whose edit instant is ≥ `mask_from`
    are masked (None: none). Which of the two groups a row is in depends on the query and its
    own vector only, so hiding one row never changes the order of the others (issue 24).
    The two groups are `probed` and `rest`: month shards run them apart and merge alike."""
    best, _ = probed(parts, q, mask_from, n, nprobe=nprobe, scanner=scanner)
    if len(best) < n:
        best += rest(parts, q, mask_from, n, nprobe=nprobe, scanner=scanner)[: n - len(best)]
    return best


def probed(parts, q, mask_from, n, *, nprobe: int, scanner=None) -> tuple[list, bool]:
    """The first group of `rank` (its best `n`), and whether any part goes through its index."""
    if isinstance(nprobe, bool) or not isinstance(nprobe, int | np.integer) or nprobe < 1:
        raise RetrievalError(f"nprobe must be a positive integer, got {nprobe!r}")
    q = np.ascontiguousarray(q, dtype=np.float32)
    plans = _each(lambda part: _plan(part, q, nprobe, mask_from), parts, scanner)
    roughs = _first_stage(plans, q, mask_from, scanner)
    tops = _each(
        lambda i: (
            scan.refine(parts[i].vectors, q, roughs[i], n, plans[i].where) if roughs[i].size else []
        ),
        range(len(parts)),
        scanner,
    )
    best = _merge((score, i, position) for i, top in enumerate(tops) for score, position in top)
    return best[:n], any(plan.where is not None for plan in plans)


def _merge(candidates) -> list[tuple[float, int, int]]:
    return sorted(candidates, key=lambda c: (-c[0], c[1], c[2]))


def rest(parts, q, mask_from, n, *, nprobe: int, scanner=None) -> list[tuple[float, int, int]]:
    """The second group of `rank`: the best `n` eligible rows of the indexed parts outside their
    probed lists, best first: each part's exact top n less its probed rows."""
    q = np.ascontiguousarray(q, dtype=np.float32)
    plans = [_plan(part, q, nprobe, mask_from) for part in parts]
    indexed = [i for i, plan in enumerate(plans) if plan.where is not None]
    exact = scan.top_each(
        [(parts[i].vectors, parts[i].end) for i in indexed], q, mask_from, n, scanner
    )
    out = []
    for i, top in zip(indexed, exact):
        positions = np.array([p for _, p in top], dtype=np.int64)
        probed = np.isin(positions, _probed_positions(parts[i].ann, plans[i]))
        out += [(score, i, p) for (score, p), seen in zip(top, probed) if not seen]
    return _merge(out)[:n]


def _probed_positions(ann: Ann | Projected, plan: _Plan) -> np.ndarray:
    if isinstance(ann, Projected):  # ranges of time-order positions
        return np.concatenate([np.arange(a, b) for a, b, _ in plan.ranges] + [np.empty(0, int)])
    return np.concatenate(
        [np.asarray(ann.positions[a:b]) for a, b, _ in plan.ranges] + [np.empty(0, np.int64)]
    )


def _each(fn: Callable, items, scanner: scan.Scanner | None) -> list:
    """[fn(x) for x in items], the items dealt round-robin to the scanner's threads (the
    compiled kernels inside release the GIL); in this thread alone without a scanner."""
    items = list(items)
    workers = min(scanner.workers, len(items)) if scanner is not None else 1
    if workers < 2 or scanner is None:
        return [fn(x) for x in items]
    others = [
        scanner.submit(lambda w: [fn(x) for x in items[w::workers]], w) for w in range(1, workers)
    ]
    shares = [[fn(x) for x in items[0::workers]]] + [done.result() for done in others]
    return [shares[i % workers][i // workers] for i in range(len(items))]


def _plan(part: Part, q: np.ndarray, nprobe: int, mask_from: int | None) -> _Plan:
    month, end, ann = part.vectors, max(int(part.end), 0), part.ann
    if ann is not None and ann.meta.get("stale"):
        raise ArchiveIntegrityError(ann.meta["stale"])
    if ann is not None and ann.meta.get("format") != FORMAT:
        raise ArchiveIntegrityError(
            f"an approximate index of format {ann.meta.get('format')} (trained on the archive's "
            "own documents: a post-t0 edit moves its lists, issue 24); rebuild it with "
            "`hindcast archive embed --approx`"
        )
    if ann is None or not _usable(ann, end, mask_from):
        starts = np.arange(0, end, SPLIT, dtype=np.int64)
        stops = np.minimum(starts + SPLIT, end)
        ranges = np.stack([starts, stops, starts], axis=1)
        return _Plan(
            np.asarray(month.codes),
            np.asarray(month.scales),
            np.asarray(month.edit_us),
            ranges,
            end,
            None,
        )
    if isinstance(ann, Projected):
        return _projected_plan(part, q, mask_from)
    lists = probe(ann, q, nprobe)
    starts, stops = ann.offsets[lists], ann.offsets[lists + 1]
    keep = stops > starts
    starts, stops = starts[keep], stops[keep]
    outputs = np.concatenate([[0], np.cumsum(stops - starts)]).astype(np.int64)
    ranges = np.stack([starts, stops, outputs[:-1]], axis=1)
    return _Plan(
        ann.codes,
        ann.scales,
        ann.edit_us,
        ranges,
        int(outputs[-1]),
        _locator(ann, starts, outputs[:-1]),
    )


def _projected_plan(part: Part, q: np.ndarray, mask_from: int | None) -> _Plan:
    """The rows whose projected score reaches the threshold, as runs of consecutive rows,
    scored by the scan's own codes (time order): `probed` ranks them exactly like an IVF's lists."""
    assert isinstance(part.ann, Projected)
    month = part.vectors
    positions = ann_projected.candidates(part.ann, q, np.asarray(month.edit_us), mask_from)
    ranges = _runs(positions)
    return _Plan(
        np.asarray(month.codes),
        np.asarray(month.scales),
        np.asarray(month.edit_us),
        ranges,
        int(positions.size),
        lambda k: positions[k],
    )


def _runs(positions: np.ndarray) -> np.ndarray:
    """(start, stop, output start) of each run of consecutive positions (ascending)."""
    if positions.size == 0:
        return np.empty((0, 3), dtype=np.int64)
    first = np.concatenate([[0], np.flatnonzero(np.diff(positions) != 1) + 1]).astype(np.int64)
    last = np.concatenate([first[1:], [positions.size]]) - 1
    return np.stack([positions[first], positions[last] + 1, first], axis=1)


def _usable(ann: Ann | Projected | None, end: int, mask_from: int | None) -> bool:
    """Whether a part may go through its index: one with lists, every row of the month in
    the search (a closed month), and — when the edit mask tells t0 — a month ended by t0."""
    if ann is None or ann.lists == 0 or end != ann.rows:
        return False
    return mask_from is None or ann.meta.get("month_end_us", mask_from) <= mask_from


def probe(ann: Ann, q: np.ndarray, nprobe: int) -> np.ndarray:
    """The `nprobe` lists whose centroids score highest against q (ties to the
    lower list), ascending."""
    scores = np.empty(ann.lists, dtype=np.float32)
    scan._kernels().dots(ann.centroids, np.ascontiguousarray(q, dtype=np.float32), scores)
    if nprobe >= scores.size:
        return np.arange(scores.size)
    picked = np.argpartition(-scores, nprobe - 1)[:nprobe]
    low = scores[picked].min()
    above = np.flatnonzero(scores > low)
    return np.sort(np.concatenate([above, np.flatnonzero(scores == low)[: nprobe - above.size]]))


def _locator(ann: Ann, starts: np.ndarray, outputs: np.ndarray) -> Callable:
    def where(k: np.ndarray) -> np.ndarray:
        r = np.searchsorted(outputs, k, side="right") - 1
        return np.asarray(ann.positions[starts[r] + (k - outputs[r])], dtype=np.int64)

    return where


def _first_stage(
    plans: list[_Plan], q: np.ndarray, mask_from: int | None, scanner: scan.Scanner | None
) -> list[np.ndarray]:
    """First-stage scores of every plan's ranges, in one pass over the scanner's threads."""
    outs = [np.empty(plan.size, dtype=np.float32) for plan in plans]
    masked = mask_from is not None
    limit = int(mask_from) if mask_from is not None else np.iinfo(np.int64).max
    calls = [
        (plan.codes, plan.scales, q, plan.edit_us, limit, masked, out, plan.ranges)
        for plan, out in zip(plans, outs)
    ]
    total = sum(plan.size for plan in plans)
    workers = scanner.workers if scanner is not None and total >= scan.PARALLEL_ROWS else 1
    shares = _shares(plans, total, workers)
    others = [scanner.submit(_scan, calls, share) for share in shares[1:]] if scanner else []
    _scan(calls, shares[0])
    for done in others:
        done.result()
    return outs


def _shares(plans: list[_Plan], total: int, workers: int) -> list[list[tuple[int, int, int]]]:
    """(plan, first range, last range + 1) per worker: worker w takes the ranges whose output
    starts, laid end to end over all plans, fall in [total·w/workers, total·(w+1)/workers)."""
    shares: list[list[tuple[int, int, int]]] = [[] for _ in range(workers)]
    offset = 0
    for p, plan in enumerate(plans):
        starts = (plan.ranges[:, 2] + offset) * workers
        cuts = np.searchsorted(starts, [total * w for w in range(workers + 1)], side="left")
        cuts[-1] = len(plan.ranges)
        for w in range(workers):
            if cuts[w] < cuts[w + 1]:
                shares[w].append((p, int(cuts[w]), int(cuts[w + 1])))
        offset += plan.size
    return shares


def _scan(calls: list[tuple], share: list[tuple[int, int, int]]) -> None:
    kernel = scan._kernels().first_stage_ranges
    for p, lo, hi in share:
        kernel(*calls[p], lo, hi)
