"""Retrieval policies (issue 16, item 4), end to end: a real archive (snapshot + hash index +
TimeBoundRetriever) in which a misdated, outcome-revealing document is planted BEFORE t0, the
retrieval and tool agents driven by the fake chat model on a real socket, and a deterministic
test detector registered under `planted` (flags a text stating the outcome) so the test does
not depend on the thresholds of the shipped detectors.

Under `pit` the agent reads the planted document (logged, and in what the model was sent);
under `pit+filter` it is removed before the model sees it (in no request body) and the
removal is logged with its verdict; under `none` nothing is retrieved and the archive is
never called. A spec without `policy` builds byte-identical requests and logs (pinned from
the code before policies existed)."""

from __future__ import annotations

import asyncio
import hashlib
import json

import pytest

from hindcast import leaks
from hindcast.errors import HindcastError
from hindcast.forecasters import registry
from hindcast.forecasters.base import Context
from hindcast.llm.cache import canonical
from hindcast.llm.fake import FakeChatModel, tool_call
from hindcast.records import Question
from hindcast.runs import retrievals_form
from hindcast.scoring.aggregate import SLICES, ScoredRow, leaderboard, retrieval_policy
from tests.helpers import at
from tests.integration.archive_support import (
    FED_DOCS,
    FED_T0_TEXT,
    build_archive,
    context_at,
    shared_fed_archive,
    write_headlines,
)

T0 = at(FED_T0_TEXT)
QUESTION = Question(
    "m1",
    "Will the Fed cut rates in December 2025?",
    "Resolves YES if the FOMC cuts in December.",
    T0,
)
PLANTED = "planted-leak"
PLANTED_TITLE = "Looking back: the Fed did cut rates in December 2025, FOMC statement confirms"
MARKER = "did cut rates in december"  # what the test detector takes for a statement of the outcome
JUDGED: list[tuple[str, Question]] = []  # every (text, question) the test detector was asked about


class PlantedDetector:
    """Flags a text stating the planted outcome; records what it judged."""

    def __init__(self, spec: str):
        self.name = spec

    async def judge(self, text: str, question: Question) -> leaks.Verdict:
        JUDGED.append((text, question))
        if MARKER in text.lower():
            return leaks.Verdict("reveals-outcome", 1.0, self.name, "states the December cut")
        return leaks.Verdict("neither", 0.0, self.name)


leaks.register("planted", lambda spec, params, models: PlantedDetector(spec))


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """FED_DOCS plus the planted document, stamped three weeks before t0 (misdated)."""
    folder = tmp_path_factory.mktemp("planted-archive")
    docs = [(i, at(t), title) for i, t, title in FED_DOCS] + [
        (PLANTED, at("2025-10-10T12:00:00"), PLANTED_TITLE)
    ]
    return build_archive(folder / "archive", [write_headlines(folder / "planted.jsonl", docs)])


def schema_of(body):
    return (
        body.get("response_format", {})
        .get("json_schema", {})
        .get("schema", {})
        .get("properties", {})
    )


def agent_model(body):
    props = schema_of(body)
    if "summary" in props:
        return json.dumps(
            {"summary": "Officials hinted at a cut.", "queries": ["fed december decision"]}
        )
    if "queries" in props:
        return json.dumps({"queries": ["fed rate cut", "december fomc"]})
    return '{"probability": 0.66}'


def run(kind: str, params: str, ctx: Context, script=(), default=None):
    fake = FakeChatModel(script, default=default)
    with fake.serve() as url:
        agent = registry.create(f"{kind}:model=openai-compatible:{url}#fake{params}")
        return asyncio.run(agent.forecast(QUESTION, ctx)), fake


def retrieval(params: str, ctx: Context):
    return run("retrieval-agent", ",rounds=2,mode=text" + params, ctx, default=agent_model)


def sent(fake) -> str:
    return json.dumps(fake.requests, ensure_ascii=False)


def steps(result, kind: str) -> list[dict]:
    return [s for s in result.usage["steps"] if s["step"] == kind]


def returned(ctx: Context) -> set[str]:
    return {i for call in retrievals_form(ctx.retrievals) for i in call["ids"]}


# ---- the retrieval agent under each policy ------------------------------------------------------------


