"""A fractional outcome (Manifold MKT): held by the Resolution, stored and read back, hashed only
when present (older bundles keep their version ids), and scored as o·log q + (1 − o)·log(1 − q)."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import pytest

from hindcast.markets.bundle import MarketBundle
from hindcast.markets.store import open_version, write_version
from hindcast.records import Market, Resolution
from hindcast.scoring.metrics import brier, log_score

T = datetime(2026, 1, 1, tzinfo=timezone.utc)


def bundle(*resolutions: Resolution) -> MarketBundle:
    markets = tuple(Market(r.market_id, f"q {r.market_id}", "") for r in resolutions)
    return MarketBundle(markets, resolutions, {})


def test_a_fractional_resolution_is_its_outcome_and_needs_its_fraction():
    assert Resolution("m", "fractional", T, T, 0.37).outcome == 0.37
    with pytest.raises(ValueError, match="fraction is set exactly"):
        Resolution("m", "fractional", T, T)
    with pytest.raises(ValueError, match="fraction is set exactly"):
        Resolution("m", "yes", T, T, 1.0)
    with pytest.raises(ValueError, match="outside"):
        Resolution("m", "fractional", T, T, 1.5)


def test_the_store_keeps_the_fraction_and_old_bundles_hash_as_before(tmp_path):
    plain = bundle(Resolution("a", "yes", T, T))
    before = plain.content_hash()
    assert before == bundle(Resolution("a", "yes", T, T)).content_hash()
    mixed = bundle(Resolution("a", "yes", T, T), Resolution("b", "fractional", T, T, 0.25))
    write_version(tmp_path, mixed)
    read = {r.market_id: r for r in open_version(tmp_path).bundle.resolutions}
    assert read["b"].outcome == 0.25 and read["a"].fraction is None and read["a"].outcome == 1.0
    write_version(tmp_path / "plain", plain)
    import pyarrow.parquet as pq

    version = open_version(tmp_path / "plain")
    assert "fraction" not in pq.read_table(version.path / "resolutions.parquet").column_names
    assert version.id == "m-" + before[:16]


def test_a_fractional_outcome_is_scored_as_such():
    assert brier([0.6], [0.25])[0] == pytest.approx(0.35**2)
    expected = 0.25 * math.log(0.6) + 0.75 * math.log(0.4)
    assert log_score([0.6], [0.25])[0] == pytest.approx(expected)
    assert log_score([0.6, 0.6], [1.0, 0.0]).tolist() == [math.log(0.6), math.log(0.4)]


def test_the_leaderboard_row_counts_accuracy_over_binary_outcomes_only():
    """A row whose outcome is 0.73 (MKT) is in Brier and the log score, not in accuracy."""
    from hindcast.scoring.aggregate import ScoredRow, summarise

    cases = [(0.9, 1.0), (0.8, 0.73), (0.3, 0.0), (0.6, 0.0)]  # accuracy over 1, 0, 0: 2/3
    rows = [
        ScoredRow("f", f"m{i}", T, "f=1", "t", p, None, o, None) for i, (p, o) in enumerate(cases)
    ]
    row = summarise("f", "all", rows, replicates=10, seed=0)
    assert row.accuracy == pytest.approx(2 / 3)  # the 0.73 row is neither right nor wrong
    assert row.brier == pytest.approx(sum((p - o) ** 2 for p, o in cases) / 4)


def test_a_fractional_outcome_pays_yes_o_and_no_one_minus_o_in_the_trading_simulation():
    """A YES share of a market resolved MKT at 0.73 pays 0.73, a NO share 0.27 (Manifold's
    payout): the market control's complete set still pays its size whatever the outcome."""
    from fractions import Fraction

    from hindcast.analysis.trading import FeeSchedule, Position, complete_set

    position = Position("market", "m", T, "t", 0.6, 0.6, 0.73, 1, 0)
    yes, no = complete_set(position, 10.0, FeeSchedule(0.0, origin="test"))
    assert (yes.side, no.side) == ("yes", "no")
    assert yes.payoff == 10 * Fraction(0.73) and no.payoff == 10 * (1 - Fraction(0.73))
    assert yes.payoff + no.payoff == 10
