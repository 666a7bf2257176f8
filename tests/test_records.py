import dataclasses
import json
import math

import pytest

from hindcast.records import Forecast, MarketStoreRef, Question, RunManifest, Usage
from hindcast.runs import identity_of, manifest_form
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


USAGE = {
    "model": "openai-compatible:http://127.0.0.1:8000/v1#m",
    "model_name": "m",
    "endpoint": "http://127.0.0.1:8000/v1",
    "temperature": 0.0,
    "prompt_tokens": 120,
    "completion_tokens": 8,
    "requests": 1,
    "cache_hits": 0,
    "retries": 0,
    "latency_s": 0,
    "fresh_prompt_tokens": 120,
    "fresh_completion_tokens": 8,
    "structured": "json_schema",
    "steps": [{"step": "answer", "raw": "0.4"}],
}


def test_usage_reads_its_fields_and_round_trips_to_the_same_json():
    u = Usage.of(USAGE)
    assert (u.model_name, u.prompt_tokens, u.requests, u.latency_s) == ("m", 120, 1, 0)
    assert u.steps == ({"step": "answer", "raw": "0.4"},)
    assert u.extra == {"temperature": 0.0, "structured": "json_schema"}
    assert dict(u) == USAGE and u == USAGE and u["steps"] == USAGE["steps"]
    assert json.dumps(u.to_dict(), sort_keys=True) == json.dumps(USAGE, sort_keys=True)
    assert Forecast(0.4, usage=USAGE).usage == u  # a mapping given to a Forecast is read


def test_usage_keeps_a_value_of_the_wrong_kind_as_given_and_does_not_count_it():
    given = {"model_name": "m", "prompt_tokens": -3, "retries": True, "latency_s": "slow"}
    u = Usage.of(given)
    assert (u.prompt_tokens, u.retries, u.latency_s) == (None, None, None)
    assert dict(u) == given and u.uses_model()
    assert not Usage().uses_model() and dict(Usage()) == {}


def test_a_version_1_run_manifest_is_stored_in_the_layout_runs_always_had():
    m = RunManifest(
        identity=identity_of({"store_version": "m-1"}),
        forecasters={"constant": {"class": "ConstantForecaster"}},
        market_store=MarketStoreRef("m-1", "/m"),
        archive=None,
        scoring_policies={"outcome": "exclude-non-binary"},
        git_revision=None,
        python="3.11.7",
        packages={"httpx": "0.28.1"},
    )
    assert m.version == 1
    assert manifest_form(m) == {
        "identity": {"store_version": "m-1"},
        "forecasters": {"constant": {"class": "ConstantForecaster"}},
        "market_store": {"version": "m-1", "root": "/m"},
        "archive": None,
        "scoring_policies": {"outcome": "exclude-non-binary"},
        "git_revision": None,
        "python": "3.11.7",
        "packages": {"httpx": "0.28.1"},
    }
    later = manifest_form(dataclasses.replace(m, version=2))
    assert later["manifest_version"] == 2
