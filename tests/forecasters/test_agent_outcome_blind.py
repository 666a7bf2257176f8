"""No code path passes the outcome into a forecaster, and no tool call can move t0.

The differential test runs the real sweep (api.sweep: store → cutoffs → Question +
Context with a real TimeBoundRetriever → runner → run store) twice over the same markets,
once with every Yes/No outcome flipped. The fake model's answer is a hash of the whole
request, so if anything about the outcome reached any request of the zero-shot forecaster
(with price), the retrieval agent or the tool agent, the requests or the stored forecasts
would differ between the two runs.
"""

import dataclasses
import hashlib
import json

import pytest

from hindcast import api
from hindcast.forecasters.base import Context
from hindcast.llm.cache import ResponseCache, canonical
from hindcast.llm.fake import FakeChatModel, answer, tool_call
from hindcast.llm.models import Models
from hindcast.markets.store import open_version, write_version
from hindcast.records import Question
from hindcast.replay.spec import ReplaySpec
from hindcast.runs.database import db_url
from hindcast.runs.store import RunStore
from tests.helpers import SAMPLE_MARKETS, at
from tests.integration.archive_support import shared_fed_archive

FLIP = {"yes": "no", "no": "yes"}


def hashed_model(body):
    """Answers that depend on every byte of the request (and on nothing else)."""
    messages = body["messages"]
    p = int(hashlib.sha256(canonical(messages).encode()).hexdigest()[:4], 16) / 0xFFFF
    if body.get("tools"):
        if any(m["role"] == "tool" for m in messages):
            return tool_call("submit_forecast", {"probability": p, "rationale": "hashed"})
        return tool_call("search", {"query": "rate cut", "before": "2030-01-01"})
    props = (
        body.get("response_format", {})
        .get("json_schema", {})
        .get("schema", {})
        .get("properties", {})
    )
    if "summary" in props:
        return answer(json.dumps({"summary": "hashed summary", "queries": []}))
    if "queries" in props:
        return answer(json.dumps({"queries": ["fed rate cut", "december"]}))
    return answer(json.dumps({"probability": p}))


def sweep(tmp, name, bundle, url, snapshot):
    root = tmp / name
    write_version(root, bundle)
    forecasters = tuple(
        f"{kind}:model=openai-compatible:{url}#fake{extra}"
        for kind, extra in (
            ("zero-shot", ",price=1"),
            ("retrieval-agent", ",rounds=1,mode=text"),
            ("tool-agent", ",mode=text"),
        )
    )
    spec = ReplaySpec(
        store=root,
        limit=3,
        fractions=(0.5, 0.9),
        forecasters=forecasters,
        archive=snapshot.archive,
        snapshot=snapshot.id,
        concurrency=2,
    )
    store = RunStore(db_url(tmp / name / "hindcast.db"))
    models = Models(cache=ResponseCache(mode="off"))  # every request reaches the fake model
    try:
        result = api.sweep(
            spec,
            runs=store,
            out=tmp / name / "out",
            now=at("2026-11-30T00:00:00"),
            models=models,
        )
    finally:
        models.close()
    return store.forecasts(result.run_id)


def stored(rows):
    return sorted(
        (
            r.forecaster,
            r.market_id,
            r.t0,
            r.forecast.probability,
            r.forecast.error,
            r.forecast.evidence,
            r.forecast.rationale,
            r.forecast.raw,
        )
        for r in rows
    )


def test_flipping_every_outcome_changes_no_request_and_no_forecast(tmp_path, tmp_path_factory):
    snapshot = shared_fed_archive(tmp_path_factory)
    bundle = open_version(SAMPLE_MARKETS).bundle
    flipped = dataclasses.replace(
        bundle,
        resolutions=tuple(
            dataclasses.replace(r, status=FLIP.get(r.status, r.status)) for r in bundle.resolutions
        ),
    )
    assert [r.outcome for r in flipped.resolutions] != [r.outcome for r in bundle.resolutions]
    fake = FakeChatModel(default=hashed_model)
    with fake.serve() as url:
        rows = sweep(tmp_path, "as-resolved", bundle, url, snapshot)
        first = [canonical(b) for b in fake.requests]
        flipped_rows = sweep(tmp_path, "flipped", flipped, url, snapshot)
        second = [canonical(b) for b in fake.requests[len(first) :]]
    assert len(rows) == 18 and all(r.forecast.ok for r in rows), [r.forecast.error for r in rows]
    assert first and sorted(first) == sorted(second)
    assert stored(rows) == stored(flipped_rows)


def test_the_forecaster_interface_carries_no_outcome():
    names = {f.name for f in dataclasses.fields(Question)}
    assert not names & {"outcome", "status", "resolution", "resolved_at", "known_at", "resolved_to"}
    ctx = Context(at("2025-11-01T00:00:00"), "m", (), ())
    with pytest.raises(AttributeError):
        ctx.t0 = at("2026-01-01T00:00:00")  # a forecaster (or a tool call) cannot move t0
    assert ctx.t0 == at("2025-11-01T00:00:00")
