"""The memorisation probe on the fake chat model scripted to "know" some outcomes: the rates
per model and regime asserted exactly, answers read strictly, a cached re-run asks nothing,
an outage is never an answer, and recalled (model, market) pairs leave the scored rows."""

import asyncio
import json

import httpx
import pytest

from hindcast.audit.probe import ProbeAnswer, ProbeItem, models_of, parse_recall, probe
from hindcast.audit.probe_report import recall_finding
from hindcast.audit.probe_run import probe_recall
from hindcast.audit.probe_store import (
    RecallTable,
    exclude_recalled,
    load_recall,
    save_recall,
)
from hindcast.errors import ConfigError, StoppedError
from hindcast.llm.cache import ResponseCache
from hindcast.llm.fake import FakeChatModel, error
from hindcast.llm.models import Models
from hindcast.records import Question
from hindcast.scoring.aggregate import ScoredRow
from tests.helpers import SAMPLE_MARKETS, at

A = "openai-compatible:http://fake.test/v1#fake-a"
B = "openai-compatible:http://fake.test/v1#fake-b"
CUTOFFS = {"fake-a": at("2024-06-01T00:00:00"), "fake-b": at("2024-06-01T00:00:00")}
# market: (t0, resolved_at, outcome) — regimes for a cutoff of 2024-06-01, at the boundaries
MARKETS = {
    "m1": ("2024-01-01T00:00:00", "2024-03-01T00:00:00", 1.0),  # T1
    "m2": (
        "2024-02-01T00:00:00",
        "2024-05-31T23:59:59",
        0.0,
    ),  # T1: resolved a second before the cutoff
    "m3": ("2024-05-01T00:00:00", "2024-06-01T00:00:00", 1.0),  # T2: resolved exactly at the cutoff
    "m4": ("2024-06-01T00:00:00", "2024-08-01T00:00:00", 1.0),  # T3: t0 exactly at the cutoff
    "m5": ("2024-05-31T23:59:59", "2024-09-01T00:00:00", 0.0),  # T2: t0 a second before the cutoff
}
RECALL = {  # what each model "knows" when asked plainly (raw answer text); absent: unknown
    "fake-a": {
        "m1": '{"outcome": "yes", "confidence": 0.95}',
        "m2": '{"outcome": "no", "confidence": 0.9}',
        "m3": '{"outcome": "no", "confidence": 0.95}',  # confidently wrong: not recalled
        "m4": '{"outcome": "yes", "confidence": 0.6}',
    },  # right, not confident: not recalled
    "fake-b": {
        "m1": '{"outcome": "yes", "confidence": 0.8}',  # exactly the threshold: recalled
        "m3": "I really could not say.",
    },  # unreadable twice: a counted failure
}
AT_T0 = {  # probabilities at t0; absent: 0.5
    "fake-a": {
        "m1": '{"probability": 0.97}',
        "m2": '{"probability": 0.03}',
        "m4": '{"probability": 0.95}',
    },
    "fake-b": {
        "m1": '{"probability": 0.9}',
        "m5": '{"probability": 0.1}',  # both exactly at the threshold
        "m4": "no idea at all",
    },  # unreadable twice: a counted failure
}


def items():
    return [
        ProbeItem(
            Question(m, f"Will event {m} happen?", f"Details of {m}.", at(t0)),
            outcome,
            at(resolved),
        )
        for m, (t0, resolved, outcome) in MARKETS.items()
    ]


def scripted(body: dict) -> str:
    model, system, user = (
        body["model"],
        body["messages"][0]["content"],
        body["messages"][1]["content"],
    )
    market = next(m for m in MARKETS if f"event {m} " in user)
    if "from your own memory" in system:
        return RECALL[model].get(market, '{"outcome": "unknown", "confidence": 0.0}')
    return AT_T0[model].get(market, '{"probability": 0.5}')


def models_for(fake: FakeChatModel, tmp_path, **settings) -> Models:
    cache = ResponseCache(tmp_path / "responses.db")
    return Models(
        {},
        cache,
        http=lambda: httpx.AsyncClient(transport=fake.transport()),
        owns_cache=True,
        backoff=0.0,
        **settings,
    )


