import pytest

from hindcast.errors import CutoffError
from hindcast.records import Market, PricePoint, Resolution
from hindcast.replay.cutoffs import fraction_cutoff, instant_cutoff, lifetime, schedule
from tests.helpers import at

MARKET = Market("m1", "Will it happen?", "", opened_at=at("2025-09-01T00:00:00"))
RESOLUTION = Resolution(
    "m1", "no", resolved_at=at("2025-10-11T00:00:00"), known_at=at("2025-10-12T01:00:00")
)
LIFE = lifetime(MARKET, RESOLUTION, ())


def test_fraction_one_is_the_day_before_resolution_and_quarters_split_the_rest():
    assert fraction_cutoff(LIFE, 1.0).t0 == at("2025-10-10T00:00:00")
    assert fraction_cutoff(LIFE, 0.5).t0 == at("2025-09-20T12:00:00")
    assert fraction_cutoff(LIFE, 0.25).label == "f=0.25"


@pytest.mark.parametrize(
    "t0", ["2025-10-11T00:00:00", "2025-10-11T00:00:01", "2026-01-01T00:00:00"]
)
def test_cutoff_at_or_after_resolution_is_refused(t0):
    with pytest.raises(
        CutoffError, match="at or after market m1's effective resolution 2025-10-11T00:00:00Z"
    ):
        instant_cutoff(LIFE, at(t0))


def test_cutoff_just_before_resolution_is_allowed():
    assert instant_cutoff(LIFE, at("2025-10-10T23:59:59")).label == "at=2025-10-10T23:59:59Z"


def test_cutoff_before_opening_is_refused():
    with pytest.raises(CutoffError, match="opening"):
        instant_cutoff(LIFE, at("2025-08-01T00:00:00"))


@pytest.mark.parametrize("f", [0.0, -0.5, 1.5, float("nan")])
def test_fractions_outside_zero_one_are_refused(f):
    with pytest.raises(CutoffError):
        fraction_cutoff(LIFE, f)


def test_lifetime_without_opening_starts_at_first_price_and_needs_more_than_a_day():
    history = (PricePoint(at("2025-10-10T06:00:00"), 0.5),)
    life = lifetime(Market("m1", "Q", ""), RESOLUTION, history)
    assert life.start == at("2025-10-10T06:00:00")
    with pytest.raises(CutoffError, match="one day or shorter"):
        fraction_cutoff(life, 0.5)


def test_schedule_stops_at_the_first_refused_cutoff():
    with pytest.raises(CutoffError):
        schedule([LIFE], (0.5,), (at("2025-10-20T00:00:00"),))
    assert len(schedule([LIFE], (0.25, 1.0), (at("2025-10-01T00:00:00"),))) == 3
