"""The response cache: keyed by the full request, a re-run makes zero requests, repeats and
--no-cache behave, and it survives a new process (a new ResponseCache on the same file or
database). Each test runs on both backends: a SQLite file, and a table of a PostgreSQL database
(a real server, tests/pg.py)."""

import asyncio

import pytest

from hindcast.forecasters import registry
from hindcast.forecasters.base import Context
from hindcast.llm.cache import ResponseCache, request_key
from hindcast.llm.fake import FakeChatModel
from hindcast.llm.models import Models
from hindcast.records import PricePoint, Question
from tests.helpers import at

T0 = at("2025-11-01T00:00:00")
QUESTION = Question("m1", "Will the Fed cut rates in December 2025?", "Resolves YES if …", T0)
HISTORY = (PricePoint(at("2025-10-30T00:00:00"), 0.61),)


def counter(body):
    return '{"probability": 0.%d}' % (10 + len(body["messages"][-1]["content"]) % 80)


def run(spec, cache, repeat=0):
    forecaster = registry.create(spec).bind(Models(cache=cache))
    return asyncio.run(forecaster.forecast(QUESTION, Context(T0, "m1", HISTORY, (), repeat=repeat)))


@pytest.fixture(params=["sqlite", "postgresql"])
def cache_at(request, tmp_path):
    """Where the test's response cache lives: a SQLite file, or a new database of the session's
    PostgreSQL server."""
    if request.param == "sqlite":
        return tmp_path / "c.sqlite"
    return request.getfixturevalue("pg_server").create_database()


@pytest.fixture
def served():
    fake = FakeChatModel(default=counter)
    with fake.serve() as url:
        yield fake, url


def test_a_second_identical_run_makes_zero_requests(served, cache_at):
    fake, url = served
    spec = f"zero-shot:model=openai-compatible:{url}#fake"
    first = run(spec, ResponseCache(cache_at))
    second = run(spec, ResponseCache(cache_at))  # a new process would open the file anew
    assert len(fake.requests) == 1
    assert first.probability == second.probability and first.ok
    assert (first.usage["requests"], first.usage["cache_hits"]) == (1, 0)
    assert (second.usage["requests"], second.usage["cache_hits"]) == (0, 1)


def test_repeats_above_temperature_zero_are_separate_samples_and_each_is_replayed(served, cache_at):
    fake, url = served
    cache = cache_at
    spec = f"zero-shot:model=openai-compatible:{url}#fake,temperature=0.8"
    samples = [run(spec, ResponseCache(cache), repeat=i).usage["sample"] for i in range(3)]
    assert (
        samples == [0, 1, 2]
        and len(fake.requests) == 3
        and all(r["temperature"] == 0.8 for r in fake.requests)
    )
    for i in range(3):
        run(spec, ResponseCache(cache), repeat=i)
    assert len(fake.requests) == 3
    run(spec + ",repeat=3", ResponseCache(cache))  # the spec's repeat offsets the engine's
    assert len(fake.requests) == 4


def test_repeats_at_temperature_zero_replay_one_answer(served, cache_at):
    fake, url = served
    spec = f"zero-shot:model=openai-compatible:{url}#fake"
    results = [run(spec, ResponseCache(cache_at), repeat=i) for i in range(3)]
    assert len(fake.requests) == 1 and len({r.probability for r in results}) == 1


def test_no_cache_modes(served, cache_at):
    fake, url = served
    spec = f"zero-shot:model=openai-compatible:{url}#fake"
    path = cache_at
    run(spec, ResponseCache(path, mode="off"))
    assert len(ResponseCache(path)) == 0
    run(spec, ResponseCache(path, mode="refresh"))
    run(spec, ResponseCache(path, mode="refresh"))
    assert len(fake.requests) == 3 and len(ResponseCache(path)) == 1
    run(spec, ResponseCache(path))
    assert len(fake.requests) == 3


def test_any_change_to_the_request_changes_the_key():
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "q"}],
        "temperature": 0.0,
        "tools": [{"type": "function", "function": {"name": "search"}}],
    }
    base = request_key("http://h/v1", body)
    variants = [
        request_key("http://other/v1", body),
        request_key("http://h/v1", {**body, "model": "m2"}),
        request_key("http://h/v1", {**body, "temperature": 0.1}),
        request_key("http://h/v1", {**body, "messages": [{"role": "user", "content": "q2"}]}),
        request_key("http://h/v1", {**body, "tools": []}),
        request_key("http://h/v1", {**body, "max_tokens": 10}),
        request_key("http://h/v1", body, repeat=1),
    ]
    assert base not in variants and len(set(variants)) == len(variants)
    assert request_key("http://h/v1/", dict(reversed(list(body.items())))) == base


def test_a_different_prompt_variant_is_a_different_request(served, cache_at):
    fake, url = served
    cache = ResponseCache(cache_at)
    run(f"zero-shot:model=openai-compatible:{url}#fake", cache)
    run(f"zero-shot:model=openai-compatible:{url}#fake,price=1", cache)
    assert len(fake.requests) == 2 and len(cache) == 2


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError):
        ResponseCache(mode="sometimes")
