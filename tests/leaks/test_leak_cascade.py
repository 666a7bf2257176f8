"""The composed leak detector `cascade:<first>[@lo-hi]>…><last>`: what each stage decides, what
reaches the next stage, and its per-stage cost counters — over the scripted fake chat model
(every expected count worked out by hand from the script below), and with the model-free
`lexical` first on the leak set's small subset (the rows the judge must see taken from lexical's
own verdicts, judged separately)."""

from __future__ import annotations

import asyncio
import json
import math
from datetime import UTC, datetime

import httpx
import pytest

from benchmarks.leak_detectors import SETS, judge_rows, load_questions, load_rows
from hindcast.errors import ConfigError
from hindcast.leaks import DEFAULT_BAND, get_detector
from hindcast.llm import FakeChatModel
from hindcast.records import Question

QUESTION = Question(
    "0xpaz",
    "Will Rodrigo Paz win the 2025 Bolivian presidential election?",
    "Resolves Yes if Rodrigo Paz is declared the winner.",
    datetime(2025, 10, 18, tzinfo=UTC),
    "https://example.test/paz",
    "politics",
)
URL = "openai-compatible:http://judge.test/v1"
FIRST, SECOND = f"judge:model={URL}#first", f"judge:model={URL}#second"


def answer(label: str, confidence: float) -> str:
    return json.dumps({"label": label, "confidence": confidence})


# The first judge's answers (score: confidence if flagged, 1 − confidence for "neither") and the
# second judge's. First stage band [0.3, 0.7).
FIRST_SAYS = {
    "t1": answer("reveals-outcome", 0.9),  # score 0.9 ≥ 0.7: decided by the first
    "t2": answer("neither", 0.95),  # score 0.05 < 0.3: decided by the first
    "t3": answer("reveals-outcome", 0.5),  # score 0.5 in band: to the second
    "t4": answer("neither", 0.4),  # score 0.6 in band: to the second
    "t5": answer("after-date", 0.3),  # score 0.3 = lo, in band: to the second
    "t6": answer("after-date", 0.7),  # score 0.7 = hi, outside: decided (after-t0)
    "t7": "no idea",  # unreadable twice: NaN, in no band — the cascade's verdict, not passed on
}
SECOND_SAYS = {
    "t3": answer("neither", 0.9),  # → neither, score 0.1
    "t4": answer("reveals-outcome", 0.8),  # → reveals-outcome, 0.8
    "t5": "still no idea",  # unreadable twice → the cascade's verdict is unreadable
}


def scripted(body: dict) -> str:
    """The answer of the judge the request names (its model) to the text it shows (in the first
    user turn, also on a repair turn)."""
    shown = next(m["content"] for m in body["messages"] if m["role"] == "user")
    (text,) = [t for t in FIRST_SAYS if f'"""\n{t}\n"""' in shown]
    return (FIRST_SAYS if body["model"] == "first" else SECOND_SAYS)[text]


def run(spec: str, texts: list[str], fake: FakeChatModel, question: Question = QUESTION):
    from hindcast.llm.models import Models

    models = Models(http=lambda: httpx.AsyncClient(transport=fake.transport()), backoff=0.0)
    detector = get_detector(spec, models)

    async def go():
        try:
            return [await detector.judge(t, question) for t in texts]
        finally:
            await models.aclose()

    return detector, asyncio.run(go())


