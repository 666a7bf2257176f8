"""The research analyses of hindcast.analysis (issue 29) against the leaderboard, on the same rows.

Synthetic sweeps shaped like real ones: N markets × 4 lifetime-fraction cutoffs × 4 forecasters of
decreasing skill (2% of forecasts failed), a random-walk daily-ish price path of 100 points per
market (the price at t0 taken from it). Reported: seconds of `scoring.aggregate.leaderboard` (2,000
replicates) and of `analysis.analyze` (default Settings: 2,000 replicates and permutations, 500
CORP draws) and their ratio, measured in the same run.

Usage: python benchmarks/analysis.py [--markets 2000]
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime, timedelta, timezone

import numpy as np

from hindcast import analysis
from hindcast.records import PricePoint
from hindcast.scoring.aggregate import ScoredRow, leaderboard

T = datetime(2025, 1, 1, tzinfo=timezone.utc)
NOISE = {"a": 0.1, "b": 0.3, "c": 1.0, "d": 2.0}  # logit noise of each forecaster around the truth


def synthetic(n: int, seed: int = 0) -> tuple[list[ScoredRow], analysis.MarketFacts]:
    rng = np.random.default_rng(seed)
    rows, prices = [], {}
    for i in range(n):
        market, q = f"m{i:05d}", rng.uniform(0.05, 0.95)
        y, walk = (
            float(rng.random() < q),
            np.clip(q + np.cumsum(rng.normal(0, 0.02, 100)), 0.01, 0.99),
        )
        prices[market] = tuple(
            PricePoint(T + timedelta(days=d * 0.3), float(walk[d])) for d in range(100)
        )
        for k, day in enumerate((5, 10, 15, 20)):
            price = float(walk[int(day / 0.3) - 1])
            for name, noise in NOISE.items():
                p = float(1 / (1 + np.exp(-(np.log(q / (1 - q)) + rng.normal(0, noise)))))
                p = p if rng.random() > 0.02 else None
                rows.append(
                    ScoredRow(
                        name,
                        market,
                        T + timedelta(days=day),
                        f"f={(k + 1) / 4:g}",
                        "other",
                        p,
                        None if p is not None else "bad answer",
                        y,
                        price,
                        resolved_at=T + timedelta(days=31),
                    )
                )
    return rows, analysis.MarketFacts(prices=prices)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--markets", type=int, default=2000)
    args = parser.parse_args()
    rows, facts = synthetic(args.markets)
    start = time.perf_counter()
    leaderboard(rows)
    board = time.perf_counter() - start
    start = time.perf_counter()
    analysis.analyze(rows, facts)
    took = time.perf_counter() - start
    print(
        f"{args.markets} markets, {len(rows)} rows: leaderboard {board:.2f} s, analyses "
        f"{took:.2f} s, ratio {took / board:.1f}"
    )


if __name__ == "__main__":
    main()
