import math

import pytest

from hindcast.records import Forecast, Question
from tests.helpers import at


@pytest.mark.parametrize("p", [-0.01, 1.01, math.nan, math.inf])
def test_forecast_rejects_non_probabilities(p):
    with pytest.raises(ValueError):
        Forecast(p)


def test_forecast_is_a_probability_or_a_failure_never_both():
    with pytest.raises(ValueError):
        Forecast(0.3, error="also failed")
    with pytest.raises(ValueError):
        Forecast(None)
    failed = Forecast.failure("no number in answer", raw="I cannot say")
    assert not failed.ok and failed.probability is None and failed.raw == "I cannot say"


def test_question_carries_no_outcome():
    fields = set(Question.__dataclass_fields__)
    assert not fields & {"outcome", "resolution", "resolved_at", "status", "known_at"}
    Question("m", "Will it?", "", at("2025-10-01T00:00:00"))
