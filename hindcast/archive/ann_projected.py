"""The projected approximate index of one closed month (issue 37): int8 codes of every row's
projection onto the fixed reference subspace (`hindcast.archive.projection`), in time order.

A search probes the rows whose projected first-stage score, scale · (code · (q projected)),
reaches the fixed `threshold`; `hindcast.archive.ann` then ranks those rows exactly (the
scan's own codes and float32 vectors) and, when they hold fewer than n eligible rows, the
month's other rows after them — the two groups of `ann.rank`. A row's group depends on the
query and its own vector only (the projection reads nothing of the archive; the threshold is
a constant), so a row hidden because it was edited after t0 moves no other row: the edit
counterfactual holds as for the codebook's lists. Measured recall and speed: docs/performance.md.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hindcast.archive import folders, scan
from hindcast.archive.projection import Projection, project

PARTITION = "projection"
THRESHOLD = 0.2  # cosine-scale projected score a row must reach to be rescored (MiniLM)
ARRAYS = ("codes", "scales", "matrix")


@dataclass(frozen=True)
class Projected:
    """One month's projected codes (rows × dims int8, time order), scales and the projection
    matrix (input dims × dims)."""

    codes: np.ndarray
    scales: np.ndarray
    matrix: np.ndarray
    meta: dict

    @property
    def lists(self) -> int:
        return 1  # one "list" holding every row: the threshold, not a cell, picks the probe

    @property
    def rows(self) -> int:
        return int(self.codes.shape[0])


def load(target: Path, meta: dict) -> Projected:
    arrays = {name: np.load(target / f"{name}.npy", mmap_mode="r") for name in ARRAYS}
    return Projected(**arrays, meta=meta)


def fit(
    vectors: np.ndarray, month_end_us: int, made: Projection, threshold: float, fmt: str
) -> Projected:
    """The projected index of one month's rows, in memory."""
    codes, scales = scan.quantize(project(vectors, made.matrix))
    meta = {
        "format": fmt,
        "rows": int(codes.shape[0]),
        "lists": 1,
        "month_end_us": int(month_end_us),
        "partition": PARTITION,
        "projection": made.id,
        "dims": made.dims,
        "threshold": float(threshold),
    }
    return Projected(codes, scales, made.matrix, meta)


def candidates(
    index: Projected, q: np.ndarray, edit_us: np.ndarray, mask_from: int | None
) -> np.ndarray:
    """Time-order positions of the unmasked rows whose projected score reaches the threshold."""
    qp = np.ascontiguousarray(q @ np.asarray(index.matrix), dtype=np.float32)
    out = np.empty(index.rows, dtype=np.float32)
    limit = int(mask_from) if mask_from is not None else np.iinfo(np.int64).max
    scan._kernels().first_stage(
        index.codes, index.scales, qp, edit_us, limit, mask_from is not None, out, 0, index.rows
    )
    return np.flatnonzero(out >= np.float32(index.meta["threshold"])).astype(np.int64)


def write(target: Path, index: Projected, meta: dict) -> None:
    """Write the index into a private folder, then rename it to `target` (replacing an old one);
    staging folders a stopped build left behind are removed first."""
    for stale in target.parent.glob(".ann-*"):
        shutil.rmtree(stale)
    folders.write_whole(target, {f"{n}.npy": getattr(index, n) for n in ARRAYS}, meta)
