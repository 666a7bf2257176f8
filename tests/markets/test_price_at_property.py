"""Property: price_at never returns a point at or after t0, and never skips a later eligible one."""

from datetime import datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from hindcast.markets.prices import history_before, price_at, sort_history
from hindcast.records import PricePoint
from hindcast.timeutil import UTC

EPOCH = datetime(2025, 1, 1, tzinfo=UTC)
offsets = st.integers(min_value=0, max_value=10**6)  # microseconds: collisions with t0 are likely
instants = offsets.map(lambda us: EPOCH + timedelta(microseconds=us))
histories = st.lists(
    st.tuples(instants, st.floats(0, 1)), max_size=30, unique_by=lambda x: x[0]
).map(lambda pts: sort_history([PricePoint(t, p) for t, p in pts]))


@given(histories, instants)
def test_price_at_is_the_last_point_strictly_before_t0(history, t0):
    point = price_at(history, t0)
    earlier = [p for p in history if p.t < t0]
    if point is None:
        assert earlier == []
    else:
        assert point.t < t0 and point == earlier[-1]


@given(histories)
def test_a_point_exactly_at_t0_is_never_returned(history):
    for point in history:
        got = price_at(history, point.t)
        assert got is None or got.t < point.t
    assert all(p.t < t0 for t0 in (h.t for h in history) for p in history_before(history, t0))
