"""The retrieval agent over a real tiny archive (snapshot + LanceDB index + TimeBoundRetriever)
and the fake model on a real socket: every query, id and intermediate answer is logged, rounds
are bounded, and no document at or after t0 reaches the model or the evidence."""

import asyncio
import itertools
import json

import pytest

from hindcast.forecasters import registry
from hindcast.forecasters.base import Context
from hindcast.forecasters.retrieval_agent import parse_queries, parse_reflection
from hindcast.llm.fake import FakeChatModel, error
from hindcast.records import Question
from hindcast.runs import retrievals_form
from tests.helpers import at
from tests.integration.archive_support import (
    FED_BEFORE_T0,
    FED_DOCS,
    FED_T0_TEXT,
    context_at,
    shared_fed_archive,
)

T0 = at(FED_T0_TEXT)
QUESTION = Question(
    "m1",
    "Will the Fed cut rates in December 2025?",
    "Resolves YES if the FOMC cuts in December.",
    T0,
)
LATE_TITLES = [title for i, _, title in FED_DOCS if i not in FED_BEFORE_T0]


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory):
    return shared_fed_archive(tmp_path_factory)


def schema_of(body):
    return (
        body.get("response_format", {})
        .get("json_schema", {})
        .get("schema", {})
        .get("properties", {})
    )


def agent_model(follow_ups):
    def step(body):
        props = schema_of(body)
        if "summary" in props:
            return json.dumps(
                {
                    "summary": "Officials hinted at a cut; Powell was cautious.",
                    "queries": next(follow_ups),
                }
            )
        if "queries" in props:
            return json.dumps({"queries": ["fed rate cut", "december fomc"]})
        return '{"probability": 0.66}'

    return step


def run(snapshot, step, params=",rounds=2,mode=text", ctx=None):
    fake = FakeChatModel(default=step)
    ctx = ctx or context_at(snapshot, T0)
    with fake.serve() as url:
        agent = registry.create(f"retrieval-agent:model=openai-compatible:{url}#fake{params}")
        return asyncio.run(agent.forecast(QUESTION, ctx)), fake, ctx


def test_every_query_document_and_answer_is_logged_and_all_precede_t0(snapshot):
    result, fake, ctx = run(snapshot, agent_model(itertools.repeat(["powell december"])))
    assert result.ok and result.probability == 0.66
    steps = result.usage["steps"]
    assert [s["step"] for s in steps] == [
        "seed",
        "search",
        "search",
        "reflect",
        "search",
        "reflect",
        "final",
    ]
    assert [s["query"] for s in steps if s["step"] == "search"] == [
        "fed rate cut",
        "december fomc",
        "powell december",
    ]
    assert steps[0]["queries"] == ["fed rate cut", "december fomc"] and "raw" in steps[0]
    assert all("raw" in s and "summary" in s for s in steps if s["step"] == "reflect")
    logged = [s["ids"] for s in steps if s["step"] == "search"]
    assert logged == [
        r["ids"] for r in retrievals_form(ctx.retrievals)
    ]  # the harness's own log agrees
    seen = {i for ids in logged for i in ids}
    assert seen and seen <= FED_BEFORE_T0 and set(result.evidence) <= FED_BEFORE_T0
    assert result.rationale == "Officials hinted at a cut; Powell was cautious."
    sent = json.dumps(fake.requests)
    assert not any(title in sent for title in LATE_TITLES) and "fed-at-t0" not in sent
    assert set(result.usage["prompts"]) == {
        "retrieval_queries",
        "retrieval_reflect",
        "retrieval_final",
    }


def test_rounds_are_bounded_even_when_the_model_always_wants_more(snapshot):
    fresh = ([f"query {n}"] for n in itertools.count())
    result, fake, _ = run(snapshot, agent_model(fresh), ",rounds=3,mode=text")
    kinds = [s["step"] for s in result.usage["steps"]]
    assert kinds.count("reflect") == 3 and kinds.count("search") == 4 and len(fake.requests) == 5


def test_the_agent_stops_when_no_new_query_is_asked(snapshot):
    result, fake, _ = run(snapshot, agent_model(itertools.repeat([])), ",rounds=4,mode=text")
    assert [s["step"] for s in result.usage["steps"]].count("reflect") == 1 and len(
        fake.requests
    ) == 3


@pytest.mark.parametrize("seed", ['{"queries": []}', "", '{"queries": 7}', '{"queries": ['])
def test_an_unusable_seed_falls_back_to_the_question_and_says_so(snapshot, seed):
    def step(body):
        return seed if "queries" in schema_of(body) else '{"probability": 0.4}'

    result, _, _ = run(snapshot, step, ",rounds=1,mode=text")
    seed, search = result.usage["steps"][:2]
    assert seed["fallback_to_question"] is True and search["query"] == QUESTION.question


def test_hybrid_search_works_through_the_real_retriever(snapshot):
    result, _, ctx = run(snapshot, agent_model(itertools.repeat([])), ",rounds=1,mode=hybrid,k=10")
    assert result.ok and {r["mode"] for r in retrievals_form(ctx.retrievals)} == {"hybrid"}
    assert set().union(*(r["ids"] for r in retrievals_form(ctx.retrievals))) <= FED_BEFORE_T0


def test_without_an_archive_the_agent_records_a_failure(snapshot):
    result, _, _ = run(snapshot, agent_model(itertools.repeat([])), ctx=Context(T0, "m1", (), ()))
    assert (
        not result.ok
        and "no archive snapshot" in result.error
        and result.usage["steps"][0]["step"] == "seed"
    )


def test_a_model_failure_midway_keeps_the_log_of_what_happened(snapshot):
    def step(body):
        return (
            error(400, "crashed") if "summary" in schema_of(body) else agent_model(iter([]))(body)
        )

    result, _, _ = run(snapshot, step, ",rounds=1,mode=text")
    assert not result.ok and "HTTP 400: crashed" in result.error
    assert [s["step"] for s in result.usage["steps"]] == ["seed", "search", "search"]


def test_queries_and_reflections_are_read_tolerantly():
    assert parse_queries('{"queries": ["a b", "A B", "", 3, "c"]}', 5) == ["a b", "c"]
    assert parse_queries("1. fed cut\n- powell speech\n\n* cpi", 2) == ["fed cut", "powell speech"]
    assert parse_queries('{"queries": "fed cut"}', 3) == ["fed cut"]
    assert parse_reflection('noise {"summary": "s", "queries": ["q"]} noise', 3) == ("s", ["q"])
    assert parse_reflection("just prose", 3) == ("just prose", [])
