"""The tool agent: OpenAI tool calls executed by the harness against the t0-bound Context.
A tool call cannot move t0; no valid submit_forecast is a recorded failure."""

import asyncio
import json

import pytest

from hindcast.forecasters import registry
from hindcast.llm.fake import FakeChatModel, answer, tool_call, tool_calls
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


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory):
    return shared_fed_archive(tmp_path_factory)


def run(snapshot, script, params=",mode=text"):
    fake = FakeChatModel(script)
    ctx = context_at(snapshot, T0)
    with fake.serve() as url:
        agent = registry.create(f"tool-agent:model=openai-compatible:{url}#fake{params}")
        return asyncio.run(agent.forecast(QUESTION, ctx)), fake, ctx


def tool_results(fake, i):
    return [m for m in fake.requests[i]["messages"] if m["role"] == "tool"]


def test_search_read_submit(snapshot):
    result, fake, ctx = run(
        snapshot,
        [
            tool_call("search", {"query": "december rate cut"}),
            tool_call("read", {"doc_id": "fed-oct"}),
            tool_call("submit_forecast", {"probability": 0.7, "rationale": "Powell hedged."}),
        ],
    )
    assert result.ok and result.probability == 0.7 and result.rationale == "Powell hedged."
    assert set(result.evidence) <= FED_BEFORE_T0 and "fed-oct" in result.evidence
    assert [r["op"] for r in retrievals_form(ctx.retrievals)] == ["search", "read"]
    assert [t["function"]["name"] for t in fake.requests[0]["tools"]] == [
        "search",
        "read",
        "submit_forecast",
    ]
    found = json.loads(tool_results(fake, 1)[0]["content"])
    assert {d["id"] for d in found} <= FED_BEFORE_T0 and all(
        d["date"] < "2025-11-01" for d in found
    )
    assert [s["step"] for s in result.usage["steps"]] == [
        "turn",
        "tool",
        "turn",
        "tool",
        "turn",
        "tool",
    ]


def test_no_tool_takes_a_date():
    from hindcast.forecasters.tool_agent import TOOLS

    for tool in TOOLS:
        names = " ".join(tool["function"]["parameters"]["properties"]).lower()
        assert not any(w in names for w in ("date", "time", "before", "after", "t0", "until"))


def test_a_tool_call_cannot_move_t0(snapshot):
    later = "2026-01-01T00:00:00Z"
    result, fake, ctx = run(
        snapshot,
        [
            tool_call(
                "search",
                {"query": "fed december cut", "k": 10, "before": later, "t0": later, "date": later},
            ),
            tool_call("read", {"doc_id": "fed-dec", "as_of": later}),
            tool_call("read", {"doc_id": "fed-at-t0"}),
            tool_call("submit_forecast", {"probability": 0.5, "t0": later}),
        ],
    )
    assert ctx.t0 == T0 and result.ok
    seen = {i for r in retrievals_form(ctx.retrievals) for i in r["ids"]}
    assert seen <= FED_BEFORE_T0 and set(result.evidence) <= FED_BEFORE_T0
    tools = [s for s in result.usage["steps"] if s["step"] == "tool"]
    assert tools[0]["ignored_arguments"] == ["before", "date", "t0"] and tools[1][
        "ignored_arguments"
    ] == ["as_of"]
    assert tools[1]["error"] == tools[2]["error"] == "document not visible"
    sent = json.dumps(fake.requests)
    late = [title for i, _, title in FED_DOCS if i not in FED_BEFORE_T0]
    assert not any(title in sent for title in late)


def test_without_a_valid_submission_the_forecast_is_a_failure(snapshot):
    result, fake, _ = run(
        snapshot, [tool_call("search", {"query": "fed"})] * 3, ",mode=text,steps=3"
    )
    assert (
        not result.ok
        and result.error == "no valid submit_forecast call in 3 turn(s)"
        and len(fake.requests) == 3
    )


def test_an_invalid_submission_is_answered_and_may_be_corrected(snapshot):
    result, fake, _ = run(
        snapshot,
        [
            tool_call("submit_forecast", {"probability": 1.4}),
            tool_call("submit_forecast", "{not json"),
            tool_calls(("nonsense", {}), ("submit_forecast", {"probability": "0.3"})),
            tool_call("submit_forecast", {"probability": 0.3}),
        ],
    )
    assert result.ok and result.probability == 0.3
    errors = [s["error"] for s in result.usage["steps"] if s["step"] == "tool"]
    assert errors[:4] == [
        "probability 1.4 is outside [0, 1]",
        "arguments are not valid JSON",
        "unknown tool 'nonsense'",
        "probability is not a number: '0.3'",
    ]
    assert "outside [0, 1]" in tool_results(fake, 1)[0]["content"]


def test_only_invalid_submissions_end_in_a_failure_never_a_default(snapshot):
    result, _, _ = run(
        snapshot, [tool_call("submit_forecast", {"probability": float("nan")})] * 2, ",steps=2"
    )
    assert (
        not result.ok and result.probability is None and "no valid submit_forecast" in result.error
    )


def test_plain_text_turns_are_nudged_then_fail(snapshot):
    result, fake, _ = run(snapshot, [answer("I think about 0.6.")] * 2, ",steps=2")
    assert not result.ok and fake.requests[1]["messages"][-1]["content"].startswith("Use the tools")
