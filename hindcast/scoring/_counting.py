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
