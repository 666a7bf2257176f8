"""The numbers behind the report's figures, against hand-computed values."""

from __future__ import annotations

from datetime import timedelta

import pytest

from hindcast.leaderboard import analysis
from hindcast.leaderboard.tables import LeaderboardError
from hindcast.scoring.aggregate import ScoredRow
from tests.helpers import at

T = at("2025-10-01T00:00:00")


def row(forecaster, market, k, p, outcome=1.0, price=0.5, topic="politics", label=None):
    return ScoredRow(
        forecaster,
        market,
        T + timedelta(days=k),
        label or f"f={k / 4:g}",
        topic,
        p,
        None if p is not None else "timeout",
        outcome,
        price,
    )


def test_a_market_is_recovered_regressed_or_tied_by_mean_brier_beyond_the_tolerance():
    rows = [
        row("f", "m1", 1, 0.8),
        row("b", "m1", 1, 0.6),  # 0.04 vs 0.16: recovered
        row("f", "m2", 1, 0.6),
        row("b", "m2", 1, 0.8),  # regressed
        row("f", "m3", 1, 0.70),
        row("b", "m3", 1, 0.7125),  # 0.09 vs 0.08266: within 0.01 → tied
        row("f", "m4", 1, None),
        row("b", "m4", 1, 0.9),
    ]  # no shared row: not compared
    verdicts = analysis.market_verdicts(rows, "f", "b", tolerance=0.01)
    assert [(v.market_id, v.verdict) for v in verdicts] == [
        ("m1", "recovered"),
        ("m2", "regressed"),
        ("m3", "tied"),
    ]
    assert verdicts[0].brier == pytest.approx(0.04) and verdicts[0].baseline_brier == pytest.approx(
        0.16
    )
    assert verdicts[2].brier - verdicts[2].baseline_brier == pytest.approx(0.09 - 0.2875**2)


def test_verdicts_average_over_the_markets_shared_cutoffs_only():
    rows = [
        row("f", "m1", 1, 1.0),
        row("f", "m1", 2, 0.0),
        row("b", "m1", 1, 0.5),
        row("f", "m1", 3, 0.0),
    ]
    (v,) = analysis.market_verdicts(rows, "f", "b")
    assert (v.n_rows, v.brier, v.baseline_brier, v.verdict) == (1, 0.0, 0.25, "recovered")


def test_the_market_price_baseline_uses_the_price_at_the_same_t0():
    rows = [row("f", "m1", 1, 0.9, price=0.7), row("f", "m2", 1, 0.9, price=None)]
    (v,) = analysis.market_verdicts(rows, "f", analysis.MARKET_PRICE)
    assert v.market_id == "m1" and v.baseline_brier == pytest.approx(0.09)


def test_topic_net_is_recovered_minus_regressed():
    verdicts = [
        analysis.MarketVerdict(f"m{i}", topic, 1, 0.0, 0.0, verdict)
        for i, (topic, verdict) in enumerate(
            [
                ("sports", "recovered"),
                ("sports", "recovered"),
                ("sports", "regressed"),
                ("crypto", "regressed"),
                ("crypto", "tied"),
            ]
        )
    ]
    nets = analysis.topic_net(verdicts)
    assert [(n.topic, n.recovered, n.regressed, n.tied, n.net) for n in nets] == [
        ("crypto", 0, 1, 1, -1),
        ("sports", 2, 1, 0, 1),
    ]


def test_fraction_curves_and_the_market_curve_count_each_cutoff_once():
    rows = [
        row("a", "m1", 1, 0.5),
        row("b", "m1", 1, 1.0),
        row("a", "m2", 1, 0.0, price=0.9),
        row("a", "m1", 2, 1.0),
        row("a", "m3", 2, 0.2, label="at=2025-10-03T00:00:00Z"),
    ]
    curves = analysis.fraction_curves(rows)
    assert [(p.fraction, p.brier, p.n) for p in curves["a"]] == [(0.25, 0.625, 2), (0.5, 0.0, 1)]
    market = analysis.market_curve(rows)
    assert [(p.fraction, p.n) for p in market] == [(0.25, 2), (0.5, 1)]
    assert market[0].brier == pytest.approx((0.25 + 0.01) / 2)


def test_reliability_tables_cover_each_forecaster_with_a_valid_forecast():
    rows = [row("a", "m1", 1, 0.05, outcome=0.0), row("a", "m2", 1, 0.95), row("b", "m1", 1, None)]
    tables = analysis.reliability(rows)
    assert list(tables) == ["a"] and sum(b.n for b in tables["a"]) == 2


def test_an_unknown_baseline_is_an_error_naming_the_choices():
    with pytest.raises(LeaderboardError, match="'market price' or one of: a"):
        analysis.check_baseline([row("a", "m1", 1, 0.5)], "gpt-9")
