"""The OpenAI-compatible client against the shipped fake model on a real 127.0.0.1 socket:
JSON answers, retries (429 with Retry-After, 5xx, timeouts), bounded attempts, structured
output falling back, the concurrency limit, and keys that never leave the request header.
An outage (retries exhausted, timeout, refused connection, 401/403, missing key) is an
InfrastructureError naming the endpoint; a reply that cannot be used is a ChatError.
"""

import asyncio
import threading
import time

import httpx
import pytest

from hindcast.errors import ForecastError, InfrastructureError
from hindcast.llm import client as llm
from hindcast.llm.cache import ResponseCache
from hindcast.llm.client import ChatClient, ChatError, parse_model, retry_after
from hindcast.llm.fake import FakeChatModel, Reply, answer, error
from hindcast.llm.models import Models

MESSAGES = [{"role": "user", "content": "Will it rain?"}]


class Sleeps(list):
    async def __call__(self, seconds):
        self.append(seconds)


def client(url, **kw):
    kw.setdefault("sleep", Sleeps())
    return ChatClient(parse_model(f"openai-compatible:{url}#fake-model"), **kw)


def test_model_specs():
    openai = parse_model("openai:gpt-4.1-mini")
    assert (openai.endpoint, openai.model, openai.key_env) == (
        "https://api.openai.com/v1",
        "gpt-4.1-mini",
        "OPENAI_API_KEY",
    )
    compat = parse_model("openai-compatible:http://127.0.0.1:8080/v1/#qwen", "VLLM_KEY")
    assert (compat.endpoint, compat.model, compat.key_env) == (
        "http://127.0.0.1:8080/v1",
        "qwen",
        "VLLM_KEY",
    )
    assert (
        parse_model("local").identity
        == parse_model("local").identity
        == "local:SmolLM2-135M-Instruct.Q4_1.gguf+transformers"
    )
    for bad in (
        "gpt-4",
        "openai:",
        "openai-compatible:127.0.0.1:8080#m",
        "openai-compatible:http://h/v1",
    ):
        with pytest.raises(ValueError):
            parse_model(bad)


def test_a_json_answer_over_a_real_socket():
    fake = FakeChatModel(
        [
            Reply(
                content='{"probability": 0.25}', usage={"prompt_tokens": 31, "completion_tokens": 7}
            )
        ]
    )
    with fake.serve() as url:
        reply = asyncio.run(
            client(url).complete(MESSAGES, schema={"type": "object"}, temperature=0.0)
        )
    assert (reply.content, reply.usage, reply.cached) == (
        '{"probability": 0.25}',
        {"prompt_tokens": 31, "completion_tokens": 7},
        False,
    )
    body = fake.requests[0]
    assert (
        body["model"] == "fake-model"
        and body["messages"] == MESSAGES
        and body["temperature"] == 0.0
    )
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == {"type": "object"}


def test_429_waits_as_long_as_retry_after_says():
    fake = FakeChatModel([error(429, "slow down", retry_after=7), answer("ok")])
    sleeps = Sleeps()
    with fake.serve() as url:
        reply = asyncio.run(client(url, sleep=sleeps).complete(MESSAGES))
    assert reply.content == "ok" and sleeps == [7.0] and len(fake.requests) == 2


def test_5xx_backs_off_exponentially_then_succeeds():
    fake = FakeChatModel([error(503), error(500), answer("fine")])
    sleeps = Sleeps()
    with fake.serve() as url:
        reply = asyncio.run(client(url, sleep=sleeps, backoff=0.5).complete(MESSAGES))
    assert reply.content == "fine" and sleeps == [0.5, 1.0]


def test_retries_are_bounded_and_the_last_reason_is_kept():
    fake = FakeChatModel(default=error(502, "bad gateway"))
    with (
        fake.serve() as url,
        pytest.raises(
            InfrastructureError, match=r"HTTP 502: bad gateway \(gave up after 3 attempts\)"
        ) as caught,
    ):
        asyncio.run(client(url, max_retries=2).complete(MESSAGES))
    assert (
        len(fake.requests) == 3
        and caught.value.endpoint == url
        and not isinstance(caught.value, ForecastError)
    )


