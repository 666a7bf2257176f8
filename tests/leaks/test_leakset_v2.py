"""The second leak set (data/leakset/v2: dev + held-out, issue 30): schema and invariants, the
fixed split rule, the held-out files against the sha256 frozen with them, the hand-check
record, the model-free detectors' figures against the recorded measurements on every set, and
the cues `lexical2` adds, on real headlines of the set."""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from benchmarks.leak_detectors import (
    ALL_SETS,
    MEASURED,
    SETS,
    SETS_V2,
    evaluate,
    judge_rows,
    load_questions,
    load_rows,
)
from hindcast.leaks import get_detector
from hindcast.leaks.lexical2 import crosses, event_cue, question_figure, sibling_veto
from hindcast.records import Question
from tests.leaks.test_leakset import KINDS, MARGIN, _at, _jsonl

V2 = SETS_V2["v2-dev"].parent
FIELDS = {
    "id", "market_id", "question", "t0", "text", "source", "headline_id", "original_created_at",
    "stamped_created_at", "label", "kind", "hand_checked", "outcome", "category", "cluster",
}  # fmt: skip
CATEGORIES = {
    "positive": {"direct", "noun", "presupposed", "number", "winner-on-loser", "consequence"},
    "negative": {
        "same-topic", "hedge", "forecast", "odds", "poll", "rival-news", "number-not-crossing",
        "outcome-word-other-sense",
    },
}  # fmt: skip


@pytest.fixture(scope="module", params=sorted(SETS_V2))
def part(request) -> Path:
    return SETS_V2[request.param]


def test_rows_have_the_schema_and_every_row_was_read(part):
    rows = _jsonl(part, "leakset.jsonl")
    markets = {m["market_id"]: m for m in _jsonl(part, "markets.jsonl")}
    assert rows and set(markets) == {r["market_id"] for r in rows}
    for r in rows:
        assert set(r) == FIELDS, r["id"]
        assert r["hand_checked"] is True
        assert r["kind"] == KINDS[r["label"]]
        assert r["category"] in CATEGORIES[r["label"]], r["id"]
        m = markets[r["market_id"]]
        assert (r["question"], r["t0"], r["outcome"], r["cluster"]) == (
            m["question"], m["t0"], m["outcome"], m["cluster"],
        )  # fmt: skip
        t0, original, stamped = (
            _at(r["t0"]),
            _at(r["original_created_at"]),
            _at(r["stamped_created_at"]),
        )
        assert t0 == _at(m["resolved_at"]) - (_at(m["resolved_at"]) - t0)  # parses
        if r["label"] == "positive":  # published at or after the resolution, re-stamped before t0
            assert original >= _at(m["resolved_at"]) and stamped < t0
            assert (t0 - stamped).total_seconds() / 3600 in range(1, 169)
        else:  # a real pre-t0 headline, never re-stamped
            assert original == stamped < t0
    assert len({r["id"] for r in rows}) == len(rows)


def test_split_is_the_fixed_cluster_hash_rule_and_whole_clusters():
    """sha256('leakset-v2:' + cluster) ≡ 0 mod 3 → held-out, computed here from the rule."""
    for name, folder in SETS_V2.items():
        for m in _jsonl(folder, "markets.jsonl"):
            digest = int(hashlib.sha256(f"leakset-v2:{m['cluster']}".encode()).hexdigest(), 16)
            assert (digest % 3 == 0) == (name == "v2-heldout"), m["cluster"]
    dev, held = (_jsonl(SETS_V2[n], "leakset.jsonl") for n in ("v2-dev", "v2-heldout"))
    assert not {r["cluster"] for r in dev} & {r["cluster"] for r in held}
    assert not {r["market_id"] for r in dev} & {r["market_id"] for r in held}
    # one headline is in both parts, for markets of two clusters with different cutoffs: a
    # negative (odds) for the March Fed-chair markets, a positive (consequence) for "will Trump
    # refrain from announcing a Fed chair in 2025"
    assert {r["headline_id"] for r in dev} & {r["headline_id"] for r in held} == {
        "wklnd-202601292158-35712"
    }


def test_v2_shares_no_market_and_no_headline_with_the_first_sets():
    old = [r for folder in SETS.values() for r in _jsonl(folder, "leakset.jsonl")]
    new = [r for folder in SETS_V2.values() for r in _jsonl(folder, "leakset.jsonl")]
    assert not {r["market_id"] for r in old} & {r["market_id"] for r in new}
    assert not {r["headline_id"] for r in old} & {r["headline_id"] for r in new}


