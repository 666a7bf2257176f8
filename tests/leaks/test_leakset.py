"""The shipped leak sets (data/leakset: markets of the shipped sample; data/leakset/heldout:
resolved markets outside it): schema and invariants (against the shipped market sample where
the markets are in it), the benchmark's arithmetic on crafted rows, the model-free detector's
precision and recall against the recorded measurements, and the acceptance target (recall ≥
0.9 at precision ≥ 0.9 on the misdated positives of the sample set)."""

from __future__ import annotations

import asyncio
import functools
import json
from datetime import datetime
from pathlib import Path

import pytest

from benchmarks.leak_detectors import (
    MEASURED,
    SETS,
    Row,
    best_recall,
    evaluate,
    judge_rows,
    load_questions,
    load_rows,
    measure,
)
from hindcast.leaks import Verdict, get_detector
from hindcast.markets.store import open_version
from hindcast.replay.cutoffs import fraction_cutoff, lifetime
from hindcast.timeutil import ONE_DAY
from tests.helpers import SAMPLE_MARKETS

FIELDS = {
    "id",
    "market_id",
    "question",
    "t0",
    "text",
    "source",
    "headline_id",
    "original_created_at",
    "stamped_created_at",
    "label",
    "kind",
    "hand_checked",
    "outcome",
}
KINDS = {"positive": "misdated-outcome", "negative": "pre-t0-same-topic"}
MARGIN = 0.02  # embedding arithmetic may move a borderline score across a threshold on another CPU


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _jsonl(folder: Path, name: str) -> list[dict]:
    return [json.loads(line) for line in (folder / name).open(encoding="utf-8")]


@pytest.fixture(scope="module", params=sorted(SETS))
def leakset(request) -> Path:
    return SETS[request.param]


@pytest.fixture(scope="module")
def raw(leakset) -> list[dict]:
    return _jsonl(leakset, "leakset.jsonl")


@pytest.fixture(scope="module")
def markets(leakset) -> dict[str, dict]:
    return {m["market_id"]: m for m in _jsonl(leakset, "markets.jsonl")}


@pytest.fixture(scope="module")
def sample():
    bundle = open_version(Path(SAMPLE_MARKETS)).bundle
    return bundle, {r.market_id: r for r in bundle.resolutions}


# ---- schema and invariants -------------------------------------------------------------------------
def test_rows_have_the_documented_fields_and_labels(raw):
    assert raw and all(set(r) == FIELDS for r in raw)
    assert all(KINDS[r["label"]] == r["kind"] for r in raw)
    assert all(isinstance(r["hand_checked"], bool) and r["outcome"] in ("yes", "no") for r in raw)
    assert all(r["text"].strip() and r["source"].strip() for r in raw)


def test_ids_are_unique_and_no_headline_is_both_labels_for_one_market(raw):
    assert len({r["id"] for r in raw}) == len(raw)
    pairs = [(r["market_id"], r["headline_id"]) for r in raw]
    assert len(set(pairs)) == len(pairs)


def test_size_meets_the_aim():
    labels = [r["label"] for r in _jsonl(SETS["sample"], "leakset.jsonl")]
    assert labels.count("positive") >= 100 and labels.count("negative") >= 200
    held = [r["label"] for r in _jsonl(SETS["heldout"], "leakset.jsonl")]
    assert held.count("positive") >= 50 and held.count("negative") >= 50


def test_positives_are_post_resolution_headlines_stamped_before_t0(raw, markets):
    for r in (r for r in raw if r["label"] == "positive"):
        m = markets[r["market_id"]]
        assert _at(r["stamped_created_at"]) < _at(r["t0"]), r["id"]
        assert _at(r["original_created_at"]) >= _at(m["resolved_at"]), r["id"]


def test_negatives_were_published_before_t0_and_are_not_restamped(raw):
    for r in (r for r in raw if r["label"] == "negative"):
        assert r["stamped_created_at"] == r["original_created_at"], r["id"]
        assert _at(r["original_created_at"]) < _at(r["t0"]), r["id"]


def test_markets_are_listed_once_with_t0_the_day_before_resolution(raw, markets):
    assert {r["market_id"] for r in raw} == set(markets)
    for m in markets.values():
        assert (
            _at(m["t0"]) == _at(m["resolved_at"]) - ONE_DAY and m["question"] and m["description"]
        )
    assert all(
        r["question"] == markets[r["market_id"]]["question"]
        and r["t0"] == markets[r["market_id"]]["t0"]
        and r["outcome"] == markets[r["market_id"]]["outcome"]
        for r in raw
    )


def test_sample_set_markets_are_sample_markets_as_the_set_states_them(sample):
    bundle, resolutions = sample
    texts = {m.id: m for m in bundle.markets}
    markets = {m["market_id"]: m for m in _jsonl(SETS["sample"], "markets.jsonl")}
    for market_id, m in markets.items():
        market, resolution = texts[market_id], resolutions[market_id]
        assert (m["question"], m["description"]) == (market.question, market.description)
        assert m["outcome"] == resolution.status and _at(m["resolved_at"]) == resolution.resolved_at
        t0 = fraction_cutoff(lifetime(market, resolution, bundle.prices.get(market_id, ())), 1.0).t0
        assert _at(m["t0"]) == t0  # the f=1.0 cutoff of the default sweep