def run_probe(fake, tmp_path, specs=(A, B), **settings):
    with models_for(fake, tmp_path, **settings) as models:
        return asyncio.run(probe(models_of(specs), items(), models, CUTOFFS))


def test_rates_per_model_and_regime_are_exact(tmp_path):
    result = run_probe(FakeChatModel(default=scripted), tmp_path)
    assert not result.outages and len(result.answers) == 20
    rows = {(r[0].rpartition("#")[2], r[1]): r[2:] for r in recall_finding(result.answers).rows}
    # markets · after: answered, recalled, share, failures · t0: answered, hits, share, failures
    assert rows == {
        ("fake-a", "T1"): (2, 2, 2, 1.0, 0, 2, 2, 1.0, 0),
        ("fake-a", "T2"): (2, 2, 0, 0.0, 0, 2, 0, 0.0, 0),
        ("fake-a", "T3"): (1, 1, 0, 0.0, 0, 1, 1, 1.0, 0),
        ("fake-a", "all"): (5, 5, 2, 0.4, 0, 5, 3, 0.6, 0),
        ("fake-b", "T1"): (2, 2, 1, 0.5, 0, 2, 1, 0.5, 0),
        ("fake-b", "T2"): (2, 1, 0, 0.0, 1, 2, 1, 0.5, 0),
        ("fake-b", "T3"): (1, 1, 0, 0.0, 0, 0, 0, None, 1),
        ("fake-b", "all"): (5, 4, 1, 0.25, 1, 4, 2, 0.5, 1),
    }
    failure = next(
        a for a in result.answers if a.model == B and a.market_id == "m3" and a.kind == "after"
    )
    assert (
        failure.error.startswith("invalid answer after 2 attempt(s)")
        and failure.raw == "I really could not say."
    )
    assert RecallTable(result.answers).recalled() == {(A, "m1"), (A, "m2"), (B, "m1")}


def test_no_document_reaches_the_model_and_t0_is_stated(tmp_path):
    fake = FakeChatModel(default=scripted)
    run_probe(fake, tmp_path, specs=(A,))
    t0_asks = [
        r for r in fake.requests if "from your own memory" not in r["messages"][0]["content"]
    ]
    assert len(fake.requests) == 10 and len(t0_asks) == 5
    assert all(
        "Use only what was known before 2024-01-01" in r["messages"][1]["content"]
        for r in t0_asks
        if "event m1 " in r["messages"][1]["content"]
    )
    assert all(r["temperature"] == 0.0 and "tools" not in r for r in fake.requests)


def test_a_cached_rerun_makes_no_request(tmp_path):
    fake = FakeChatModel(default=scripted)
    first = run_probe(fake, tmp_path)
    asked = len(fake.requests)
    again = run_probe(fake, tmp_path)
    assert len(fake.requests) == asked and again.answers == first.answers
    assert first.requests == asked == 22 and first.cache_hits == 0  # 20 questions + 2 repair turns
    assert again.requests == 0 and again.cache_hits == 22


def plain(body: dict) -> str:
    """Any market: "unknown" when asked plainly, 0.5 at t0."""
    if "from your own memory" in body["messages"][0]["content"]:
        return '{"outcome": "unknown", "confidence": 0.0}'
    return '{"probability": 0.5}'


def test_an_outage_is_never_an_answer_and_the_next_run_asks_again(tmp_path):
    down = FakeChatModel(
        default=lambda body: error(503) if body["model"] == "fake-b" else plain(body)
    )
    store = tmp_path / "recall.json"
    with (
        models_for(down, tmp_path, max_retries=0) as models,
        pytest.raises(StoppedError, match="not asked"),
    ):
        probe_recall((A, B), SAMPLE_MARKETS, models=models, results=store, limit=2, cutoffs=CUTOFFS)
    stored = load_recall(store)
    assert len(stored.answers) == 4 and stored.models() == {
        A
    }  # fake-a's answers kept, none for fake-b
    up = FakeChatModel(default=plain)
    with models_for(up, tmp_path) as models:
        run = probe_recall(
            (A, B), SAMPLE_MARKETS, models=models, results=store, limit=2, cutoffs=CUTOFFS
        )
    assert len(up.requests) == 4 and {r["model"] for r in up.requests} == {
        "fake-b"
    }  # fake-a: from the cache
    assert len(load_recall(store).answers) == 8 and not run.result.outages and run.markets == 2


