"""The market bootstrap's draws (`scoring.bootstrap.draw_weights`) against the counting before
issue 39 (one int64 matrix, one bincount of all of it, then cast to float for the products),
run alongside in the same process on the same seeded streams: seconds of draws + two products
(a replicate mean's numerator and denominator), the ratio, and whether the replicate means are
the same bits.

Usage: python benchmarks/bootstrap_draws.py [--markets 10000] [--replicates 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from hindcast.scoring import bootstrap


def before(n: int, replicates: int, rng: np.random.Generator) -> np.ndarray:
    picks = rng.integers(0, n, size=(replicates, n))
    offsets = (np.arange(replicates) * n)[:, None]
    return np.bincount((picks + offsets).ravel(), minlength=replicates * n).reshape(replicates, n)


def timed(draw, n: int, replicates: int, key: str, sums, counts) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    weights = draw(n, replicates, bootstrap.rng_for(0, key))
    means = (weights @ sums) / (weights @ counts)
    return time.perf_counter() - start, means


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--markets", type=int, default=10_000)
    parser.add_argument("--replicates", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    sums, counts = rng.random(args.markets) * 4, rng.integers(1, 5, args.markets).astype(float)
    bootstrap.draw_weights(10, 10, bootstrap.rng_for(0, "warm"))  # numba's cache loaded
    bootstrap.draw_weights(bootstrap.COMPILED, 1, bootstrap.rng_for(0, "warm"))
    for k in range(args.repeat):
        old, old_means = timed(before, args.markets, args.replicates, f"b{k}", sums, counts)
        new, new_means = timed(
            bootstrap.draw_weights, args.markets, args.replicates, f"b{k}", sums, counts
        )
        print(
            f"{args.markets} markets × {args.replicates}: before {old:.3f} s, now {new:.3f} s, "
            f"ratio {old / new:.1f}, same bits {np.array_equal(old_means, new_means)}, "
            f"load {os.getloadavg()[0]:.1f}"
        )


if __name__ == "__main__":
    main()