def test_heldout_set_shares_no_market_and_no_headline_with_the_sample_set():
    sample_rows, held_rows = (
        _jsonl(SETS["sample"], "leakset.jsonl"),
        _jsonl(SETS["heldout"], "leakset.jsonl"),
    )
    sample_ids = {r["id"] for r in _jsonl(Path(SAMPLE_MARKETS) / "forecastbench", "markets.jsonl")}
    assert not {r["market_id"] for r in held_rows} & sample_ids
    assert not {r["headline_id"] for r in held_rows} & {r["headline_id"] for r in sample_rows}


def test_hand_check_record_matches_the_rows(raw, leakset):
    check = json.loads((leakset / "handcheck.json").read_text(encoding="utf-8"))
    key = {r["id"]: f"{r['market_id'][:10]}:{r['headline_id']}" for r in raw}
    positives = [r for r in raw if r["label"] == "positive"]
    assert all(r["hand_checked"] and key[r["id"]] in check["positive_ok"] for r in positives)
    assert not set(check["positive_ok"]) & set(check["positive_rejected"])
    negatives = [r for r in raw if r["label"] == "negative"]
    assert all(key[r["id"]] not in check["negative_dropped"] for r in negatives)
    assert all(r["hand_checked"] == (key[r["id"]] in check["negative_read"]) for r in negatives)
    assert 40 <= sum(r["hand_checked"] for r in negatives)


# ---- the benchmark's arithmetic ---------------------------------------------------------------------
def _row(i: int, market: str, positive: bool, checked: bool = True) -> Row:
    return Row(f"r{i}", market, f"text {i}", positive, checked)


def _verdict(flagged: bool, score: float) -> Verdict:
    return Verdict("reveals-outcome" if flagged else "neither", score, "crafted")


CRAFTED = [
    _row(0, "a", True),
    _row(1, "a", True),
    _row(2, "a", False),
    _row(3, "b", True),
    _row(4, "b", False),
    _row(5, "b", False, checked=False),
    _row(6, "c", True),
]


def test_precision_recall_and_failures_on_crafted_rows():
    flagged = [True, False, True, True, False, True, None]  # r6 failed: out of both figures
    m = measure(CRAFTED, flagged, "crafted")
    assert (m["tp"], m["fp"], m["fn"], m["tn"], m["failures"]) == (2, 2, 1, 1, 1)
    assert m["precision"] == 2 / 4 and m["recall"] == 2 / 3
    assert m["precision_ci"][0] <= m["precision"] <= m["precision_ci"][1]
    assert m["recall_ci"][0] <= m["recall"] <= m["recall_ci"][1]
    assert measure(CRAFTED, flagged, "crafted") == m  # seeded: the same interval to the byte


def test_hand_checked_subset_and_best_threshold_on_crafted_rows():
    scores = [0.9, 0.4, 0.6, 0.8, 0.1, 0.7, 0.95]
    verdicts = [_verdict(s >= 0.5, s) for s in scores]
    result = evaluate("crafted", CRAFTED, verdicts)
    assert (result["hand_checked"]["tp"], result["hand_checked"]["fp"]) == (
        3,
        1,
    )  # r5 (fp, unchecked) left out
    assert (result["all"]["tp"], result["all"]["fp"]) == (3, 2)
    # thresholds: 0.8 → flags r6, r0, r3 (all positive): precision 1, recall 3/4 — the best at ≥ 0.9
    assert best_recall(CRAFTED, verdicts, 0.9) == {
        "threshold": 0.8,
        "precision": 1.0,
        "recall": 0.75,
    }


# ---- the model-free detector against the recorded measurement ---------------------------------------
def _measured(name: str) -> dict:
    return json.loads((SETS[name] / MEASURED).read_text(encoding="utf-8"))["detectors"]["lexical"]


@functools.cache
def _lexical_on(folder: Path) -> dict:
    """The lexical detector's figures on a set (judged once per test session)."""
    rows, questions = load_rows(folder), load_questions(folder)
    return evaluate(
        "lexical", rows, asyncio.run(judge_rows(get_detector("lexical"), rows, questions))
    )


@pytest.fixture(scope="module")
def lexical(leakset):
    return _lexical_on(leakset)


def test_lexical_precision_and_recall_equal_the_measured_values(lexical, leakset):
    recorded = json.loads((leakset / MEASURED).read_text(encoding="utf-8"))["detectors"]["lexical"]
    for subset in ("all", "hand_checked"):
        now, then = lexical[subset], recorded[subset]
        assert now["failures"] == 0
        assert now["precision"] == pytest.approx(then["precision"], abs=MARGIN), subset
        assert now["recall"] == pytest.approx(then["recall"], abs=MARGIN), subset