def test_heldout_files_are_the_ones_frozen_before_tuning():
    lines = (V2 / "heldout.sha256").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    for line in lines:
        digest, name = line.split()
        assert hashlib.sha256((V2 / name).read_bytes()).hexdigest() == digest, name


def test_every_row_is_in_the_handcheck_with_its_label_and_category():
    check = json.loads((V2 / "handcheck.json").read_text(encoding="utf-8"))["rows"]
    rows = [r for folder in SETS_V2.values() for r in _jsonl(folder, "leakset.jsonl")]
    for r in rows:
        key = f"{r['market_id'][:10]}:{r['headline_id']}"
        assert check[key] == f"{r['label']}:{r['category']}", key
    kept = {k for k, v in check.items() if not v.startswith("drop:")}
    in_set = {f"{r['market_id'][:10]}:{r['headline_id']}" for r in rows}
    assert in_set <= kept
    # read and kept but left out: the headline is in one of the first sets (never reused)
    old = {r["headline_id"] for f in SETS.values() for r in _jsonl(f, "leakset.jsonl")}
    assert {k.split(":", 1)[1] for k in kept - in_set} <= old
    assert all(v.split(":", 1)[1] for v in check.values())  # a drop names its reason


# ---- the model-free detectors against the recorded measurements ---------------------------------
@functools.cache
def _figures(spec: str, folder: Path) -> dict:
    rows, questions = load_rows(folder), load_questions(folder)
    return evaluate(spec, rows, asyncio.run(judge_rows(get_detector(spec), rows, questions)))


@pytest.mark.parametrize(
    "spec,name",
    [("lexical", "v2-dev"), ("lexical", "v2-heldout")]
    + [("lexical2", name) for name in sorted(ALL_SETS)],
)
def test_recorded_figures_equal_what_the_detector_computes(spec, name):
    folder = ALL_SETS[name]
    recorded = json.loads((folder / MEASURED).read_text(encoding="utf-8"))["detectors"][spec]
    now = _figures(spec, folder)
    for subset in ("all", "hand_checked"):
        assert now[subset]["failures"] == 0
        for figure in ("precision", "recall"):
            assert now[subset][figure] == pytest.approx(recorded[subset][figure], abs=MARGIN)
        assert now[subset]["rows"] == recorded[subset]["rows"]
    if "by_category" in recorded:
        assert set(now["by_category"]) == set(recorded["by_category"])


# ---- lexical2's cues on real headlines of the set ----------------------------------------------
def _q(text: str) -> Question:
    return Question("0xtest", text, "", datetime(2025, 11, 17, tzinfo=timezone.utc), "", "")


def test_a_figure_past_the_threshold_in_its_direction_is_a_cue():
    down = question_figure("Will Bitcoin dip to $90,000 by December 31, 2025?")
    assert down == (90000.0, "$", -1)
    assert crosses("Bitcoin falls below $82,000 as selling isn’t letting up", down)
    assert crosses("Bitcoin’s trading around $86,000", down)
    assert not crosses("Bitcoin extends decline to $104,782", down)  # not past it
    assert not crosses("Crypto liquidations top $2.2 Billion", down)  # another scale
    up = question_figure("Will Gold (GC) hit (HIGH) $10,000 by end of February?")
    assert up == (10000.0, "$", 1)
    assert not crosses("options traders made bets the metal could hit $20,000", up)  # ahead
    assert question_figure("Will Gold close at $2,700-2,800 at the end of 2025?") is None


def test_an_event_noun_counts_only_between_the_question_parties_and_not_hedged():
    q = "US strikes Iran by June 30, 2026?"
    assert event_cue("World reacts as U.S.-Israeli attacks on Iran sprawl into regional war", q)
    assert not event_cue("Top energy expert puts odds of U.S. attack on Iran at 75%", q)
    assert not event_cue("Why Iran's response to a US attack could be different this time", q)
    assert not event_cue("Russian strike on Odesa kills 8", "US x Russia military clash?")


def test_a_sibling_contest_is_not_the_question():
    q = "Will Donald Trump win Nobel Peace Prize in 2025?"
    assert sibling_veto("Trio win Nobel chemistry prize for 'Hermione's handbag' materials", q)
    assert not sibling_veto("Maria Corina Machado says her Nobel Peace Prize tells Venezuelans", q)


def test_lexical2_flags_a_rival_winner_and_leaves_lexical_unchanged():
    q = _q("Will Trump nominate Jerome Powell as the next Fed chair?")
    text = (
        "Why Iran war oil price shock won't stop Fed pick Kevin Warsh from cutting interest rates"
    )
    assert asyncio.run(get_detector("lexical2").judge(text, q)).flagged
    assert not asyncio.run(get_detector("lexical").judge(text, q)).flagged
