from datetime import timedelta

from hindcast.markets.prices import history_before, price_at
from hindcast.records import PricePoint
from tests.helpers import at

HISTORY = (
    PricePoint(at("2025-10-01T00:00:00"), 0.2),
    PricePoint(at("2025-10-02T00:00:00"), 0.4),
    PricePoint(at("2025-10-03T00:00:00"), 0.9),
)


def test_a_point_exactly_at_t0_is_not_used():
    assert price_at(HISTORY, at("2025-10-02T00:00:00")).p == 0.2


def test_a_point_one_microsecond_before_t0_is_used():
    assert price_at(HISTORY, at("2025-10-02T00:00:00") + timedelta(microseconds=1)).p == 0.4


def test_no_point_before_t0_means_no_price():
    assert price_at(HISTORY, at("2025-10-01T00:00:00")) is None
    assert price_at((), at("2025-10-01T00:00:00")) is None


def test_history_before_stops_strictly_before_t0():
    assert [p.p for p in history_before(HISTORY, at("2025-10-03T00:00:00"))] == [0.2, 0.4]
    assert history_before(HISTORY, at("2030-01-01T00:00:00")) == HISTORY
