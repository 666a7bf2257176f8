"""The OpenAI-compatible client against the shipped fake model on a real 127.0.0.1 socket:
JSON answers, retries (429 with Retry-After, 5xx, timeouts), bounded attempts, structured
output falling back, the concurrency limit, and keys that never leave the request header.
"""

import asyncio
import threading
import time

import httpx
import pytest

from hindcast.forecasters import llm
from hindcast.forecasters.cache import ResponseCache
from hindcast.forecasters.fake import FakeChatModel, Reply, answer, error
from hindcast.forecasters.llm import ChatClient, ChatError, parse_model, retry_after

MESSAGES = [{"role": "user", "content": "Will it rain?"}]


class Sleeps(list):
    async def __call__(self, seconds):
        self.append(seconds)


def client(url, **kw):
    kw.setdefault("sleep", Sleeps())
    return ChatClient(parse_model(f"openai-compatible:{url}#fake-model"), **kw)


def test_model_specs():
    openai = parse_model("openai:gpt-4.1-mini")
    assert (openai.endpoint, openai.model, openai.key_env) == ("https://api.openai.com/v1", "gpt-4.1-mini", "OPENAI_API_KEY")
    compat = parse_model("openai-compatible:http://127.0.0.1:8080/v1/#qwen", "VLLM_KEY")
    assert (compat.endpoint, compat.model, compat.key_env) == ("http://127.0.0.1:8080/v1", "qwen", "VLLM_KEY")
    assert parse_model("local").identity == parse_model("local").identity == "local:SmolLM2-135M-Instruct.Q4_1.gguf"
    for bad in ("gpt-4", "openai:", "openai-compatible:127.0.0.1:8080#m", "openai-compatible:http://h/v1"):
        with pytest.raises(ValueError):
            parse_model(bad)


def test_a_json_answer_over_a_real_socket():
    fake = FakeChatModel([Reply(content='{"probability": 0.25}', usage={"prompt_tokens": 31, "completion_tokens": 7})])
    with fake.serve() as url:
        reply = asyncio.run(client(url).complete(MESSAGES, schema={"type": "object"}, temperature=0.0))
    assert (reply.content, reply.usage, reply.cached) == ('{"probability": 0.25}', {"prompt_tokens": 31, "completion_tokens": 7}, False)
    body = fake.requests[0]
    assert body["model"] == "fake-model" and body["messages"] == MESSAGES and body["temperature"] == 0.0
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
    with fake.serve() as url, pytest.raises(ChatError, match=r"HTTP 502: bad gateway \(gave up after 3 attempts\)"):
        asyncio.run(client(url, max_retries=2).complete(MESSAGES))
    assert len(fake.requests) == 3


def test_a_timeout_is_retried_then_reported():
    fake = FakeChatModel(default=answer("late", delay=1.0))
    with fake.serve() as url, pytest.raises(ChatError, match="timeout after 0.2s"):
        asyncio.run(client(url, timeout=0.2, max_retries=1).complete(MESSAGES))
    assert len(fake.requests) == 2


def test_a_refused_connection_is_reported_not_raised_raw():
    with FakeChatModel().serve() as url:
        pass  # the port is closed now
    with pytest.raises(ChatError, match="connection failed"):
        asyncio.run(client(url, max_retries=1).complete(MESSAGES))


@pytest.mark.parametrize("reply, reason", [
    (error(400, "model not found"), "HTTP 400: model not found"),
    (error(401, "invalid key"), "HTTP 401"),
    (Reply(body="<html>oops</html>"), "not JSON"),
    (Reply(body='{"choices": []}'), "malformed chat response"),
])
def test_client_errors_are_not_retried(reply, reason):
    fake = FakeChatModel([reply], default=answer("never reached"))
    with fake.serve() as url, pytest.raises(ChatError, match=reason):
        asyncio.run(client(url).complete(MESSAGES))
    assert len(fake.requests) == 1


def test_an_endpoint_without_json_schema_falls_back_one_level_at_a_time():
    fake = FakeChatModel([error(500, "validation error: ('body', 'response_format', 'type') should be json_object"),
                          error(400, "json_object schema is not supported"),
                          error(400, "unknown field response_format"), answer("0.3")])
    cache = ResponseCache()
    with fake.serve() as url:
        c = client(url, cache=cache)
        assert asyncio.run(c.complete(MESSAGES, schema={"type": "object"})).content == "0.3"
        again = asyncio.run(client(url, cache=cache).complete(MESSAGES, schema={"type": "object"}))
    formats = [r.get("response_format", {}).get("type") for r in fake.requests]
    assert formats == ["json_schema", "json_object", "json_object", None] and c.structured == "none"
    assert fake.requests[1]["response_format"]["schema"] == {"type": "object"} and "schema" not in fake.requests[2]["response_format"]
    assert again.cached and again.content == "0.3"  # a fresh client (a re-run) hits the cache


def test_the_key_travels_only_in_the_authorization_header(tmp_path):
    secret = "sk-test-0123456789abcdef"
    fake = FakeChatModel(default=answer('{"probability": 0.4}'))
    cache = ResponseCache(tmp_path / "cache.sqlite")
    llm.configure(env={"MY_KEY": secret}, cache=cache)
    try:
        with fake.serve() as url:
            c = llm.client_for(f"openai-compatible:{url}#m", "MY_KEY")
            asyncio.run(c.complete(MESSAGES))
            usage = llm.Usage(c).record()
    finally:
        llm.configure()
    assert fake.headers[0]["authorization"] == f"Bearer {secret}"
    assert secret not in repr(c) and secret not in str(usage) and secret not in str(fake.requests)
    cache.close()
    assert secret.encode() not in (tmp_path / "cache.sqlite").read_bytes()


def test_a_missing_key_names_the_variable():
    llm.configure(env={})
    try:
        with pytest.raises(ChatError, match="OPENAI_API_KEY is not set"):
            llm.client_for("openai:gpt-4.1-mini")
    finally:
        llm.configure()


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
        return await asyncio.gather(*(c.complete([{"role": "user", "content": str(i)}]) for i in range(6)))

    with FakeChatModel(default=slow).serve() as url:
        replies = asyncio.run(many(client(url, concurrency=2)))
    assert len(replies) == 6 and state["max"] == 2


def test_the_fake_works_at_the_transport_too():
    fake = FakeChatModel([error(429, retry_after=0), answer("via transport", delay=0.01)])
    sleeps = Sleeps()

    async def go():
        async with httpx.AsyncClient(transport=fake.transport()) as http:
            return await client("http://fake.invalid/v1", http=http, sleep=sleeps).complete(MESSAGES)

    assert asyncio.run(go()).content == "via transport" and sleeps == [0.0]


def test_retry_after_forms():
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after": "Mon, 30 Nov 2026 06:00:10 GMT", "date": "Mon, 30 Nov 2026 06:00:00 GMT"}) == 10.0
    assert retry_after({"retry-after": "Mon, 30 Nov 2026 06:00:10 GMT"}) == -1.0
    assert retry_after({}) == -1.0


def test_tool_calls_are_parsed():
    from hindcast.forecasters.fake import tool_call

    fake = FakeChatModel([tool_call("search", {"query": "fed"})])
    with fake.serve() as url:
        reply = asyncio.run(client(url).complete(MESSAGES, tools=[{"type": "function", "function": {"name": "search"}}]))
    assert reply.tool_calls[0]["name"] == "search" and reply.tool_calls[0]["arguments"] == '{"query": "fed"}'
    assert fake.requests[0]["tools"][0]["function"]["name"] == "search"