def test_under_pit_the_agent_reads_the_planted_document(planted):
    ctx = context_at(planted, T0)
    result, fake = retrieval("", ctx)
    assert result.ok and PLANTED in returned(ctx) and PLANTED in result.evidence
    assert PLANTED_TITLE in sent(fake) and PLANTED in sent(fake)
    assert steps(result, "withheld") == [] and all(
        c["op"] == "search" for c in retrievals_form(ctx.retrievals)
    )


def test_under_pit_filter_the_planted_document_never_reaches_the_model(planted):
    JUDGED.clear()
    ctx = context_at(planted, T0)
    result, fake = retrieval(",policy=pit+filter,detector=planted", ctx)
    assert result.ok and result.probability == 0.66
    assert PLANTED in returned(ctx)  # the archive returned it: the harness's log says so …
    assert PLANTED not in sent(fake) and PLANTED_TITLE not in sent(
        fake
    )  # … but no request showed it
    assert (
        PLANTED not in result.evidence and "fed-oct" in result.evidence and "Powell" in sent(fake)
    )
    withheld = steps(result, "withheld")
    searches_returning = [s for s in steps(result, "search") if PLANTED in s["ids"]]
    assert withheld and len(withheld) == len(searches_returning)  # every removal logged
    assert {w["id"] for w in withheld} == {PLANTED}
    assert withheld[0]["verdict"] == {
        "label": "reveals-outcome",
        "score": 1.0,
        "detector": "planted",
        "reason": "states the December cut",
    }
    assert [w["query"] for w in withheld] == [s["query"] for s in searches_returning]
    entries = [
        c for c in retrievals_form(ctx.retrievals) if c["op"] == "withhold"
    ]  # stored with the forecast
    assert [(e["doc_id"], e["verdict"]["label"], e["ids"]) for e in entries] == [
        (PLANTED, "reveals-outcome", [])
    ] * len(withheld)
    texts = [t for t, _ in JUDGED]
    assert (
        len(texts) == len(set(texts)) and sum(MARKER in t.lower() for t in texts) == 1
    )  # each judged once
    assert all(q == QUESTION for _, q in JUDGED)  # against the question at t0, never an outcome


def test_pit_filter_sees_nothing_of_the_documents_at_or_after_t0(planted, tmp_path):
    """The same forecast over an archive holding only the documents created before t0 (the
    planted one included): every request the model received, every logged call and every step
    (withheld verdicts too) is identical — the filter adds no path from post-t0 data."""
    before = [(i, at(t), title) for i, t, title in FED_DOCS if at(t) < T0]
    assert len(before) < len(FED_DOCS)  # the shared archive does hold documents at and after t0
    docs = before + [(PLANTED, at("2025-10-10T12:00:00"), PLANTED_TITLE)]
    pre_t0 = build_archive(tmp_path / "archive", [write_headlines(tmp_path / "pre.jsonl", docs)])
    seen = []
    for snapshot in (planted, pre_t0):
        ctx = context_at(snapshot, T0)
        result, fake = retrieval(",policy=pit+filter,detector=planted", ctx)
        seen.append(
            (
                fake.requests,
                retrievals_form(ctx.retrievals),
                result.usage["steps"],
                result.probability,
                result.evidence,
            )
        )
    assert seen[0] == seen[1]


def test_under_none_nothing_is_retrieved_and_the_archive_is_never_called(planted):
    ctx = context_at(planted, T0)
    result, fake = retrieval(",policy=none", ctx)
    assert result.ok and result.evidence == () and ctx.retrievals == ()
    assert [s["step"] for s in result.usage["steps"]] == ["final"] and len(fake.requests) == 1
    assert not any(title in sent(fake) for _, _, title in FED_DOCS) and PLANTED_TITLE not in sent(
        fake
    )
    assert set(result.usage["prompts"]) == {"retrieval_final"}
    # a Context without any archive: any archive call would make this forecast a failure
    bare, _ = retrieval(",policy=none", Context(T0, "m1", (), ()))
    assert bare.ok and bare.probability == 0.66


# ---- the tool agent under each policy -----------------------------------------------------------------

TOOL_SCRIPT = [
    tool_call("search", {"query": "fed december rate cut", "k": 10}),
    tool_call("read", {"doc_id": PLANTED}),
    tool_call("read", {"doc_id": "fed-oct"}),
    tool_call("submit_forecast", {"probability": 0.7, "rationale": "r"}),
]


