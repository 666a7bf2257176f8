"""The compiled counting of `bootstrap.draw_weights` at scale (numba, imported only there: a
small bootstrap never loads it)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(nogil=True, cache=True)
def count_draws(picks: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """out[r, k] = how many of picks[r, :] are k (out zeroed, float64: exact whole numbers)."""
    for r in range(picks.shape[0]):
        for j in range(picks.shape[1]):
            out[r, picks[r, j]] += 1.0


@njit(nogil=True, cache=True)
def count_bounded(
    raw: np.ndarray,
    n: np.uint64,
    threshold: np.uint64,
    out: np.ndarray,
    row: int,
    col: int,
    counts: np.ndarray,
) -> tuple[int, int, int]:  # pragma: no cover - compiled
    """numpy's bounded integers in [0, n) from the uint32 stream `raw` (Lemire's method, as
    `Generator.integers` makes them: a draw u gives m = u·n; m's low 32 bits under `threshold`
    reject u, else the draw is m's high 32 bits), counted row after row from (`row`, column
    `col`) on into `counts` (int32, n: the current row's counts so far, carried between
    calls); a row complete is written to out[row] — every entry: `out` may be uninitialised —
    and `counts` zeroed. Returns the (row, col) reached and how many of `raw` were used."""
    low, high = np.uint64(0xFFFFFFFF), np.uint64(32)
    i, size, width = 0, raw.shape[0], out.shape[1]
    while row < out.shape[0] and i < size:
        while col < width and i < size:
            m = np.uint64(raw[i]) * n
            i += 1
            if (m & low) >= threshold:
                counts[m >> high] += 1
                col += 1
        if col == width:
            target = out[row]
            for k in range(width):
                target[k] = counts[k]
                counts[k] = 0
            row, col = row + 1, 0
    return row, col, i