def test_recalled_pairs_leave_the_scored_rows_with_a_note():
    answers = [
        ProbeAnswer(
            A,
            "m1",
            "after",
            "2024-01-01T00:00:00Z",
            "f=0.5",
            "T1",
            1.0,
            answer="yes",
            confidence=0.9,
        ),
        ProbeAnswer(
            A,
            "m2",
            "after",
            "2024-02-01T00:00:00Z",
            "f=0.5",
            "T1",
            0.0,
            answer="no",
            confidence=0.5,
        ),
        ProbeAnswer(A, "m2", "t0", "2024-02-01T00:00:00Z", "f=0.5", "T1", 0.0, probability=0.01),
    ]
    table = RecallTable(tuple(answers))
    zero_shot, other, market = f"zero-shot:model={A}", "zero-shot:model=openai:gpt-4o", "market"
    rows = [
        _row(f, m, p) for f in (zero_shot, other, market) for m in ("m1", "m2") for p in (0.7, None)
    ]
    models = {zero_shot: A, other: "openai:gpt-4o", market: None}
    exclusion = exclude_recalled(rows, table, models.get)
    assert [(r.forecaster, r.market_id) for r in exclusion.rows if r.forecaster == zero_shot] == [
        (zero_shot, "m2")
    ] * 2
    assert (
        len(exclusion.rows) == 10
        and exclusion.dropped == {zero_shot: 2}
        and exclusion.markets == {zero_shot: 1}
    )
    assert exclusion.unprobed == {other: 4}
    assert (
        "excluded 2 row(s)" in exclusion.note()
        and "openai:gpt-4o: model not probed, 4 row(s) kept" in exclusion.note()
    )


def _row(forecaster, market_id, p):
    return ScoredRow(
        forecaster,
        market_id,
        at("2024-01-01T00:00:00"),
        "f=0.5",
        "other",
        p,
        None if p else "bad",
        1.0,
        0.5,
    )


def test_the_results_file_merges_and_is_byte_stable(tmp_path):
    result = run_probe(FakeChatModel(default=scripted), tmp_path, specs=(A,))
    path = tmp_path / "out" / "recall.json"
    save_recall(path, RecallTable().merged(result.answers))
    first = path.read_bytes()
    save_recall(path, load_recall(path).merged(result.answers[:3]))
    assert path.read_bytes() == first
    document = json.loads(first)
    assert document["definitions"]["recall_confidence"] == 0.8 and set(document["prompts"]) == {
        "probe_recall",
        "probe_t0",
    }
    path.write_text("{not json")
    with pytest.raises(ConfigError, match="cannot be read"):
        load_recall(path)


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"outcome": "yes", "confidence": 0.9}', ("yes", 0.9)),
        ('Sure: {"outcome": "No", "confidence": "85%"}', ("no", 0.85)),
        ("Outcome: yes. Confidence: 0.7", ("yes", 0.7)),
        ('{"outcome": "unknown"}', ("unknown", 0.0)),
        ('{"outcome": "yes"}', (None, None)),  # a named outcome needs a confidence
        ('{"outcome": "yes", "confidence": 1.5}', (None, None)),
        ("Outcome: yes or outcome: no", (None, None)),  # two outcomes: unreadable, never a pick
        ("", (None, None)),
    ],
)
def test_recall_answers_are_read_strictly(text, expected):
    assert parse_recall(text)[:2] == expected


def test_models_come_from_forecaster_or_model_specs():
    assert [
        a.model for a in models_of(["zero-shot:model=local", "local", "openai:gpt-4.1-mini"])
    ] == ["local", "openai:gpt-4.1-mini"]
    with pytest.raises(ConfigError, match="calls no model"):
        models_of(["market"])


