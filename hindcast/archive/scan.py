"""Exact top-n vector search over each month's time-sorted vectors, in two stages.

Stage one scans per-vector int8 codes in a compiled kernel; stage two re-scores the best
candidates exactly in float64, widening the candidates until a hard error bound proves no row
left out can enter the top-n, so the result is the exact top-n. Each code is derived from its
own vector only; the time cut and the edit mask apply inside the scan, before ranking; ties go
to the earlier position. The bound and its proof: docs/archive.md, "The exact scan".
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

CHUNK = 65_536
FIRST_CANDIDATES = 64
PARALLEL_ROWS = 16_384  # below this a single thread is faster than handing out work


def quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-row int8 codes and float32 scales of a float32 matrix (each row on its own). A zero
    row (a text without tokens) gets zero codes and scale 0: it scores exactly 0 on both
    stages, so it must not widen the error bound, which grows with the month's largest scale."""
    codes = np.empty(vectors.shape, dtype=np.int8)
    scales = np.empty(vectors.shape[0], dtype=np.float32)
    for start in range(0, vectors.shape[0], CHUNK):
        block = np.asarray(vectors[start : start + CHUNK], dtype=np.float32)
        peak = np.abs(block).max(axis=1) if block.shape[1] else np.zeros(block.shape[0], np.float32)
        scale = (peak / np.float32(127)).astype(np.float32)
        divisor = np.where(peak > 0, scale, np.float32(1))
        codes[start : start + CHUNK] = np.clip(np.rint(block / divisor[:, None]), -127, 127)
        scales[start : start + CHUNK] = scale
    return codes, scales


@dataclass(frozen=True)
class Vectors:
    """One month: float32 vectors, their int8 codes and scales, and edit
    instants (µs), in time order."""

    vectors: np.ndarray
    codes: np.ndarray
    scales: np.ndarray
    edit_us: np.ndarray
    max_scale: float


def error_bound(max_scale: float, q: np.ndarray) -> float:
    """An upper bound on |exact − first-stage| score for any row with scale ≤ max_scale."""
    dims = q.shape[0]
    return (
        float(max_scale) * float(np.abs(q.astype(np.float64)).sum()) * (0.5 + 127 * dims * 2.0**-22)
        + 1e-6
    )


