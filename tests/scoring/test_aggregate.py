"""Leaderboard aggregation and the market-clustered bootstrap."""

from datetime import timedelta

import numpy as np
import pytest

from hindcast.scoring import bootstrap
from hindcast.scoring.aggregate import ScoredRow, compare, leaderboard
from tests.helpers import at

T = at("2025-10-01T00:00:00")


def row(forecaster, market, k, p, outcome, market_price=0.5, topic="politics", error=None):
    return ScoredRow(
        forecaster, market, T + timedelta(days=k), f"f={k}", topic, p, error, outcome, market_price
    )


def test_failures_are_counted_never_scored_and_market_rows_are_paired():
    rows = [
        row("a", "m1", 1, 0.9, 1.0),
        row("a", "m1", 2, None, 1.0, error="timeout"),
        row("a", "m2", 1, 0.2, 0.0, market_price=None),
    ]
    (r,) = leaderboard(rows, replicates=50)
    assert (r.n_forecasts, r.n_failed, r.n_markets, r.n_paired) == (2, 1, 2, 1)
    assert r.brier == pytest.approx((0.01 + 0.04) / 2)
    assert r.forecaster_brier_paired == pytest.approx(0.01) and r.market_brier == pytest.approx(
        0.25
    )
    assert r.skill_vs_market == pytest.approx(1 - 0.01 / 0.25)


def test_slices_split_rows_and_results_are_reproducible():
    rows = [
        row("a", f"m{i}", k, 0.7, float(i % 2), topic="sports" if i < 5 else "crypto")
        for i in range(10)
        for k in range(3)
    ]
    board = leaderboard(rows, by="topic", replicates=200)
    assert [r.slice for r in board] == ["topic=crypto", "topic=sports"]
    assert board == leaderboard(rows, by="topic", replicates=200)
    assert all(r.brier_ci_low <= r.brier <= r.brier_ci_high for r in board)


def test_cluster_bootstrap_resamples_markets_not_rows():
    w = bootstrap.draw_weights(5, 300, np.random.default_rng(1))
    assert w.shape == (300, 5) and (w.sum(axis=1) == 5).all()
    # two markets, one with 100 identical rows: a row-level bootstrap would be almost
    # always near the big market's value; a market-level one gives each market equal draws
    codes = np.array([0] * 100 + [1])
    values = np.array([1.0] * 100 + [0.0])
    means = bootstrap.replicate_means(
        bootstrap.draw_weights(2, 4000, np.random.default_rng(2)), codes, values
    )
    assert 0.2 < np.mean(means == 0.0) + np.mean(means == 1.0) < 0.8


def test_paired_comparison_on_matched_rows_only():
    rows = [row("a", f"m{i}", 1, 0.8, 1.0) for i in range(20)] + [
        row("b", f"m{i}", 1, 0.6, 1.0) for i in range(20)
    ]
    rows.append(row("a", "extra", 1, 0.1, 1.0))  # b has no forecast here: not compared
    c = compare(rows, "a", "b", replicates=500)
    assert (c.n_rows, c.n_markets) == (20, 20)
    assert c.difference == pytest.approx(0.04 - 0.16)
    assert c.ci_low == pytest.approx(c.difference) and c.ci_high == pytest.approx(c.difference)
