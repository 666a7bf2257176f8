"""Retrieval policies through the whole pipeline (issue 16 acceptance): three real markets of the
shipped sample, each asked 10 days before it resolved; an archive built here (ingest, freeze,
embed with the hash embedder) in which a MISDATED headline stating each market's outcome is
stamped 3 days before t0; one sweep of the retrieval agent under `pit`, `pit+filter` (detector:
the scripted marker detector of tests/audit/planted_run.py) and `none`, with the fake chat model
playing a model that follows a leak when it is shown one. Then the stored run is rescored,
sliced by policy, compared on matched rows and audited."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import httpx
import pytest

from hindcast import api, replay
from hindcast.analysis.policy_pairs import COLUMNS, policy_pairs
from hindcast.audit import run_audit
from hindcast.leaderboard.viewer import stored_details
from hindcast.llm.fake import FakeChatModel, answer
from hindcast.llm.models import Models
from hindcast.replay.spec import ReplaySpec
from hindcast.runs import retrievals_form
from hindcast.runs.store import RunStore
from tests.audit import planted_run
from tests.audit.planted_run import LEAK_MARK
from tests.helpers import SAMPLE_MARKETS, at

MODEL = "openai-compatible:http://fake.invalid/v1#follows-leaks"
BASE = f"retrieval-agent:model={MODEL},rounds=1,mode=text"
PIT, FILTERED, CLOSED = BASE, BASE + ",policy=pit+filter,detector=scripted", BASE + ",policy=none"
QUESTION_LINE = re.compile(r"^Question: (.*)$", re.MULTILINE)
STATED = re.compile(LEAK_MARK + r": (YES|NO)")


def follows_leaks(body):
    """Seed: search for the question itself; reflect: no follow-up; final: the outcome a leak
    states if one is in the prompt (0.95 / 0.05), else 0.5."""
    text = "\n".join(m["content"] or "" for m in body["messages"])
    props = (
        body.get("response_format", {})
        .get("json_schema", {})
        .get("schema", {})
        .get("properties", {})
    )
    if "summary" in props:
        return answer(json.dumps({"summary": "read the headlines", "queries": []}))
    if "queries" in props:
        return answer(json.dumps({"queries": [QUESTION_LINE.search(text).group(1)]}))
    stated = STATED.search(text)
    p = 0.5 if stated is None else (0.95 if stated.group(1) == "YES" else 0.05)
    return answer(json.dumps({"probability": p}))


def planted_archive(folder, markets):
    """Per market: the misdated outcome statement (t0 − 3 days) and a neutral
    headline (t0 − 5 days)."""
    rows = []
    for n, (_, t0, outcome, asked) in enumerate(markets):
        rows += [
            {
                "id": f"leak-{n}",
                "created_utc": stamp(t0, 3),
                "source": "Planted Wire",
                "kind": "news_headline",
                "title": f"{asked.rstrip('?')}? It has {LEAK_MARK}: "
                f"{'YES' if outcome == 1.0 else 'NO'}",
            },
            {
                "id": f"neutral-{n}",
                "created_utc": stamp(t0, 5),
                "source": "Planted Wire",
                "kind": "news_headline",
                "title": f"{asked.rstrip('?')}: officials meet to discuss the calendar",
            },
        ]
    inputs = folder / "news.jsonl"
    inputs.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    archive = folder / "archive"
    api.ingest([inputs], "planted", "headlines", archive)
    api.embed(archive, api.freeze(archive), "hash")
    return archive


def stamp(t0, days: int) -> int:
    return int((t0 - timedelta(days=days)).timestamp())


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    folder = tmp_path_factory.mktemp("policies-sweep")
    planted_run.register_scripted()
    _, markets = planted_run.sample_markets(3)
    archive = planted_archive(folder, markets)
    fake = FakeChatModel(default=follows_leaks)
    store = RunStore(f"sqlite:///{folder / 'h.db'}")
    spec = ReplaySpec(
        store=SAMPLE_MARKETS,
        ids=tuple(m for m, *_ in markets),
        fractions=(),
        offsets=("10d",),
        archive=archive,
        forecasters=(PIT, FILTERED, CLOSED),
    )
    with Models(http=lambda: httpx.AsyncClient(transport=fake.transport())) as models:
        result = api.sweep(
            spec, runs=store, out=folder / "out", now=at("2026-11-30T00:00:00"), models=models
        )
    yield store, result.run_id, markets, fake, folder
    store.close()


def by_forecaster(rows):
    out = {}
    for r in rows:
        out.setdefault(r.forecaster, []).append(r)
    return out


def test_the_run_is_asked_at_the_planted_instants_and_nothing_failed(swept):
    store, run_id, markets, _, _ = swept
    rows = api.rescore(store, run_id).rows
    assert {(r.market_id, r.t0) for r in rows} == {(m, t0) for m, t0, _, _ in markets}
    assert len(rows) == 9 and all(r.probability is not None for r in rows)


def test_pit_reads_the_leak_filter_withholds_it_closed_book_reads_nothing(swept):
    store, run_id, _, fake, _ = swept
    details = {key[1:]: d for key, d in stored_details(store, run_id).items()}
    logs = {
        name: [retrievals_form(d.retrievals) for (f, *_), d in details.items() if f == name]
        for name in (PIT, FILTERED, CLOSED)
    }

    def read(name):
        return {i for calls in logs[name] for c in calls for i in c.get("ids", ())}

    leaks = {f"leak-{n}" for n in range(3)}
    assert leaks <= read(PIT) and leaks <= read(FILTERED)  # the archive returned them to both
    withheld = {
        c["doc_id"]: c["verdict"]["label"]
        for calls in logs[FILTERED]
        for c in calls
        if c["op"] == "withhold"
    }
    assert withheld == dict.fromkeys(
        leaks, "reveals-outcome"
    )  # every removal stored with its verdict
    assert not any(c["op"] == "withhold" for calls in logs[PIT] for c in calls)
    assert len(logs[CLOSED]) == 3 and all(
        not calls for calls in logs[CLOSED]
    )  # no archive call at all
    finals = [
        json.dumps(b)
        for b in fake.requests
        if "probability" in json.dumps(b.get("response_format", {}))
    ]
    assert sum(LEAK_MARK in b for b in finals) == 3  # only the three pit finals were shown a leak …
    assert (
        sum(LEAK_MARK in json.dumps(b) for b in fake.requests) == 6
    )  # … and pit's reflections: nothing else


def test_the_leak_moves_the_score_and_the_policy_slice_shows_it(swept):
    store, run_id, _, _, _ = swept
    scores = api.rescore(store, run_id)
    board = {(r.slice, r.forecaster): r for r in replay.leaderboard_of(scores, by="policy")}
    assert set(board) == {
        ("policy=pit", PIT),
        ("policy=pit+filter", FILTERED),
        ("policy=none", CLOSED),
    }
    assert board[("policy=pit", PIT)].brier == pytest.approx(0.05**2)  # it followed the leak
    assert board[("policy=pit+filter", FILTERED)].brier == pytest.approx(0.25)
    assert board[("policy=none", CLOSED)].brier == pytest.approx(0.25)
    table = {r[0]: dict(zip(COLUMNS, r)) for r in policy_pairs(scores.rows, replicates=200).rows}
    assert table[FILTERED]["twin"] == PIT and table[FILTERED]["n_paired"] == 3
    assert table[FILTERED]["brier_diff"] == pytest.approx(0.25 - 0.0025)


def audit_rows(swept):
    store, run_id, _, _, folder = swept
    planted_run.register_scripted()
    result = run_audit.audit(
        store, run_id, ("scripted",), audit_file=folder / "audits.db", replicates=200
    )
    return {row["forecaster"]: row for row in result.to_json()["forecasters"]}


def test_the_audit_flags_what_pit_read_and_finds_nothing_read_closed_book(swept):
    rows = audit_rows(swept)
    assert (rows[PIT]["docs_flagged"], rows[PIT]["evidence_flagged"]) == (3, 3)
    assert (rows[CLOSED]["docs_read"], rows[CLOSED]["flagged_forecasts"]) == (0, 0)


def test_the_audit_does_not_count_withheld_documents_as_read(swept):
    rows = audit_rows(swept)
    assert (
        rows[FILTERED]["docs_withheld"],
        rows[FILTERED]["docs_flagged"],
        rows[FILTERED]["evidence_flagged"],
    ) == (3, 0, 0)