class Scanner:
    """The threads of the first-stage scan: a pool of (cores − 1) threads, started on first
    use, owned by whoever opened the index and closed with it (`IndexReader.close`). A forked
    child starts its own pool (the parent's threads are not in it)."""

    def __init__(self, workers: int | None = None):
        self.workers = workers or _workers()
        self._pool: tuple[int, ThreadPoolExecutor] | None = None
        self._lock = threading.Lock()

    def submit(self, fn, *args):
        return self._executor().submit(fn, *args)

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None or self._pool[0] != os.getpid():
                self._pool = (
                    os.getpid(),
                    ThreadPoolExecutor(
                        max(1, self.workers - 1), thread_name_prefix="hindcast-scan"
                    ),
                )
            return self._pool[1]

    def close(self) -> None:
        """Stop the threads (a later scan starts them again)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None and pool[0] == os.getpid():
            pool[1].shutdown(wait=True)

    def __enter__(self) -> Scanner:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def top(
    month: Vectors,
    q: np.ndarray,
    end: int,
    t0_us: int | None,
    n: int,
    scanner: Scanner | None = None,
) -> list[tuple[float, int]]:
    """The exact best `n` (score, position) among rows [0, end) not masked by `t0_us`
    (rows whose edit instant is ≥ t0_us are masked; None masks nothing), best first."""
    return top_each([(month, end)], q, t0_us, n, scanner)[0]


def top_each(
    parts: list[tuple[Vectors, int]],
    q: np.ndarray,
    t0_us: int | None,
    n: int,
    scanner: Scanner | None = None,
) -> list[list[tuple[float, int]]]:
    """`top` of each (month, end), with one first-stage pass over all of them (in parallel
    on `scanner`'s threads; in the calling thread alone without one)."""
    q = np.ascontiguousarray(q, dtype=np.float32)
    roughs = first_stage(parts, q, t0_us, scanner)
    return [
        _exact_top(month, q, rough, n) if rough.size else []
        for (month, _), rough in zip(parts, roughs)
    ]


def _exact_top(month: Vectors, q: np.ndarray, rough: np.ndarray, n: int) -> list[tuple[float, int]]:
    return refine(month, q, rough, n)


def refine(
    month: Vectors, q: np.ndarray, rough: np.ndarray, n: int, where=None
) -> list[tuple[float, int]]:
    """The exact best `n` (score, position) among the rows scored in `rough` (first-stage
    scores; -inf = masked), widened until the error bound proves it. `rough[k]` scores the
    row at position `where(k)` (an array of k → positions; None: position k)."""
    bound = error_bound(month.max_scale, q)
    wanted = max(4 * n, FIRST_CANDIDATES)
    while True:
        candidates, floor = _candidates(rough, wanted)
        best = _rescore(month.vectors, q, candidates if where is None else where(candidates), n)
        if floor == -np.inf or (len(best) == n and floor + bound < best[-1][0]):
            return best
        wanted *= 4


def first_stage(
    parts: list[tuple[Vectors, int]],
    q: np.ndarray,
    t0_us: int | None,
    scanner: Scanner | None = None,
) -> list[np.ndarray]:
    """First-stage scores of rows [0, end) of each (month, end); masked rows get -inf.

    With a `scanner`, all rows are cut into one range per core and scanned at once. The
    threads are the scanner's own (the kernel releases the GIL), not a numba threading
    layer, so this is safe to call from any thread and in a forked child. A row's score
    does not depend on which thread computes it."""
    outs = [np.empty(max(end, 0), dtype=np.float32) for _, end in parts]
    mask_from = np.iinfo(np.int64).max if t0_us is None else int(t0_us)
    calls = [
        (
            np.asarray(m.codes),
            np.asarray(m.scales),
            q,
            np.asarray(m.edit_us),
            mask_from,
            t0_us is not None,
            out,
        )
        for (m, _), out in zip(parts, outs)
    ]
    shares = _shares([out.size for out in outs], scanner.workers if scanner else 1)
    others = [scanner.submit(_scan, calls, share) for share in shares[1:]] if scanner else []
    _scan(calls, shares[0])  # this thread takes the first share
    for done in others:
        done.result()
    return outs


def _shares(sizes: list[int], workers: int) -> list[list[tuple[int, int, int]]]:
    """(part, start, stop) ranges cut into `workers` shares of about equal rows (one share
    when there are few rows): share w covers rows [total·w/count, total·(w+1)/count) of the
    parts laid end to end."""
    total = sum(sizes)
    count = 1 if total < PARALLEL_ROWS else workers
    bounds = [total * w // count for w in range(count + 1)]
    offsets = [sum(sizes[:p]) for p in range(len(sizes) + 1)]
    return [
        [
            (p, max(lo, offsets[p]) - offsets[p], min(hi, offsets[p + 1]) - offsets[p])
            for p in range(len(sizes))
            if max(lo, offsets[p]) < min(hi, offsets[p + 1])
        ]
        for lo, hi in zip(bounds, bounds[1:])
    ]


def _scan(calls: list[tuple], share: list[tuple[int, int, int]]) -> None:
    kernel = _kernels().first_stage
    for part, start, stop in share:
        kernel(*calls[part], start, stop)


def _workers() -> int:
    return max(
        1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )


def _candidates(rough: np.ndarray, wanted: int) -> tuple[np.ndarray, float]:
    """Positions of the `wanted` best first-stage scores (unmasked only), and the lowest
    first-stage score among them: every row left out scores ≤ it (-inf when every unmasked
    row is a candidate)."""
    if wanted >= rough.size:
        return np.flatnonzero(rough > -np.inf), -np.inf
    picked = np.empty(wanted, dtype=np.int64)
    floor, found = _kernels().best(rough, wanted, picked)
    return picked[:found], float(floor)


def _rescore(
    vectors: np.ndarray, q: np.ndarray, positions: np.ndarray, n: int
) -> list[tuple[float, int]]:
    """The best `n` of `positions` by exact score, ties to the earlier position."""
    positions = np.sort(positions)
    exact = np.empty(positions.size, dtype=np.float64)
    _kernels().exact(np.asarray(vectors), positions, q.astype(np.float64), exact)
    order = np.lexsort((positions, -exact))[:n]
    return [(float(exact[i]), int(positions[i])) for i in order]


def _kernels():
    from hindcast.archive import _kernel

    return _kernel
