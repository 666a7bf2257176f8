"""Paired bootstrap confidence intervals clustered by market.

Rows of one market's cutoff sweep are correlated, so the unit resampled is the market:
each replicate draws markets with replacement and takes every row of each drawn market.
Vectorised as per-market sums: a replicate's mean is (w · S) / (w · n) for market draw
counts w. Seeded, so the same rows give the same interval to the byte.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

REPLICATES = 2000
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
    """replicates × n_markets draw counts of a market-level resample."""
    picks = rng.integers(0, n_markets, size=(replicates, n_markets))
    offsets = (np.arange(replicates) * n_markets)[:, None]
    return np.bincount((picks + offsets).ravel(), minlength=replicates * n_markets).reshape(
        replicates, n_markets
    )


def cluster_sums(
    codes: np.ndarray, values: np.ndarray, n_markets: int
) -> tuple[np.ndarray, np.ndarray]:
    return np.bincount(codes, weights=values, minlength=n_markets), np.bincount(
        codes, minlength=n_markets
    ).astype(float)


def replicate_means(weights: np.ndarray, codes: np.ndarray, values: np.ndarray) -> np.ndarray:
    sums, counts = cluster_sums(codes, values, weights.shape[1])
    return (weights @ sums) / (weights @ counts)


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
