"""Paired bootstrap confidence intervals clustered by market.

Rows of one market's cutoff sweep are correlated, so the unit resampled is the market:
each replicate draws markets with replacement and takes every row of each drawn market.
Vectorised as per-market sums: a replicate's mean is (w · S) / (w · n) for market draw
counts w. Seeded, so the same rows give the same interval to the byte.
"""

from __future__ import annotations

import sys
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

REPLICATES = 2000
_BLOCK = 1 << 15  # draws counted at once (draw_weights): their counts fit in a core's cache
COMPILED = 1 << 22  # draws from which draw_weights draws and counts with the compiled loop
_RAW = 1 << 15  # 64-bit outputs drawn at once by the compiled way (two draws each)
_KEPT_MAX = 1 << 26  # entries of the largest matrix `_matrix` keeps between calls (512 MB)
_KEPT: list[np.ndarray] = []
_LOCK = threading.Lock()
LEVEL = 0.95
POLICY = {
    "bootstrap": "market-cluster-percentile",
    "replicates": REPLICATES,
    "level": LEVEL,
    "seed": 0,
}


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


def rng_for(seed: int, key: str) -> np.random.Generator:
    """An independent stream per (seed, slice): one slice's interval never depends on another's."""
    return np.random.default_rng([seed, zlib.crc32(key.encode("utf-8"))])