_M = _measured("sample")["all"]


@pytest.mark.xfail(
    _M["precision"] < 0.9 or _M["recall"] < 0.9,
    strict=True,
    reason=f"issue 16 acceptance not met: lexical measured precision {_M['precision']:.3f}, "
    f"recall {_M['recall']:.3f} on the misdated positives (target ≥ 0.9 each)",
)
def test_lexical_reaches_recall_and_precision_0_9_on_misdated_positives():
    misdated = _lexical_on(SETS["sample"])["all"]
    assert (
        misdated["precision"] >= 0.9 and misdated["recall"] >= 0.9
    )  # every positive is a misdated headline


# ---- the LLM judge over the fake chat model, scripted: its figures computed exactly ------------------
THUNBERG, CIATTARELLI = "0x319825b4", "0xda8ebb9d"


def _scripted_answers(rows: list[Row]) -> dict[str, str]:
    """text → the fake judge's answer. Thunberg market: the first 5 positives flagged, the 6th
    missed; the first hand-checked and the first unchecked negative flagged ("after-date"), the
    rest "neither". Ciattarelli market: 3 positives flagged, the 4th missed, the 5th unreadable;
    every negative "neither"."""

    def of(market, positive, checked=None):
        return [
            r
            for r in rows
            if r.market_id.startswith(market)
            and r.positive == positive
            and (checked is None or r.hand_checked == checked)
        ]

    reveal, after, neither = (
        '{"label": "reveals-outcome", "confidence": 0.9}',
        '{"label": "after-date", "confidence": 0.7}',
        '{"label": "neither", "confidence": 0.8}',
    )
    script = {r.text: neither for r in rows}
    script |= {r.text: reveal for r in of(THUNBERG, True)[:5] + of(CIATTARELLI, True)[:3]}
    script |= {
        r.text: after for r in of(THUNBERG, False, True)[:1] + of(THUNBERG, False, False)[:1]
    }
    script[of(CIATTARELLI, True)[4].text] = (
        "I cannot tell."  # unreadable, and again after the repair
    )
    return script


def test_the_judge_over_the_scripted_fake_model_has_exactly_the_scripted_figures():
    import httpx

    from hindcast.llm.fake import FakeChatModel
    from hindcast.llm.models import Models

    folder = SETS["sample"]
    rows = [r for r in load_rows(folder) if r.market_id[:10] in (THUNBERG, CIATTARELLI)]
    assert (len(rows), sum(r.positive for r in rows), sum(r.hand_checked for r in rows)) == (
        34,
        11,
        29,
    )
    script = _scripted_answers(rows)

    def reply(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        return (
            script[prompt.split('Text:\n"""\n', 1)[1].split('\n"""', 1)[0]]
            if 'Text:\n"""' in prompt
            else ""
        )

    fake = FakeChatModel([], default=reply)
    models = Models(http=lambda: httpx.AsyncClient(transport=fake.transport()), backoff=0.0)
    detector = get_detector("judge:model=openai-compatible:http://judge.test/v1#scripted", models)

    async def run():
        try:
            return await judge_rows(detector, rows, load_questions(folder))
        finally:
            await models.aclose()

    result = evaluate(detector.name, rows, asyncio.run(run()))
    every, checked = result["all"], result["hand_checked"]
    assert (every["tp"], every["fp"], every["fn"], every["tn"], every["failures"]) == (
        8,
        2,
        2,
        21,
        1,
    )
    assert (every["precision"], every["recall"]) == (0.8, 0.8)
    assert (checked["tp"], checked["fp"], checked["fn"], checked["tn"], checked["failures"]) == (
        8,
        1,
        2,
        17,
        1,
    )
    assert (checked["precision"], checked["recall"]) == (8 / 9, 0.8)
    assert len(fake.requests) == 34 + 1  # one repair for the unreadable answer


@pytest.mark.llm_server
def test_the_local_model_judge_on_the_small_subset_equals_the_measured_values():
    """judge:model=local (the embedded SmolLM2-135M, temperature 0) on the two markets of
    SMALL_MARKETS (34 rows); its figures recorded by the benchmark under the judge's full name
    (a changed template changes the name: re-measure)."""
    from benchmarks.leak_detectors import judge_small_locally

    name, rows, verdicts = judge_small_locally()
    now = evaluate(name, rows, verdicts)["all"]
    recorded = json.loads((SETS["sample"] / MEASURED).read_text(encoding="utf-8"))["detectors"]
    assert name in recorded, f"no measured figures for {name}: run benchmarks/leak_detectors.py"
    then = recorded[name]["small"]
    assert now["rows"] == then["rows"] == 34
    assert abs(now["failures"] - then["failures"]) <= 2
    for key in (
        "tp",
        "fp",
        "fn",
    ):  # temperature 0, but float arithmetic may still differ by a token across CPUs
        assert abs(now[key] - then[key]) <= 3, key