def tool_agent(params: str, ctx: Context, script=TOOL_SCRIPT):
    return run("tool-agent", ",mode=text" + params, ctx, script=list(script))


def test_tool_agent_under_pit_reads_the_planted_document(planted):
    ctx = context_at(planted, T0)
    result, fake = tool_agent("", ctx)
    assert result.ok and PLANTED in result.evidence and PLANTED_TITLE in sent(fake)
    assert [c["op"] for c in retrievals_form(ctx.retrievals)] == ["search", "read", "read"]


def test_tool_agent_under_pit_filter_hides_the_planted_document(planted):
    ctx = context_at(planted, T0)
    result, fake = tool_agent(",policy=pit+filter,detector=planted", ctx)
    assert result.ok and result.probability == 0.7
    assert (
        PLANTED in returned(ctx) and PLANTED not in result.evidence and "fed-oct" in result.evidence
    )
    assert PLANTED_TITLE not in sent(fake) and "Looking back" not in sent(fake)
    reads = [m["content"] for m in fake.requests[2]["messages"] if m["role"] == "tool"]
    assert (
        reads[-1] == "error: no such document before today's date"
    )  # like a missing document: no hint
    withheld = steps(result, "withheld")
    assert [(w["id"], w["op"], w["verdict"]["label"]) for w in withheld] == [
        (PLANTED, "search", "reveals-outcome"),
        (PLANTED, "read", "reveals-outcome"),
    ]
    assert [c["op"] for c in retrievals_form(ctx.retrievals)] == [
        "search",
        "withhold",
        "read",
        "withhold",
        "read",
    ]
    assert [s.get("error") for s in steps(result, "tool")][1] == "document withheld"


def test_tool_agent_under_none_offers_no_archive_tool_and_calls_no_archive(planted):
    ctx = context_at(planted, T0)
    result, fake = tool_agent(",policy=none", ctx)
    assert (
        result.ok and result.probability == 0.7 and result.evidence == () and ctx.retrievals == ()
    )
    assert [t["function"]["name"] for t in fake.requests[0]["tools"]] == ["submit_forecast"]
    assert [s["error"] for s in steps(result, "tool")][:3] == ["closed book"] * 3
    assert "no archive is available" in fake.requests[0]["messages"][0]["content"]
    assert PLANTED_TITLE not in sent(fake) and "Powell" not in sent(fake)
    bare, _ = tool_agent(",policy=none", Context(T0, "m1", (), ()))
    assert bare.ok


# ---- specs, identity and backward compatibility -------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        ",policy=open",
        ",policy=pit+filter",
        ",policy=pit,detector=planted",
        ",policy=none,detector=planted",
        ",policy=pit+filter,detector=nosuch",
    ],
)
def test_inconsistent_policies_fail_when_built(params):
    for kind in ("retrieval-agent", "tool-agent"):
        with pytest.raises(HindcastError):
            registry.create(f"{kind}:model=local{params}")


def test_the_detector_is_part_of_the_name_and_a_parameterised_one_is_written_with_semicolons():
    spec = "retrieval-agent:model=local,policy=pit+filter,detector=planted:level=2;strict=1"
    agent = registry.create(spec)
    assert agent.name == spec and agent.detector == "planted:level=2;strict=1"
    assert agent.provenance()["policy"] == "pit+filter"


def _digest(value) -> str:
    return hashlib.sha256(canonical(value).encode("utf-8")).hexdigest()


def _usage(result) -> dict:
    return {k: v for k, v in result.usage.items() if k not in ("latency_s", "endpoint", "model")}


# sha256 of (request bodies, usage, harness log), computed with the code before policies existed (19505a3)
PINNED = {
    "retrieval-agent": (
        "d12c9c3787d1484360c56983a7ed1450c82e7e4fbf1d47772f6df1e87a585d11",
        "77ca6e483384ca2205aca78bf3621924a184f3582a844ba20f6f61e57fe74063",
        "c254101377a28e799d84fe8f3b95250f33da5f5d0ac8b465c884aab2f16e7a6c",
    ),
    "tool-agent": (
        "a8d77c17df68916a120499e222d0e2f95ee4082637d13dbc05919920bf3b224a",
        "f87391883eb0be679bf99894579883782d9d3ae4208e816c7676f190a028cc19",
        "d65df8fd3733a1d0beff7762e696816f1ae9321dd53c79496ffc1550c1973f8c",
    ),
}