def draw_weights(n_markets: int, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """replicates × n_markets draw counts of a market-level resample, as float64 (small whole
    numbers, exact): the products with per-market sums take them as they are.

    The draws are `rng.integers(0, n_markets, size=(replicates, n_markets))` row after row (the
    int32 stream is the int64 one, and drawing in blocks of rows continues it), counted a block
    at a time: the same counts as one bincount of the whole matrix, without its three
    replicates × n_markets int64 matrices (2.4 GB at 10,000 markets). From COMPILED draws on,
    a compiled loop makes and counts them (numba: loaded only then): `_drawn_bounded`."""
    if replicates * n_markets >= COMPILED and n_markets > 1 and _fresh_pcg64(rng):
        return _drawn_bounded(n_markets, replicates, rng)
    weights = np.zeros((replicates, n_markets))
    rows = max(1, _BLOCK // max(n_markets, 1))
    count = _compiled_count() if replicates * n_markets >= COMPILED else _bincount
    for start in range(0, replicates, rows):
        size = min(rows, replicates - start)
        picks = rng.integers(0, n_markets, size=(size, n_markets), dtype=np.int32)
        count(picks, weights[start : start + size])
    return weights


def _fresh_pcg64(rng: np.random.Generator) -> bool:
    """A PCG64 stream with no half of a 64-bit output held back (a fresh one, as rng_for's)."""
    return (
        isinstance(rng.bit_generator, np.random.PCG64) and not rng.bit_generator.state["has_uint32"]
    )


def _drawn_bounded(n_markets: int, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """draw_weights' counts, drawn as numpy draws them — `rng.integers(0, n, dtype=np.int32)`
    takes the PCG64's 64-bit outputs as two 32-bit halves (low first) and maps each by
    Lemire's method (`_counting.count_bounded`) — but from raw outputs, counted as they are
    made; then the stream is left where `integers` leaves it (tests/scoring/
    test_bootstrap_stream.py: the same counts and the same stream after, rejections included).
    For a PCG64 without a held half output (`_fresh_pcg64`)."""
    from hindcast.scoring._counting import count_bounded

    bits, weights = cast(np.random.PCG64, rng.bit_generator), _matrix(replicates, n_markets)
    start, n = bits.state, np.uint64(n_markets)
    threshold = np.uint64((2**32 - n_markets) % n_markets)
    row = col = used = 0
    counts = np.zeros(n_markets, dtype=np.int32)
    while row < replicates:
        raw = bits.random_raw(_RAW).view(np.uint32)  # little-endian: low half first
        row, col, taken = count_bounded(raw, n, threshold, weights, row, col, counts)
        used += taken
    _leave_after(bits, start, used, raw, taken)
    return weights


def _matrix(replicates: int, n_markets: int) -> np.ndarray:
    """An uninitialised replicates × n_markets float64 matrix, in the memory of the last one
    made here when nothing else holds that any more (no array, no view of it: its reference
    count says so) and it is large enough; else new, and kept for the next call. A fresh
    matrix of 160 MB (10,000 markets) costs the kernel's page faults — and, with transparent
    huge pages, compaction stalls — more than drawing its 20M counts; the analyses draw ~200
    of them, each used and dropped before the next. At most _KEPT_MAX entries are kept."""
    size = replicates * n_markets
    with _LOCK:
        # refs when free: _KEPT's and the call's own (a new one, from the subscript; no local
        # name holds it, so no interpreter can borrow it away from the count)
        if _KEPT and _KEPT[0].size >= size and sys.getrefcount(_KEPT[0]) == 2:
            return _KEPT[0][:size].reshape(replicates, n_markets)
        fresh = np.empty(size)
        _KEPT[:] = [fresh] if size <= _KEPT_MAX else []
        return fresh.reshape(replicates, n_markets)


def _leave_after(
    bits: np.random.PCG64, start: Any, used: int, last: np.ndarray, taken: int
) -> None:
    """The stream as `used` 32-bit draws from `start` leave it: (used + 1) // 2 outputs on; the
    high half of the last output held for the next 32-bit draw if `used` is odd, else kept as
    numpy keeps it, spent (`last`: the block of the last draw, `taken` of it used)."""
    bits.state = start
    bits.advance((used + 1) // 2)
    odd = used % 2
    held = int(last[taken] if odd else last[taken - 1])
    bits.state = {**bits.state, "has_uint32": odd, "uinteger": held}


def _bincount(picks: np.ndarray, out: np.ndarray) -> None:
    size, n = picks.shape
    flat = (picks + (np.arange(size, dtype=np.int64) * n)[:, None]).ravel()
    out[:] = np.bincount(flat, minlength=size * n).reshape(size, n)


def _compiled_count() -> Callable[[np.ndarray, np.ndarray], None]:
    from hindcast.scoring._counting import count_draws

    return count_draws


def cluster_sums(
    codes: np.ndarray, values: np.ndarray, n_markets: int
) -> tuple[np.ndarray, np.ndarray]:
    return np.bincount(codes, weights=values, minlength=n_markets), np.bincount(
        codes, minlength=n_markets
    ).astype(float)


def replicate_means(weights: np.ndarray, codes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each replicate's mean of `values` (rows of markets `codes`); `weights`: draw_weights'
    counts (or some of its rows: each row sums to the number of markets)."""
    sums, counts = cluster_sums(codes, values, weights.shape[1])
    return (weights @ sums) / replicate_counts(weights, counts)


def replicate_counts(weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """weights @ counts: rows per replicate (`weights` as in replicate_means: each row sums to
    n_markets). Every market with the same count c (one row a market, say): c × the markets
    drawn, c × n_markets in every replicate — what the product gives, whole numbers summed
    exactly in any order — without a pass over the matrix."""
    n_markets = weights.shape[1]
    if n_markets and counts.min() == counts.max() and counts[0] * n_markets < 2**53:
        return np.full(weights.shape[0], counts[0] * n_markets, dtype=float)
    return weights @ counts


def percentile_interval(samples: np.ndarray, level: float = LEVEL) -> Interval | None:
    samples = samples[np.isfinite(samples)]
    if samples.size == 0:
        return None
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(samples, [tail, 100.0 - tail])
    return Interval(float(low), float(high))


def market_codes(market_ids: list[str]) -> tuple[np.ndarray, int]:
    """Each row's market as an integer 0..M−1 (in sorted id order) and M."""
    names = sorted(set(market_ids))
    index = {name: i for i, name in enumerate(names)}
    return np.fromiter((index[m] for m in market_ids), dtype=np.int64, count=len(market_ids)), len(
        names
    )
