"""The comparison with the market is bounded, draws no interval under 5 markets, gives no skill
ratio where the market's Brier is near 0, and marks forecasters that cover a subset of markets."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindcast.scoring.aggregate import ScoredRow, compare, leaderboard
from hindcast.scoring.vs_market import MIN_MARKET_BRIER, MIN_MARKETS
from tests.helpers import at

T = at("2025-10-01T00:00:00")
PROBABILITY = st.one_of(st.sampled_from([0.0, 1.0, 0.5, 1e-9, 1 - 1e-9]), st.floats(0.0, 1.0))


def row(forecaster, market, k, p, outcome, market_price=0.5, error=None):
    return ScoredRow(
        forecaster,
        market,
        T + timedelta(days=k),
        f"f={k}",
        "politics",
        p,
        error,
        outcome,
        market_price,
    )


@st.composite
def stored_runs(draw):
    """A random run: up to 4 forecasters, each on its own random subset of up to 12 markets, up to
    3 cutoffs a market, with failures, markets without a price and prices at or near the outcome."""
    outcomes = draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=1, max_size=12))
    rows = []
    for f in range(draw(st.integers(1, 4))):
        markets = draw(
            st.lists(
                st.integers(0, len(outcomes) - 1), min_size=1, max_size=len(outcomes), unique=True
            )
        )
        for m in markets:
            for k in range(draw(st.integers(1, 3))):
                price = draw(st.one_of(st.none(), PROBABILITY, st.just(outcomes[m])))
                p = draw(st.one_of(st.none(), PROBABILITY))
                rows.append(
                    row(
                        f"f{f}",
                        f"m{m:02d}",
                        k,
                        p,
                        outcomes[m],
                        price,
                        None if p is not None else "invalid",
                    )
                )
    return rows


@settings(max_examples=150, deadline=None)
@given(stored_runs())
def test_the_comparison_with_the_market_is_bounded_and_needs_5_markets_for_an_interval(rows):
    for r in leaderboard(rows, replicates=40):
        values = [r.brier_diff_vs_market, r.diff_ci_low, r.diff_ci_high]
        assert all(v is None or -1.0 <= v <= 1.0 for v in values), r
        if r.brier_diff_vs_market is not None:
            assert r.brier_diff_vs_market == pytest.approx(
                r.forecaster_brier_paired - r.market_brier, abs=1e-12
            )
        if r.n_markets_paired < MIN_MARKETS:
            assert r.diff_ci_low is r.diff_ci_high is r.skill_ci_low is r.skill_ci_high is None
            assert "n too small" in r.ci_note
        if r.n_markets < MIN_MARKETS:
            assert r.brier_ci_low is r.brier_ci_high is None and r.ci_note.startswith(
                "n too small:"
            )
        if r.market_brier is None or r.market_brier < MIN_MARKET_BRIER:
            assert r.skill_vs_market is None and r.skill_note
        assert (r.subset is not None) == (r.n_markets < r.n_markets_all)


def test_a_few_markets_the_market_had_settled_give_no_exploding_skill_and_no_interval():
    """Issue 14: a local model on 3 markets where the market's Brier is ≈ 0 showed skill −1.89e+06
    and a '95% CI' of [0.8281, 0.8281]."""
    rows = [row("local", f"m{i}", 0, 0.09, 1.0, market_price=0.9997) for i in range(3)]
    rows += [row("market", f"m{i}", 0, 0.9997, 1.0, market_price=0.9997) for i in range(30)]
    board = {r.forecaster: r for r in leaderboard(rows, replicates=200)}
    local = board["local"]
    assert local.skill_vs_market is None and "market Brier 0.0000 < 0.01" in local.skill_note
    assert local.brier_diff_vs_market == pytest.approx(0.91**2 - 0.0003**2)
    assert local.brier_ci_low is None and local.diff_ci_low is None
    assert local.ci_note == "n too small: 3 markets (< 5), no interval"
    assert local.subset == "subset: 3 of 30 markets" and board["market"].subset is None


def test_a_subset_row_is_compared_with_the_market_on_its_own_rows_only():
    rows = [row("wide", f"m{i}", 0, 0.5, 1.0, market_price=0.1 * i) for i in range(10)]
    rows += [row("narrow", f"m{i}", 0, 0.8, 1.0, market_price=0.1 * i) for i in range(6)]
    board = {r.forecaster: r for r in leaderboard(rows, replicates=200)}
    narrow = board["narrow"]
    assert narrow.subset == "subset: 6 of 10 markets" and (
        narrow.n_markets,
        narrow.n_markets_all,
    ) == (6, 10)
    assert narrow.market_brier == pytest.approx(sum((0.1 * i - 1) ** 2 for i in range(6)) / 6)
    assert (
        narrow.diff_ci_low <= narrow.brier_diff_vs_market <= narrow.diff_ci_high
        and narrow.ci_note is None
    )
    assert narrow.skill_vs_market == pytest.approx(1 - 0.04 / narrow.market_brier)


def test_subsets_are_marked_within_each_slice():
    rows = [row("a", f"m{i}", 0, 0.5, 1.0) for i in range(8)] + [
        row("b", f"m{i}", 0, 0.5, 1.0) for i in range(8)
    ]
    rows = [
        r
        if not (r.forecaster == "b" and r.market_id == "m7")
        else row("b", "m7", 0, None, 1.0, error="x")
        for r in rows
    ]
    board = {r.forecaster: r for r in leaderboard(rows, replicates=50)}
    assert (
        board["b"].subset == "subset: 7 of 8 markets" and board["b"].n_failed == 1
    )  # failures shrink coverage


def test_the_pairwise_comparison_draws_no_interval_under_5_markets():
    rows = [row("a", f"m{i}", 0, 0.8, 1.0) for i in range(4)] + [
        row("b", f"m{i}", 0, 0.6, 1.0) for i in range(4)
    ]
    c = compare(rows, "a", "b", replicates=100)
    assert (
        c.n_markets == 4
        and c.difference == pytest.approx(0.04 - 0.16)
        and c.ci_low is c.ci_high is None
    )