def test_a_timeout_is_retried_then_reported():
    fake = FakeChatModel(default=answer("late", delay=1.0))
    with fake.serve() as url:
        with pytest.raises(
            InfrastructureError,
            match=r"timeout after 0\.2s \(ReadTimeout\) \(gave up after 2 attempts\)",
        ):
            asyncio.run(client(url, timeout=0.2, max_retries=1).complete(MESSAGES))
        # the fake records a request in its own handler thread, which a loaded machine may run
        # after the client has already given up: wait for it before the server stops (a CI run
        # failed with 1 recorded)
        deadline = time.monotonic() + 10
        while len(fake.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert len(fake.requests) == 2


def test_a_refused_connection_is_reported_not_raised_raw():
    with FakeChatModel().serve() as url:
        pass  # the port is closed now
    with pytest.raises(InfrastructureError, match="connection failed") as caught:
        asyncio.run(client(url, max_retries=1).complete(MESSAGES))
    assert caught.value.endpoint == url


@pytest.mark.parametrize(
    "reply, reason",
    [
        (error(400, "model not found"), "HTTP 400: model not found"),
        (Reply(body="<html>oops</html>"), "not JSON"),
        (Reply(body='{"choices": []}'), "malformed chat response"),
    ],
)
def test_client_errors_are_not_retried(reply, reason):
    fake = FakeChatModel([reply], default=answer("never reached"))
    with fake.serve() as url, pytest.raises(ChatError, match=reason):
        asyncio.run(client(url).complete(MESSAGES))
    assert len(fake.requests) == 1


@pytest.mark.parametrize("status", [401, 403, 404])
def test_a_refused_key_or_a_wrong_url_is_an_outage_asked_once(status):
    fake = FakeChatModel([error(status, "no")], default=answer("never reached"))
    with fake.serve() as url, pytest.raises(InfrastructureError, match=f"HTTP {status}") as caught:
        asyncio.run(client(url).complete(MESSAGES))
    assert len(fake.requests) == 1 and caught.value.endpoint == url


def test_an_endpoint_without_json_schema_falls_back_one_level_at_a_time():
    fake = FakeChatModel(
        [
            error(
                500, "validation error: ('body', 'response_format', 'type') should be json_object"
            ),
            error(400, "json_object schema is not supported"),
            error(400, "unknown field response_format"),
            answer("0.3"),
        ]
    )
    cache = ResponseCache()
    with fake.serve() as url:
        c = client(url, cache=cache)
        assert asyncio.run(c.complete(MESSAGES, schema={"type": "object"})).content == "0.3"
        again = asyncio.run(client(url, cache=cache).complete(MESSAGES, schema={"type": "object"}))
    formats = [r.get("response_format", {}).get("type") for r in fake.requests]
    assert formats == ["json_schema", "json_object", "json_object", None] and c.structured == "none"
    assert (
        fake.requests[1]["response_format"]["schema"] == {"type": "object"}
        and "schema" not in fake.requests[2]["response_format"]
    )
    assert again.cached and again.content == "0.3"  # a fresh client (a re-run) hits the cache


def test_the_key_travels_only_in_the_authorization_header(tmp_path):
    secret = "sk-test-0123456789abcdef"
    fake = FakeChatModel(default=answer('{"probability": 0.4}'))
    cache = ResponseCache(tmp_path / "cache.sqlite")
    models = Models({"MY_KEY": secret}, cache)
    with fake.serve() as url:
        c = models.client(f"openai-compatible:{url}#m", "MY_KEY")
        asyncio.run(c.complete(MESSAGES))
        usage = llm.UsageTally(c).record()
    assert fake.headers[0]["authorization"] == f"Bearer {secret}"
    assert secret not in repr(c) and secret not in str(usage) and secret not in str(fake.requests)
    assert secret not in repr(models)
    cache.close()
    assert secret.encode() not in (tmp_path / "cache.sqlite").read_bytes()


def test_a_missing_key_is_an_outage_naming_the_variable_but_a_cached_reply_needs_none():
    fake = FakeChatModel(default=answer("0.4"))
    cache = ResponseCache()
    with fake.serve() as url:
        spec = f"openai-compatible:{url}#m"
        with pytest.raises(InfrastructureError, match="MY_KEY is not set") as caught:
            asyncio.run(Models({}, cache).client(spec, "MY_KEY").complete(MESSAGES))
        assert caught.value.endpoint == url and fake.requests == []
        asyncio.run(Models({"MY_KEY": "k"}, cache).client(spec, "MY_KEY").complete(MESSAGES))
        replay = asyncio.run(Models({}, cache).client(spec, "MY_KEY").complete(MESSAGES))
    assert replay.cached and len(fake.requests) == 1


def test_two_models_share_no_client_and_no_key():
    one, two = Models({"K": "a"}), Models({"K": "b"})
    spec = "openai-compatible:http://127.0.0.1:9/v1#m"
    assert one.client(spec, "K") is one.client(spec, "K") and one.client(
        spec, "K"
    ) is not two.client(spec, "K")
    assert (one.client(spec, "K")._headers(), two.client(spec, "K")._headers()) == (
        {"Authorization": "Bearer a"},
        {"Authorization": "Bearer b"},
    )


def test_an_open_breaker_stops_calls_to_its_endpoint_only():
    fake = FakeChatModel(default=answer("0.4"))
    models = Models()
    with fake.serve() as url:
        models.breakers.threshold = 1
        models.breakers.failure(url, "connection refused")
        with pytest.raises(llm.CircuitOpen, match="circuit breaker open"):
            asyncio.run(models.client(f"openai-compatible:{url}#m").complete(MESSAGES))
        assert fake.requests == []
        assert models.breakers.reason("http://127.0.0.1:9/v1") is None
        models.breakers.success(url)  # an open breaker stays open for the rest of the sweep
        assert models.breakers.reason(url) == "connection refused"


def test_a_reply_records_its_retries_and_latency():
    fake = FakeChatModel([error(503, "busy", retry_after=0), answer("0.4")])
    with fake.serve() as url:
        c = client(url, cache=ResponseCache())
        first = asyncio.run(c.complete(MESSAGES))
        again = asyncio.run(c.complete(MESSAGES))
    assert (
        first.retries == 1
        and first.latency_s > 0
        and (again.cached, again.retries, again.latency_s) == (True, 0, 0.0)
    )
    usage = llm.UsageTally(c)
    usage.add("final", first)
    usage.add("final", again)
    t = usage.record()
    assert (t["retries"], t["requests"], t["cache_hits"], t["model_name"]) == (
        1,
        1,
        1,
        "fake-model",
    )
    assert (t["prompt_tokens"], t["fresh_prompt_tokens"]) == (20, 10)


def test_credentials_in_a_model_url_are_refused_without_echoing_them():
    from hindcast.errors import ConfigError

    with pytest.raises(ConfigError, match="key_env") as caught:
        parse_model("openai-compatible:http://alice:hunter2@127.0.0.1:9/v1#m")
    assert "hunter2" not in str(caught.value) and "alice" not in str(caught.value)


def test_no_more_requests_in_flight_than_the_limit():
    state = {"now": 0, "max": 0}
    lock = threading.Lock()

    def slow(body):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.15)
        with lock:
            state["now"] -= 1
        return answer("ok")

    async def many(c):
        return await asyncio.gather(
            *(c.complete([{"role": "user", "content": str(i)}]) for i in range(6))
        )

    with FakeChatModel(default=slow).serve() as url:
        replies = asyncio.run(many(client(url, concurrency=2)))
    assert len(replies) == 6 and state["max"] == 2