def test_a_stored_runs_rows_lose_the_markets_its_model_recalls(tmp_path):
    """A real sweep (zero-shot on the fake model, and the market baseline) on three sample
    markets; the probe finds the model knows the first; its zero-shot rows there are dropped,
    the baseline keeps every row (it names no model)."""
    from hindcast import api
    from hindcast.audit.probe_store import exclude_recalled_scores
    from hindcast.markets.store import open_version
    from hindcast.replay.spec import ReplaySpec
    from hindcast.runs.database import db_url
    from hindcast.runs.store import RunStore

    bundle = open_version(SAMPLE_MARKETS).bundle
    first = min(r.market_id for r in bundle.resolutions if r.outcome is not None)
    question = next(m.question for m in bundle.markets if m.id == first).strip()
    outcome = (
        "yes"
        if next(r.outcome for r in bundle.resolutions if r.market_id == first) == 1.0
        else "no"
    )

    def knows_first(body):
        if (
            "from your own memory" in body["messages"][0]["content"]
            and question in body["messages"][1]["content"]
        ):
            return f'{{"outcome": "{outcome}", "confidence": 0.99}}'
        return plain(body)

    fake, spec_a = FakeChatModel(default=knows_first), f"zero-shot:model={A}"
    spec = ReplaySpec(
        store=SAMPLE_MARKETS, limit=3, fractions=(0.5,), forecasters=(spec_a, "market")
    )
    store = RunStore(db_url(tmp_path / "hindcast.db"))
    with models_for(fake, tmp_path) as models:
        swept = api.sweep(
            spec,
            runs=store,
            out=tmp_path / "out",
            now=at("2026-01-01T00:00:00"),
            models=models,
        )
        probe_recall(
            [spec_a], SAMPLE_MARKETS, models=models, results=tmp_path / "recall.json", limit=3
        )
    scores = api.rescore(store, swept.run_id)
    kept, exclusion = exclude_recalled_scores(scores, load_recall(tmp_path / "recall.json"))
    assert len(scores.rows) == 6 and len(kept.rows) == 5
    assert [(r.forecaster, r.market_id) for r in scores.rows if r not in kept.rows] == [
        (spec_a, first)
    ]
    assert exclusion.dropped == {spec_a: 1} and exclusion.unprobed == {}
    from hindcast.audit.probe_store import exclude_recalled_runs

    runs, notes = exclude_recalled_runs([scores], tmp_path / "recall.json")
    assert runs[0].rows == kept.rows and notes == [f"run {swept.run_id}: {exclusion.note()}"]
    assert f"{spec_a}: 1 row(s), 1 market(s)" in notes[0]


def test_excluding_by_a_probe_never_run_is_an_error_not_a_silent_no_op(tmp_path):
    from hindcast.audit.probe_store import exclude_recalled_runs

    assert load_recall(tmp_path / "none.json") == RecallTable()
    with pytest.raises(ConfigError, match="no probe results"):
        exclude_recalled_runs([], tmp_path / "none.json")


def test_sample_markets_become_items_at_their_lifetime_midpoint():
    from hindcast.audit.probe import items_from_store
    from hindcast.errors import CutoffError
    from hindcast.markets.store import open_version

    bundle = open_version(SAMPLE_MARKETS).bundle
    made, skipped = items_from_store(SAMPLE_MARKETS, limit=3)
    assert len(made) + len(skipped) == 3 and all(i.label == "f=0.5" for i in made)
    for item in made:
        resolution = next(r for r in bundle.resolutions if r.market_id == item.question.market_id)
        assert item.question.t0 < resolution.resolved_at and item.outcome == resolution.outcome
    with pytest.raises(CutoffError):
        items_from_store(SAMPLE_MARKETS, fraction=1.5)
    with pytest.raises(ConfigError, match="not in store"):
        items_from_store(SAMPLE_MARKETS, ids=["no-such-market"])
