import asyncio

import pytest

from hindcast.errors import LeakageError
from hindcast.forecasters import registry
from hindcast.forecasters.base import Context
from hindcast.forecasters.baselines import BaseRateForecaster, MarketForecaster
from hindcast.records import PricePoint, Question, Resolution
from tests.helpers import at

T0 = at("2025-11-01T00:00:00")
Q = Question("target", "Will it?", "", T0)


def resolution(market_id, status, known):
    return Resolution(market_id, status, resolved_at=at(known), known_at=at(known))


def base_rate(resolutions):
    return asyncio.run(
        BaseRateForecaster().forecast(Q, Context(T0, "target", (), resolutions))
    ).probability


def test_base_rate_walks_forward_later_resolutions_change_nothing():
    before = [
        resolution("a", "yes", "2025-10-01T00:00:00"),
        resolution("b", "no", "2025-10-02T00:00:00"),
    ]
    p = base_rate(before)
    assert p == pytest.approx((1 + 1) / (2 + 2))
    for status in ("yes", "no"):
        assert base_rate(before + [resolution("later", status, "2025-11-15T00:00:00")]) == p


def test_base_rate_excludes_an_outcome_known_exactly_at_t0_and_ambiguous_ones():
    before = [resolution("a", "yes", "2025-10-01T00:00:00")]
    assert base_rate(before + [resolution("edge", "yes", "2025-11-01T00:00:00")]) == base_rate(
        before
    )
    assert base_rate(
        before + [resolution("half", "fifty-fifty", "2025-10-05T00:00:00")]
    ) == base_rate(before)


def test_base_rate_uses_known_at_not_the_earlier_resolution_instant():
    late_news = Resolution(
        "x", "yes", resolved_at=at("2025-10-30T00:00:00"), known_at=at("2025-11-02T00:00:00")
    )
    assert base_rate([late_news]) == 0.5


def test_market_baseline_takes_the_last_price_strictly_before_t0():
    history = (PricePoint(at("2025-10-31T00:00:00"), 0.3), PricePoint(T0, 0.8))
    answer = asyncio.run(MarketForecaster().forecast(Q, Context(T0, "target", history, ())))
    assert answer.probability == 0.3


def test_market_baseline_records_a_failure_when_no_price_precedes_t0():
    answer = asyncio.run(
        MarketForecaster().forecast(Q, Context(T0, "target", (PricePoint(T0, 0.8),), ()))
    )
    assert answer.probability is None and "no market price before t0" in answer.error


def test_context_refuses_to_hand_out_a_price_at_t0():
    ctx = Context(T0, "target", (PricePoint(at("2025-10-31T00:00:00"), 0.3),), ())
    ctx._history = ctx._history + (PricePoint(T0, 0.9),)  # simulate a corrupted history
    with pytest.raises(LeakageError):
        ctx.price_history()


def test_registry_builds_specs_and_rejects_unknown_names():
    assert registry.create("constant:p=0.3").name == "constant:p=0.3"
    with pytest.raises(Exception, match="unknown forecaster 'oracle'"):
        registry.create("oracle")
    with pytest.raises(Exception, match="not a probability"):
        registry.create("constant:p=2")