def test_the_fake_works_at_the_transport_too():
    fake = FakeChatModel([error(429, retry_after=0), answer("via transport", delay=0.01)])
    sleeps = Sleeps()

    async def go():
        async with httpx.AsyncClient(transport=fake.transport()) as http:
            return await client("http://fake.invalid/v1", http=http, sleep=sleeps).complete(
                MESSAGES
            )

    assert asyncio.run(go()).content == "via transport" and sleeps == [0.0]


def test_retry_after_forms():
    assert retry_after({"retry-after": "3"}) == 3.0
    assert (
        retry_after(
            {
                "retry-after": "Mon, 30 Nov 2026 06:00:10 GMT",
                "date": "Mon, 30 Nov 2026 06:00:00 GMT",
            }
        )
        == 10.0
    )
    assert retry_after({"retry-after": "Mon, 30 Nov 2026 06:00:10 GMT"}) == -1.0
    assert retry_after({}) == -1.0


def test_tool_calls_are_parsed():
    from hindcast.llm.fake import tool_call

    fake = FakeChatModel([tool_call("search", {"query": "fed"})])
    with fake.serve() as url:
        reply = asyncio.run(
            client(url).complete(
                MESSAGES, tools=[{"type": "function", "function": {"name": "search"}}]
            )
        )
    assert (
        reply.tool_calls[0]["name"] == "search"
        and reply.tool_calls[0]["arguments"] == '{"query": "fed"}'
    )
    assert fake.requests[0]["tools"][0]["function"]["name"] == "search"


def test_a_local_server_that_cannot_start_is_an_outage_and_is_not_started_again():
    from hindcast.forecasters import registry
    from hindcast.forecasters.base import Context
    from hindcast.llm import local
    from hindcast.records import Question
    from tests.helpers import at

    made = []

    class Broken:
        running = False

        def start(self):
            made.append(self)
            raise local.LocalModelError("the local model server exited with -11")

        def stop(self):
            pass

    models = Models(local=local.SharedServer(factory=Broken))
    question = Question("m", "Will it snow?", "", at("2025-12-01T00:00:00"))
    forecaster = registry.create("zero-shot:model=local").bind(models)
    for _ in range(2):
        with pytest.raises(InfrastructureError, match="exited with -11") as caught:
            asyncio.run(forecaster.forecast(question, Context(question.t0, "m", (), ())))
        assert caught.value.endpoint == local.identity()
    assert len(made) == 1
    models.close()