def test_two_scripted_judges_each_stage_decides_what_its_band_leaves_it():
    fake = FakeChatModel([], default=scripted)
    texts = list(FIRST_SAYS)
    detector, verdicts = run(f"cascade:{FIRST}@0.3-0.7>{SECOND}", texts, fake)
    got = {t: (v.label, None if math.isnan(v.score) else v.score) for t, v in zip(texts, verdicts)}
    assert got == {
        "t1": ("reveals-outcome", 0.9),
        "t2": ("neither", 0.05),
        "t3": ("neither", 0.1),
        "t4": ("reveals-outcome", 0.8),
        "t5": ("neither", None),  # unreadable by the second: no verdict, never the first's guess
        "t6": ("after-t0", 0.7),
        "t7": ("neither", None),  # unreadable by the first: not passed on
    }
    assert all(v.detector == detector.name for v in verdicts)
    assert detector.name.startswith(f"cascade:{FIRST}#") and "@0.3-0.7>" in detector.name
    # first: 7 texts, 6 answers + 1 repair for t7 = 8 requests; it decided t1, t2, t6, t7 (4).
    # second: t3, t4, t5; t5 unreadable → 1 repair: 4 requests; it decided all 3.
    first, second = detector.stats
    assert (first["calls"], first["decided"], second["calls"], second["decided"]) == (7, 4, 3, 3)
    models = [r["model"] for r in fake.requests]
    assert (models.count("first"), models.count("second"), len(models)) == (8, 4, 12)
    assert first["seconds"] > 0 and second["seconds"] > 0
    assert "undecided" in verdicts[2].reason and verdicts[0].reason.startswith(first["stage"])


def test_lexical_first_sends_the_judge_only_its_undecided_band():
    """On the small subset (34 rows, two markets): lexical's own verdicts, judged apart, say which
    rows lie in its band; the cascade must ask the judge about exactly those, keep lexical's
    verdict on the rest, and take the judge's (scripted: always "reveals-outcome" 0.9) inside."""
    folder = SETS["sample"]
    rows = [r for r in load_rows(folder) if r.market_id[:10] in ("0x319825b4", "0xda8ebb9d")]
    questions = load_questions(folder)
    alone = asyncio.run(judge_rows(get_detector("lexical"), rows, questions))
    lo, hi = DEFAULT_BAND
    inside = {r.text for r, v in zip(rows, alone) if lo <= v.score < hi}
    assert 0 < len(inside) < len(rows)  # the subset exercises both branches

    fake = FakeChatModel([], default=answer("reveals-outcome", 0.9))
    from hindcast.llm.models import Models

    models = Models(http=lambda: httpx.AsyncClient(transport=fake.transport()), backoff=0.0)
    detector = get_detector(f"cascade:lexical>judge:model={URL}#judge", models)

    async def go():
        try:
            return await judge_rows(detector, rows, questions, concurrency=1)
        finally:
            await models.aclose()

    verdicts = asyncio.run(go())
    shown = [r["messages"][-1]["content"] for r in fake.requests]
    assert len(shown) == len(inside)
    assert all(sum(f'"""\n{t}\n"""' in s for s in shown) == 1 for t in inside)
    for row, mine, lexical in zip(rows, verdicts, alone):
        expected = (
            ("reveals-outcome", 0.9) if row.text in inside else (lexical.label, lexical.score)
        )
        assert (mine.label, mine.score) == expected, row.id
    first, second = detector.stats
    assert (first["calls"], first["decided"]) == (len(rows), len(rows) - len(inside))
    assert (second["calls"], second["decided"]) == (len(inside), len(inside))


@pytest.mark.parametrize(
    "spec, says",
    [
        ("cascade:lexical", "two or more detectors"),
        ("cascade:lexical>", "two or more detectors"),
        ("cascade:lexical>lexical@0.1-0.2", "the last stage decides all"),
        ("cascade:lexical@0.8-0.2>lexical", "0 ≤ lo ≤ hi ≤ 1"),
        ("cascade:lexical>lexical>lexical", "give stage 'lexical' a band"),
        ("cascade:lexical>nope", "unknown leak detector 'nope'"),
        ("cascade:lexical>judge:model=local,colour=red", "unknown parameter(s) colour"),
        ("cascade:lexical>cascade:lexical>lexical", "cannot be a cascade"),
    ],
)
def test_a_bad_cascade_spec_is_one_line_naming_it(spec, says):
    with pytest.raises(ConfigError) as caught:
        get_detector(spec)
    message = str(caught.value)
    assert says in message and "\n" not in message
    assert spec in message or "'nope'" in message
