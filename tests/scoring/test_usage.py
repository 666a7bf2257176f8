"""Usage and cost per forecaster: sums, missing is never 0, unpriced models are 'unknown'."""

from __future__ import annotations

from pathlib import Path

import pytest

from hindcast.errors import ConfigError
from hindcast.records import Forecast
from hindcast.runs.rows import StoredForecast
from hindcast.scoring.costs import load_prices
from hindcast.scoring.usage import (
    NO_MODEL,
    NOT_RECORDED,
    PRICED,
    UNKNOWN,
    summarize,
    summarize_usages,
)
from tests.helpers import at

PRICES = load_prices()


def llm(
    prompt=1000,
    completion=100,
    requests=1,
    cache_hits=0,
    retries=0,
    latency=2.0,
    name="gpt-4.1-mini",
    **extra,
):
    usage = {
        "model": f"openai:{name}",
        "model_name": name,
        "endpoint": "https://api.openai.com/v1",
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "requests": requests,
        "cache_hits": cache_hits,
        "retries": retries,
        "latency_s": latency,
        **extra,
    }
    return {k: v for k, v in usage.items() if v is not None}


def stored(forecaster, usage, p=0.5):
    forecast = (
        Forecast(p, usage=usage)
        if p is not None
        else Forecast.failure("no probability", usage=usage)
    )
    return StoredForecast("r", forecaster, "m1", at("2025-01-01T00:00:00"), "f=0.5", forecast)


def test_sums_per_forecaster_count_failures_and_cached_replies():
    rows = [
        stored("zs", llm()),
        stored("zs", llm(requests=0, cache_hits=1, latency=0.0)),
        stored("zs", llm(retries=2, latency=4.0), p=None),
        stored("market", {}),
    ]
    zs, market = summarize(rows, PRICES)["zs"], summarize(rows, PRICES)["market"]
    assert (zs.n_forecasts, zs.n_with_model, zs.models) == (3, 3, ("gpt-4.1-mini",))
    assert (zs.prompt_tokens, zs.completion_tokens, zs.requests, zs.cache_hits, zs.retries) == (
        3000,
        300,
        2,
        1,
        2,
    )
    assert zs.latency_s == 6.0 and zs.mean_latency_s == 2.0
    assert (
        zs.cost_usd == pytest.approx((3000 * 0.40 + 300 * 1.60) / 1e6) and zs.cost_status == PRICED
    )
    assert zs.cost_text() == "$0.0017"
    assert (
        market.cost_status == NO_MODEL
        and market.cost_text() == "—"
        and market.prompt_tokens is None
    )


def test_the_fresh_cost_prices_only_replies_not_served_from_the_cache():
    fresh = llm(fresh_prompt_tokens=1000, fresh_completion_tokens=100)
    cached = llm(requests=0, cache_hits=1, fresh_prompt_tokens=0, fresh_completion_tokens=0)
    (s,) = summarize_usages([("zs", fresh), ("zs", cached)], PRICES).values()
    assert s.cost_usd == pytest.approx(2 * (1000 * 0.40 + 100 * 1.60) / 1e6)
    assert s.cost_fresh_usd == pytest.approx((1000 * 0.40 + 100 * 1.60) / 1e6)
    assert (s.fresh_prompt_tokens, s.fresh_completion_tokens) == (1000, 100)
    (old,) = summarize_usages([("zs", llm())], PRICES).values()  # recorded before fresh_* existed
    assert old.cost_usd is not None and old.cost_fresh_usd is None


def test_a_model_not_in_the_table_costs_unknown_never_zero():
    (s,) = summarize_usages([("x", llm(name="mystery-7b"))], PRICES).values()
    assert s.cost_usd is None and s.cost_status == UNKNOWN and s.cost_text() == "unknown"
    assert s.unpriced == ("mystery-7b",) and s.prompt_tokens == 1000  # tokens are still counted


def test_a_missing_field_is_not_recorded_never_zero():
    old = {
        "model": "openai:gpt-4.1-mini",
        "endpoint": "e",
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "requests": 1,
        "cache_hits": 0,
    }  # an older row: no model_name, retries, latency_s
    (s,) = summarize_usages([("x", old), ("x", llm())], PRICES).values()
    assert (s.prompt_tokens, s.requests) == (1010, 2)
    assert s.retries is None and s.latency_s is None and s.mean_latency_s is None
    assert s.cost_usd is None and s.unpriced == (NOT_RECORDED,)


def test_a_free_local_model_costs_zero_dollars_because_the_table_says_so():
    (s,) = summarize_usages([("local", llm(name="SmolLM2-135M-Instruct"))], PRICES).values()
    assert s.cost_usd == 0.0 and s.cost_status == PRICED and s.cost_text() == "$0.0000"


def test_a_user_price_table_overrides_and_adds(tmp_path: Path):
    path = tmp_path / "prices.toml"
    path.write_text(
        '"mystery-7b" = { input = 1.0, output = 2.0 }\n"gpt-4.1-mini" = { input = 0.0, '
        "output = 0.0 }\n"
    )
    prices = load_prices(path)
    found = summarize_usages([("a", llm(name="mystery-7b")), ("b", llm())], prices)
    assert (
        found["a"].cost_usd == pytest.approx((1000 * 1.0 + 100 * 2.0) / 1e6)
        and found["b"].cost_usd == 0.0
    )


@pytest.mark.parametrize(
    "text", ['"m" = { input = -1, output = 0 }\n', '"m" = { input = 1 }\n', "not toml ["]
)
def test_a_bad_price_table_is_a_config_error_naming_the_file(tmp_path: Path, text):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="bad.toml"):
        load_prices(path)


def test_garbage_in_a_usage_record_is_not_recorded():
    (s,) = summarize_usages([("x", llm(prompt="many", latency=float("nan")))], PRICES).values()
    assert s.prompt_tokens is None and s.latency_s is None and s.cost_usd is None
