"""Outcome-leak detectors: the model-free `lexical` detector on crafted texts (both outcomes
phrased, a rival's win, a hedged or pre-t0 text on the same topic, a later date), and the LLM
judge over the fake chat model at the HTTP transport (labels, template hash, cache, unreadable
answers, outages). The local-model judge runs under the `llm_server` marker."""

import asyncio
import hashlib
import math

import httpx
import pytest

from hindcast import leaks
from hindcast.archive import get_embedder
from hindcast.errors import ConfigError, InfrastructureError
from hindcast.llm.fake import FakeChatModel, Reply, answer, error
from hindcast.llm.models import Models
from hindcast.records import Question
from tests.helpers import ROOT, at

T0 = at("2025-10-18T00:00:00")
BOLIVIA = Question(
    "m-bo",
    "Will Rodrigo Paz win the 2025 Bolivia presidential election?",
    "Resolves YES if Rodrigo Paz wins the runoff.",
    T0,
    scheduled_close=at("2025-10-20T00:00:00"),
)
BITCOIN = Question(
    "m-btc", "Will Bitcoin dip to $90,000 by December 31, 2025?", "", at("2025-11-01T00:00:00")
)
FED = Question(
    "m-fed",
    "Will there be no change in Fed interest rates after the March 2026 meeting?",
    "",
    at("2026-03-17T00:00:00"),
)
LEXICAL = "lexical:embedder=hash"


def judge(detector, text, question=BOLIVIA):
    return asyncio.run(detector.judge(text, question))


@pytest.fixture(scope="module")
def lexical():
    return leaks.get_detector(LEXICAL)


@pytest.mark.parametrize(
    "text",
    [
        "Rodrigo Paz wins Bolivia's presidential election",  # the YES outcome
        "Rodrigo Paz loses Bolivia's presidential runoff to Jorge Quiroga",  # the NO outcome
        "Jorge Quiroga elected president of Bolivia, defeating Paz",  # a rival's win settles it
        "Bolivia: centrist Paz sworn in as president",
    ],
)
def test_a_text_stating_either_outcome_reveals_it(lexical, text):
    verdict = judge(lexical, text)
    assert verdict.label == "reveals-outcome" and verdict.flagged, verdict
    assert verdict.score >= leaks.REVEAL_THRESHOLD and verdict.detector == LEXICAL


@pytest.mark.parametrize(
    "text",
    [
        "Bolivia heads to the polls as Paz and Quiroga make a final push",  # same topic, before t0
        "Rodrigo Paz could win Bolivia's presidency, polls show",  # hedged: a forecast, not an outcome
        "Will Rodrigo Paz win Bolivia's runoff?",
        "Dodgers win the World Series in seven games",  # an outcome, of another question
        "",
    ],
)
def test_pre_t0_hedged_or_off_topic_texts_are_neither(lexical, text):
    verdict = judge(lexical, text)
    assert verdict.label == "neither" and not verdict.flagged and not verdict.unreadable, verdict
    assert 0.0 <= verdict.score < leaks.REVEAL_THRESHOLD


def test_a_text_reporting_a_date_after_t0_is_after_t0(lexical):
    later = judge(lexical, "Bolivia's congress debated the budget on November 20, 2025")
    earlier = judge(lexical, "Bolivia's congress debated the budget on September 20, 2025")
    assert later.label == "after-t0" and "November 20, 2025" in later.reason and later.flagged
    assert earlier.label == "neither"
    olympics = Question(
        "m-oly", "Will Austria win the most gold medals in the 2026 Winter Olympics?", "", T0
    )
    assert (
        leaks.dates_after(
            "Austria's skiers trained in 2026 Winter Olympics venues", T0, olympics.question
        )
        == []
    )
    assert leaks.dates_after("Austria's skiers trained in 2026 Winter Olympics venues", T0) == [
        "2026"
    ]


def test_the_question_entities_and_numbers_make_the_statements():
    facts = leaks.statements(BITCOIN)
    assert ("bitcoin",) in facts.groups and facts.numbers == frozenset({"90000"})
    assert "Bitcoin did not dip to $90,000" in facts.no and "Bitcoin dipped to $90,000" in facts.yes
    paz = leaks.statements(BOLIVIA)
    assert {
        "Rodrigo Paz won the 2025 Bolivia presidential election",
        "Rodrigo Paz lost the 2025 Bolivia presidential election",
    } <= set(paz.all)


def test_a_price_move_past_the_question_number_is_an_outcome_cue(lexical):
    assert judge(
        lexical, "Bitcoin drops below $90,000 for the first time in seven months", BITCOIN
    ).flagged
    assert not judge(lexical, "Bitcoin climbs to 2-week high above $110,000", BITCOIN).flagged


