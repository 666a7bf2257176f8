"""Scoring + 2,000 market-clustered bootstrap replicates over 100,000 forecasts.

Compares hindcast's vectorised scoring (hindcast.scoring.aggregate.leaderboard) with a
straightforward pure-Python loop computing the same Brier CI, measured in the same run.
Both run the same number of replicates; ours also computes the skill-vs-market CI, log
score, accuracy and ECE in the time reported, the loop only the Brier CI. The data are synthetic but
shaped like real sweeps: 5,000 markets × 20 cutoffs, outcomes ~13% Yes as in
the shared Polymarket data.

Usage: python benchmarks/scoring.py [--forecasts 100000] [--replicates 2000]
"""

from __future__ import annotations

import argparse
import random
import time
from datetime import datetime, timedelta, timezone

import numpy as np

from hindcast.scoring.aggregate import ScoredRow, leaderboard


def synthetic_rows(n: int, per_market: int = 20, seed: int = 1) -> list[ScoredRow]:
    rng = np.random.default_rng(seed)
    t0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
    markets = n // per_market
    outcome = (rng.uniform(size=markets) < 0.13).astype(float)
    rows = []
    for i in range(n):
        m = i // per_market
        market_p = float(np.clip(outcome[m] * 0.7 + rng.normal(0.15, 0.1), 0.01, 0.99))
        p = float(np.clip(market_p + rng.normal(0, 0.1), 0.0, 1.0))
        rows.append(
            ScoredRow(
                "f",
                f"m{m:05d}",
                t0 + timedelta(days=i % per_market),
                f"f={i % per_market}",
                "politics",
                p,
                None,
                float(outcome[m]),
                market_p,
            )
        )
    return rows


def pure_python_brier_ci(
    rows: list[ScoredRow], replicates: int, seed: int = 0
) -> tuple[float, float, float]:
    by_market: dict[str, list[float]] = {}
    for r in rows:
        by_market.setdefault(r.market_id, []).append((r.probability - r.outcome) ** 2)
    names = sorted(by_market)
    rnd = random.Random(seed)
    means = []
    for _ in range(replicates):
        total = count = 0.0
        for name in rnd.choices(names, k=len(names)):
            total += sum(by_market[name])
            count += len(by_market[name])
        means.append(total / count)
    means.sort()
    brier = sum((r.probability - r.outcome) ** 2 for r in rows) / len(rows)
    return brier, means[int(0.025 * len(means))], means[int(0.975 * len(means)) - 1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--forecasts", type=int, default=100_000)
    parser.add_argument("--replicates", type=int, default=2000)
    args = parser.parse_args()
    rows = synthetic_rows(args.forecasts)

    start = time.perf_counter()
    (ours,) = leaderboard(rows, replicates=args.replicates)
    ours_s = time.perf_counter() - start

    start = time.perf_counter()
    brier, low, high = pure_python_brier_ci(rows, args.replicates)
    python_s = time.perf_counter() - start

    print(
        f"forecasts: {len(rows):,}  markets: {len({r.market_id for r in rows}):,}  "
        f"replicates: {args.replicates}"
    )
    print(f"hindcast (all metrics, Brier + skill CIs): {ours_s:.2f} s")
    print(f"pure-Python loop (Brier CI only):          {python_s:.2f} s")
    print(f"ratio (pure-Python / hindcast): {python_s / ours_s:.1f}x")
    print(
        f"Brier: hindcast {ours.brier:.6f} [{ours.brier_ci_low:.6f}, {ours.brier_ci_high:.6f}]  "
        f"pure-Python {brier:.6f} [{low:.6f}, {high:.6f}] (different random draws)"
    )
    assert abs(ours.brier - brier) < 1e-12


if __name__ == "__main__":
    main()