def _pinned_run(kind: str, snapshot, params: str = ""):
    def step(body):
        props = schema_of(body)
        if "summary" in props:
            return json.dumps({"summary": "s", "queries": ["powell december"]})
        if "queries" in props:
            return json.dumps({"queries": ["fed rate cut", "december fomc"]})
        return '{"probability": 0.66}'

    ctx = context_at(snapshot, T0)
    if kind == "tool-agent":
        script = [
            tool_call("search", {"query": "december rate cut"}),
            tool_call("read", {"doc_id": "fed-oct"}),
            tool_call("submit_forecast", {"probability": 0.7}),
        ]
        result, fake = run(kind, ",mode=text" + params, ctx, script=script)
    else:
        result, fake = run(kind, ",mode=text" + params, ctx, default=step)
    return (
        _digest(fake.requests),
        _digest(_usage(result)),
        _digest(list(retrievals_form(ctx.retrievals))),
    )


@pytest.mark.parametrize("kind", ["retrieval-agent", "tool-agent"])
def test_a_spec_without_policy_sends_and_logs_exactly_what_it_did_before(kind, tmp_path_factory):
    """Cache keys are the sha256 of the request bodies (and the run id is the list of spec strings,
    unchanged): identical bodies keep every cached answer and every stored log as they were."""
    snapshot = shared_fed_archive(tmp_path_factory)
    assert _pinned_run(kind, snapshot) == PINNED[kind]
    assert _pinned_run(kind, snapshot, ",policy=pit") == PINNED[kind]  # the default, written out


# ---- the `policy` slice ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, policy",
    [
        ("retrieval-agent:model=local", "pit"),
        ("tool-agent:model=openai:gpt-4.1-mini,steps=3", "pit"),
        ("retrieval-agent:model=local,policy=none", "none"),
        (
            "tool-agent:model=openai-compatible:http://h:8/v1#m,policy=pit+filter,detector=lexical",
            "pit+filter",
        ),
        ("zero-shot:model=local", "n/a"),
        ("market", "n/a"),
        ("constant:p=0.3", "n/a"),
    ],
)
def test_the_policy_of_a_forecaster_spec(spec, policy):
    assert retrieval_policy(spec) == policy


def test_the_leaderboard_slices_by_policy():
    specs = {
        "retrieval-agent:model=local": 0.7,
        "retrieval-agent:model=local,policy=none": 0.5,
        "retrieval-agent:model=local,policy=pit+filter,detector=lexical": 0.6,
        "market": 0.55,
    }
    rows = [
        ScoredRow(spec, f"m{i}", T0, "0.5", "t", p, None, float(i % 2), 0.55, "T2", "n/a", 0, {})
        for spec, p in specs.items()
        for i in range(6)
    ]
    board = leaderboard(rows, by="policy", replicates=50)
    assert "policy" in SLICES
    assert {(r.slice, r.forecaster) for r in board} == {
        ("policy=pit", "retrieval-agent:model=local"),
        ("policy=none", "retrieval-agent:model=local,policy=none"),
        ("policy=pit+filter", "retrieval-agent:model=local,policy=pit+filter,detector=lexical"),
        ("policy=n/a", "market"),
    }
    assert all(r.n_markets == 6 for r in board)


def test_the_cli_accepts_by_policy():
    from hindcast.leaderboard import check_slice

    assert check_slice("policy") == "policy"


def test_a_detector_is_built_once_per_models_not_once_per_forecast(planted):
    """A detector may load an embedder (the lexical one loads MiniLM): every forecast
    of a sweep shares it."""
    import httpx

    from hindcast.llm.models import Models

    built = []

    def factory(spec, params, models):
        built.append(models)
        return PlantedDetector(spec)

    leaks.register("counted", factory)
    fake = FakeChatModel(default=agent_model)
    agent = registry.create(
        "retrieval-agent:model=openai-compatible:http://fake.invalid/v1#fake,rounds=1,mode=text,"
        "policy=pit+filter,detector=counted"
    )
    with Models(http=lambda: httpx.AsyncClient(transport=fake.transport())) as models:
        bound = agent.bind(models)
        results = [asyncio.run(bound.forecast(QUESTION, context_at(planted, T0))) for _ in range(3)]
    assert all(r.ok for r in results) and built == [models]