def test_rate_decisions_as_verbs_not_nouns(lexical):
    assert (
        judge(lexical, "Fed holds rates steady as war clouds outlook", FED).label
        == "reveals-outcome"
    )
    assert (
        judge(lexical, "Fed likely to hold rates steady as oil prices soar", FED).label == "neither"
    )
    assert leaks.outcome_cue("Federal Reserve cuts interest rates by 0.25%") == 1.0
    assert leaks.outcome_cue("Stocks rise on rate-cut hopes") == 0.0
    assert leaks.outcome_cue("Markets brace for a rate cut") == 0.0


def test_the_lexical_detector_is_deterministic_and_never_sees_an_outcome():
    text = "Rodrigo Paz wins Bolivia's presidential election"
    first = judge(leaks.get_detector(LEXICAL), text)
    assert all(judge(leaks.get_detector(LEXICAL), text) == first for _ in range(2))
    assert not any(f in ("outcome", "resolved_at") for f in Question.__dataclass_fields__)


def test_the_threshold_is_a_parameter(lexical):
    text = "Paz wins in Bolivia, ending two decades of leftist rule"
    score = judge(lexical, text).score
    assert leaks.REVEAL_THRESHOLD <= score < 0.99
    assert (
        judge(leaks.get_detector(f"{LEXICAL},threshold={score + 0.01:.4f}"), text).label
        == "neither"
    )
    assert (
        judge(leaks.get_detector(f"{LEXICAL},threshold={score:.4f}"), text).label
        == "reveals-outcome"
    )
    with pytest.raises(ConfigError, match="threshold"):
        leaks.get_detector("lexical:threshold=2")


@pytest.mark.cpu_default
def test_the_default_lexical_detector_uses_minilm(default_embedder):
    """The rule, not one CPU's outcome: `lexical` embeds with `minilm`, all-MiniLM-L6-v2 in the
    precision this CPU makes the default (`--embedder` forces another one on purpose)."""
    spec = "lexical" if default_embedder == "minilm" else f"lexical:embedder={default_embedder}"
    detector = leaks.get_detector(spec)
    assert (
        judge(detector, "Rodrigo Paz wins Bolivia's presidential election").label
        == "reveals-outcome"
    )
    assert (
        judge(detector, "Bolivia heads to the polls as Paz and Quiroga make a final push").label
        == "neither"
    )
    assert detector._embedder.name == get_embedder(default_embedder).name
    assert get_embedder("minilm").name in {"all-MiniLM-L6-v2", "all-MiniLM-L6-v2-bf16"}


class _Counting:
    """A real embedder that counts the texts it is asked to embed."""

    def __init__(self, inner):
        self.inner, self.name, self.dims, self.texts = inner, inner.name, inner.dims, []

    def embed(self, texts):
        self.texts += list(texts)
        return self.inner.embed(texts)


def test_a_document_judged_against_many_questions_is_embedded_once_with_the_same_verdicts():
    """The evidence strata judge the same documents against many questions: each text is embedded
    once (alone, as before), and every verdict equals a fresh detector's."""
    texts = [
        "Rodrigo Paz wins Bolivia's presidential election",
        "Bitcoin falls below $90,000 as crypto markets slide",
        "The Fed holds rates steady in March",
    ]
    kept = leaks.get_detector("lexical")
    kept._embedder = counting = _Counting(get_embedder("minilm"))
    for question in (BOLIVIA, BITCOIN, FED, BOLIVIA):
        for text in texts:
            assert judge(kept, text, question) == judge(
                leaks.get_detector("lexical"), text, question
            )
    embedded_texts = [t for t in counting.texts if t in texts]
    assert sorted(embedded_texts) == sorted(texts)  # each once, however many questions


@pytest.mark.parametrize(
    "spec, words",
    [
        ("oracle", "unknown leak detector 'oracle'"),
        ("lexical:colour=red", "unknown parameter(s) colour"),
        ("lexical:threshold", "key=value"),
        ("judge", "name the judge's model"),
        ("judge:model=nowhere", "nowhere"),
        ("judge:model=local,structured=xml", "structured"),
    ],
)
def test_a_bad_detector_spec_is_a_config_error_naming_it(spec, words):
    with pytest.raises(ConfigError, match="leak detector") as info:
        leaks.get_detector(spec)
    assert words in str(info.value)
    assert set(leaks.names()) >= {"lexical", "judge"}


