"""Time-averaged scores on a hand-built sweep, and the market-relative log score's extremes —
every expected number computed by hand here, not by the code under test."""

import math

import pytest

from hindcast.analysis import MarketFacts, Settings, relative_log, time_average
from tests.analysis.rows import row

S = Settings(replicates=200)


def test_time_averaged_brier_weights_each_t0_by_the_time_it_stands():
    # market a resolves YES on day 10; forecasts on days 0, 4, 8 stand 4, 4 and 2 days
    rows = [
        row("f", "a", 0, 0.2, 1.0, 0.5),
        row("f", "a", 4, 0.6, 1.0, 0.7),
        row("f", "a", 8, 0.9, 1.0, 0.8),
    ]
    (avg,) = [a for a in time_average.averages(rows) if a.forecaster == "f"]
    assert avg.brier == pytest.approx((0.64 * 4 + 0.16 * 4 + 0.01 * 2) / 10, abs=1e-15)
    assert avg.market_brier == pytest.approx((0.25 * 4 + 0.09 * 4 + 0.04 * 2) / 10, abs=1e-15)
    assert avg.log_score == pytest.approx(
        (4 * math.log(0.2) + 4 * math.log(0.6) + 2 * math.log(0.9)) / 10, abs=1e-15
    )
    assert avg.seconds == 10 * 86400


def test_a_failed_t0_leaves_the_previous_forecast_standing_and_nothing_before_the_first_is_scored():
    rows = [
        row("f", "a", 0, None, 0.0),
        row("f", "a", 2, 0.2, 0.0),
        row("f", "a", 6, None, 0.0),
        row("f", "a", 8, 0.5, 0.0),
    ]
    (avg,) = [a for a in time_average.averages(rows) if a.forecaster == "f"]
    # 0.2 stands from day 2 to day 8 (6 days), 0.5 from day 8 to 10 (2 days)
    assert avg.brier == pytest.approx((0.04 * 6 + 0.25 * 2) / 8, abs=1e-15)
    assert avg.market_brier is None  # no price at those t0s: not scored, not imputed


def test_the_figure_is_the_mean_over_markets_beside_spot_scores_per_cutoff():
    rows = [
        row("f", "a", 0, 0.2, 1.0, label="f=0.5"),
        row("f", "a", 5, 0.6, 1.0, label="f=1"),
        row("f", "b", 0, 0.5, 0.0, resolved_day=2, label="f=0.5"),
        row("f", "b", 1, 0.1, 0.0, resolved_day=2, label="f=1"),
    ]
    lines = {(s.forecaster, s.measure): s for s in time_average.lines(rows, MarketFacts(), S)}
    a = (0.64 * 5 + 0.16 * 5) / 10
    b = (0.25 * 1 + 0.01 * 1) / 2
    assert lines[("f", "time-averaged")].brier == pytest.approx((a + b) / 2, abs=1e-15)
    assert lines[("f", "spot f=0.5")].brier == pytest.approx((0.64 + 0.25) / 2, abs=1e-15)
    assert lines[("f", "spot f=1")].brier == pytest.approx((0.16 + 0.01) / 2, abs=1e-15)
    assert lines[("f", "time-averaged")].brier_low is None  # 2 markets: no interval (fewer than 5)


@pytest.mark.parametrize(
    "p, market, y, expected",
    [
        (
            1.0,
            0.5,
            1.0,
            100 * (math.log(1 - 1e-6) + math.log(2)),
        ),  # certain and right: ≈ +100 ln 2 (1 clipped)
        (
            0.0,
            0.5,
            1.0,
            100 * (math.log(1e-6) - math.log(0.5)),
        ),  # certain and wrong: clipped, finite
        (0.5, 0.0, 1.0, 100 * (math.log(0.5) - math.log(1e-6))),  # the market certain and wrong
        (1.0, 1.0, 0.0, 0.0),  # both certain and wrong: equal, so 0
        (0.3, 0.3, 0.0, 0.0),
        (0.8, 0.4, 0.0, 100 * (math.log(0.2) - math.log(0.6))),
    ],
)
def test_relative_log_score_and_its_extremes(p, market, y, expected):
    assert relative_log.relative_log(p, market, y) == pytest.approx(expected, abs=1e-9)


def test_relative_log_counts_the_rows_it_clipped_and_names_the_policy():
    rows = [
        row("f", "a", 0, 1.0, 1.0, 0.5),
        row("f", "b", 0, 0.7, 1.0, 0.0),
        row("f", "c", 0, 0.6, 0.0, 0.5),
    ]
    (found,) = relative_log.relative_logs(rows, MarketFacts(), S)
    assert found.n_clipped == 2 and found.policy == "log-clip-1e-6" and found.n_rows == 3
    expected = (
        100
        * (
            (math.log(1 - 1e-6) - math.log(0.5))
            + (math.log(0.7) - math.log(1e-6))
            + (math.log(0.4) - math.log(0.5))
        )
        / 3
    )
    assert found.mean == pytest.approx(expected, rel=1e-12)
    assert math.isfinite(found.mean)
    finding = relative_log.finding([found])
    assert "log-clip-1e-6" in finding.notes[0] and finding.rows[0][-1] == "log-clip-1e-6"
