"""The projected approximate index of one closed month (issue 37): int8 codes of every row's
projection onto the fixed reference subspace (`hindcast.archive.projection`), in time order,
stored as two arrays: `head` (each row's first `HEAD` dimensions, the subspace's strongest)
and `tail` (the rest), with one scale a row.

A search probes the rows whose projected scores pass two fixed thresholds: the head's score,
scale · (head · q projected[:HEAD]), reaches `head_threshold` (a short scan of every row), and
the whole code's, scale · (code · q projected), reaches `threshold` (read for those rows only).
`hindcast.archive.ann` then ranks the probed rows exactly (the scan's own codes and float32
vectors) and, when they hold fewer than n eligible rows, the month's other rows after them —
the two groups of `ann.rank`. A row's group depends on the query and its own vector only (the
projection reads nothing of the archive; both thresholds are constants), so a row hidden
because it was edited after t0 moves no other row: the edit counterfactual holds as for the
codebook's lists. Measured recall and speed: docs/performance.md.
"""

from __future__ import annotations

import dataclasses
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hindcast.archive import folders, scan
from hindcast.archive.projection import Projection, project
from hindcast.errors import ArchiveIntegrityError

PARTITION = "projection"
THRESHOLD = 0.2  # cosine-scale projected score a row must reach to be rescored (MiniLM)
HEAD = 64  # dimensions of the first level, scanned for every row
HEAD_THRESHOLD = 0.12  # the head's score a row must reach for its whole code to be read
ARRAYS = ("head", "tail", "scales", "matrix")


@dataclass(frozen=True)
class Projected:
    """One month's projected codes in time order — `head` (rows × h int8: the first h
    dimensions) and `tail` (rows × the other dims) — their scales and the projection matrix
    (input dims × dims)."""

    head: np.ndarray
    tail: np.ndarray
    scales: np.ndarray
    matrix: np.ndarray
    meta: dict

    @property
    def lists(self) -> int:
        return 1  # one "list" holding every row: the threshold, not a cell, picks the probe

    @property
    def rows(self) -> int:
        return int(self.head.shape[0])


def load(target: Path, meta: dict) -> Projected:
    if not (target / "head.npy").exists():
        raise ArchiveIntegrityError(
            f"{target}: a projected index of an earlier layout (one code array, no head); "
            "rebuild it with `hindcast archive embed --approx --partition projection`"
        )
    arrays = {name: np.load(target / f"{name}.npy", mmap_mode="r") for name in ARRAYS}
    return Projected(**arrays, meta=meta)


def fit(
    vectors: np.ndarray,
    month_end_us: int,
    made: Projection,
    threshold: float,
    fmt: str,
    *,
    head: int = HEAD,
    head_threshold: float = HEAD_THRESHOLD,
) -> Projected:
    """The projected index of one month's rows, in memory (`head` dimensions in the first
    level, at most the projection's)."""
    codes, scales = scan.quantize(project(vectors, made.matrix))
    head = min(int(head), made.dims)
    first, rest = np.ascontiguousarray(codes[:, :head]), np.ascontiguousarray(codes[:, head:])
    meta = {
        "format": fmt,
        "rows": int(codes.shape[0]),
        "lists": 1,
        "month_end_us": int(month_end_us),
        "partition": PARTITION,
        "projection": made.id,
        "dims": made.dims,
        "threshold": float(threshold),
        "head": head,
        "head_threshold": float(head_threshold),
    }
    return Projected(first, rest, scales, made.matrix, meta)


def at(index: Projected, threshold: float, head_threshold: float) -> Projected:
    """`index` searched at these thresholds (the codes unchanged)."""
    levels = {"threshold": float(threshold), "head_threshold": float(head_threshold)}
    return dataclasses.replace(index, meta=index.meta | levels)


def candidates(
    index: Projected, q: np.ndarray, edit_us: np.ndarray, mask_from: int | None
) -> np.ndarray:
    """Time-order positions of the unmasked rows whose projected scores pass both thresholds."""
    qp = np.ascontiguousarray(q @ np.asarray(index.matrix), dtype=np.float32)
    positions = np.empty(index.rows, dtype=np.int64)
    partial = np.empty(index.rows, dtype=np.float32)
    low, high = (np.float32(index.meta[k]) for k in ("head_threshold", "threshold"))
    found = scan._kernels().projected(
        index.head, index.tail, index.scales, qp, low, high, positions, partial, 0, index.rows
    )
    positions = positions[:found]
    if mask_from is None:
        return positions
    return positions[np.asarray(edit_us)[positions] < int(mask_from)]


def write(target: Path, index: Projected, meta: dict) -> None:
    """Write the index into a private folder, then rename it to `target` (replacing an old one);
    staging folders a stopped build left behind are removed first."""
    for stale in target.parent.glob(".ann-*"):
        shutil.rmtree(stale)
    folders.write_whole(target, {f"{n}.npy": getattr(index, n) for n in ARRAYS}, meta)