# ---- the LLM judge over the fake chat model -----------------------------------------------------
def fake_judge(script, **models_kw):
    fake = FakeChatModel(script)
    models = Models(
        http=lambda: httpx.AsyncClient(transport=fake.transport()), backoff=0.0, **models_kw
    )
    return leaks.get_detector("judge:model=openai-compatible:http://judge.test/v1#m", models), fake


def template_hash():
    return hashlib.sha256((ROOT / "hindcast/llm/prompts/leak_judge.txt").read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "content, label, score",
    [
        ('{"label": "reveals-outcome", "confidence": 0.9}', "reveals-outcome", 0.9),
        ('{"label": "after-date", "confidence": 0.8}', "after-t0", 0.8),
        ('{"label": "neither", "confidence": 0.75}', "neither", 0.25),
        (
            'Sure: ```json\n{"label": "reveals_outcome", "confidence": "60%"}\n```',
            "reveals-outcome",
            0.6,
        ),
    ],
)
def test_the_judge_labels_are_parsed_and_its_template_hash_is_in_the_detector(
    content, label, score
):
    detector, fake = fake_judge([answer(content)])
    verdict = judge(detector, "Rodrigo Paz wins Bolivia's presidential election")
    assert (verdict.label, verdict.score) == (label, score)
    assert (
        verdict.detector
        == f"judge:model=openai-compatible:http://judge.test/v1#m#{template_hash()[:8]}"
    )
    prompt = fake.requests[0]["messages"][-1]["content"]
    assert (
        "Rodrigo Paz wins Bolivia's presidential election" in prompt and BOLIVIA.question in prompt
    )
    assert "Question date: 2025-10-18" in prompt and fake.requests[0]["temperature"] == 0.0


def test_a_repeated_judgement_comes_from_the_cache_without_a_request():
    detector, fake = fake_judge([answer('{"label": "reveals-outcome", "confidence": 0.9}')])
    first = judge(detector, "Paz wins")
    assert judge(detector, "Paz wins") == first and len(fake.requests) == 1


def test_an_unreadable_answer_is_re_asked_then_neither_with_nan_and_a_reason():
    detector, fake = fake_judge(
        [answer("It is hard to say."), answer('{"label": "maybe", "confidence": 0.5}')]
    )
    verdict = judge(detector, "Paz wins")
    assert verdict.label == "neither" and math.isnan(verdict.score) and verdict.unreadable
    assert (
        verdict.reason.startswith("unreadable judge answer after 2 attempt(s)")
        and "'maybe'" in verdict.reason
    )
    assert (
        len(fake.requests) == 2
        and "could not be read" in fake.requests[1]["messages"][-1]["content"]
    )


def test_a_repaired_answer_is_a_verdict():
    detector, _ = fake_judge([answer("no idea"), answer('{"label": "neither", "confidence": 1}')])
    assert judge(detector, "Paz wins") == leaks.Verdict(
        "neither", 0.0, detector.name, "judge confidence 1.00"
    )


def test_a_malformed_reply_is_unreadable_not_an_outage():
    detector, _ = fake_judge([Reply(body="not json"), Reply(body="not json")])
    verdict = judge(detector, "Paz wins")
    assert verdict.unreadable and "ChatError" in verdict.reason


def test_an_outage_propagates():
    detector, fake = fake_judge([error(503), error(503)], max_retries=1)
    with pytest.raises(InfrastructureError):
        judge(detector, "Paz wins")
    assert len(fake.requests) == 2


def test_a_long_text_is_cut():
    detector, fake = fake_judge([answer('{"label": "neither", "confidence": 0.9}')])
    judge(detector, "word " * 5000)
    assert "word " * 10 in fake.requests[0]["messages"][-1]["content"]
    assert len(fake.requests[0]["messages"][-1]["content"]) < leaks.JUDGE_TEXT_CHARS + 1000


@pytest.mark.llm_server
def test_the_local_model_judge_returns_valid_verdicts():
    texts = [
        "Rodrigo Paz wins Bolivia's presidential election",
        "Bolivia heads to the polls as Paz and Quiroga make a final push",
        "Bolivia's congress debated the budget on November 20, 2025",
    ]
    with Models() as models:
        detector = leaks.get_detector("judge:model=local", models)

        async def run():
            try:
                return [await detector.judge(text, BOLIVIA) for text in texts]
            finally:
                await models.aclose()

        verdicts = asyncio.run(run())
    for verdict in verdicts:
        assert (
            verdict.label in leaks.LABELS
            and verdict.detector == f"judge:model=local#{template_hash()[:8]}"
        )
        assert verdict.unreadable or 0.0 <= verdict.score <= 1.0
