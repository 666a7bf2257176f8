"""Model answers → probability or a reason; never a default. Plus bounded repairs."""

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hindcast.llm.answers import ask_probability, parse_probability, raw_text
from hindcast.llm.client import ChatClient, UsageTally, parse_model
from hindcast.llm.fake import FakeChatModel, answer


@pytest.mark.parametrize(
    "text, p",
    [
        ('{"probability": 0.3}', 0.3),
        ('```json\n{"probability": "30%"}\n```', 0.3),
        ('Sure! {"probability": 0.82} is my answer', 0.82),
        ("Probability: 0.7.", 0.7),
        ("My forecast = 15 %", 0.15),
        ("Final answer: the probability of this is 0.25 given 2 polls", 0.25),
        ("I think 70%.", 0.7),
        ("0.42", 0.42),
        ("1", 1.0),
        ('{"probability": 0}', 0.0),
    ],
)
def test_valid_answers(text, p):
    assert parse_probability(text).probability == pytest.approx(p)


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "empty answer"),
        ("It depends on many factors.", "no probability"),
        ('{"probability": 1.5}', "outside [0, 1]"),
        ("probability: -0.2", "outside [0, 1]"),
        ('{"probability": NaN}', "not finite"),
        ("probability is nan", "not finite"),
        ('{"probability": "high"}', "not a number"),
        ('{"probability": true}', "not a number"),
        ("I cannot predict the 2025 election.", "refusal"),
        ("As an AI, I do not have access to future events.", "refusal"),
        ("Somewhere between 3 and 4 out of 10.", "ambiguous"),
        ("Words about information and infinity only", "no probability"),
    ],
)
def test_invalid_answers_have_a_reason_and_no_number(text, reason):
    parsed = parse_probability(text)
    assert parsed.probability is None and reason in parsed.reason


@pytest.mark.parametrize(
    "text",
    [
        "Probability: 0.7 or 0.8",
        "The probability is between 0.2 and 0.4",
        "between 0.2 and 0.4",
        "Probability: 20-30%",
        "Probability: 0.7 - 0.8",
        "Probability: from 20% to 40%",
        "Probability: 0.7 (maybe 0.8)",
        "The market's probability is 0.6. My probability: 0.7.",
        'First {"probability": 0.3}, then {"probability": 0.6}',
        '```json\n{"probability": 0.3}\n```\n```json\n{"probability": 0.6}\n```',
    ],
)
def test_an_ambiguous_answer_is_invalid_with_its_reason_never_one_of_its_numbers(text):
    parsed = parse_probability(text)
    assert parsed.probability is None and parsed.reason.startswith("ambiguous")


@pytest.mark.parametrize(
    "text, p",
    [
        ("Probability: 70% (i.e. 0.7)", 0.7),  # one value, said twice
        ("Probability: 0.35 given 3 polls and 2 markets", 0.35),  # counts are not probabilities
        ("Probability: 0.7. The polls show 0.5 support.", 0.7),  # another sentence
        ("Probability: 0.7 and that is final", 0.7),
        ('{"probability": 0.7, "detail": {"p": 0.2}}', 0.7),  # the whole answer is one JSON object
        ('Probability 0.6, so {"probability": 0.6}', 0.6),
    ],
)
def test_one_probability_stated_more_than_once_or_beside_other_numbers_is_read(text, p):
    assert parse_probability(text).probability == pytest.approx(p)


def test_an_ambiguous_answer_is_repaired_and_recorded_with_every_raw_answer():
    parsed, raws, usage, fake = ask(
        [answer("Probability: 0.7 or 0.8"), answer("Probability: 0.2 to 0.4")], repairs=1
    )
    assert parsed.probability is None and parsed.reason.startswith("ambiguous")
    assert raws == ["Probability: 0.7 or 0.8", "Probability: 0.2 to 0.4"]
    assert [s["probability"] for s in usage.steps] == [None, None]
    assert "ambiguous" in fake.requests[1]["messages"][-1]["content"]


@given(st.floats(min_value=0.0, max_value=1.0))
def test_any_probability_in_json_round_trips(p):
    assert parse_probability(json.dumps({"probability": p})).probability == p


@given(st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not 0.0 <= x <= 1.0))
def test_anything_outside_the_unit_interval_is_refused(x):
    assert parse_probability(json.dumps({"probability": x})).probability is None


@given(st.text(alphabet=st.characters(blacklist_categories=("Nd",)), max_size=200))
def test_text_without_digits_never_yields_a_number(text):
    assert parse_probability(text).probability is None


def ask(script, repairs):
    fake = FakeChatModel(script)

    async def go():
        import httpx

        async with httpx.AsyncClient(transport=fake.transport()) as http:
            c = ChatClient(parse_model("openai-compatible:http://fake.invalid/v1#m"), http=http)
            usage = UsageTally(c)
            parsed, raws = await ask_probability(
                c, [{"role": "user", "content": "q"}], usage, repairs=repairs
            )
            return parsed, raws, usage, fake

    return asyncio.run(go())


def test_a_repair_turn_shows_the_reason_and_asks_again():
    parsed, raws, usage, fake = ask([answer("maybe"), answer('{"probability": 0.6}')], repairs=1)
    assert parsed.probability == 0.6 and raws == ["maybe", '{"probability": 0.6}']
    assert [s["step"] for s in usage.steps] == ["final", "final-repair-1"]
    repair = fake.requests[1]["messages"]
    assert (
        repair[-2] == {"role": "assistant", "content": "maybe"}
        and "no probability" in repair[-1]["content"]
    )
    assert not any(ch.isdigit() for ch in repair[-1]["content"].replace("between 0 and 1", ""))


def test_repairs_are_bounded_and_every_raw_answer_is_kept():
    parsed, raws, usage, fake = ask(
        [answer("no idea"), answer("2.5"), answer("never asked")], repairs=1
    )
    assert parsed.probability is None and "outside" in parsed.reason and len(fake.requests) == 2
    assert raw_text(raws) == "--- attempt 1 ---\nno idea\n--- attempt 2 ---\n2.5"
