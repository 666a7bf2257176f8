"""Model answers → a probability, or a reason why not. Never a default number.

`parse_probability` reads JSON (`{"probability": 0.3}`, also inside a code fence or in
surrounding text), a labelled number (`Probability: 0.3`, `probability = 30%`), or a
single unambiguous number / percentage in free text. No number, a value outside [0, 1],
NaN or a refusal are invalid answers with a reason. So is an ambiguous answer: more than
one distinct candidate probability (`Probability: 0.7 or 0.8`, two labelled values that
differ, two JSON objects that differ, several different unlabelled numbers) or a range
(`between 0.2 and 0.4`, `20-30%`): recorded as invalid, never resolved by picking one.
`ask_probability` re-asks a bounded number of times, then records a failure with every
raw answer.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hindcast.llm.client import ChatClient, UsageTally
from dataclasses import dataclass

PROBABILITY_SCHEMA = {
    "type": "object",
    "properties": {"probability": {"type": "number", "minimum": 0, "maximum": 1}},
    "required": ["probability"],
    "additionalProperties": False,
}
KEYS = ("probability", "p", "forecast", "prob")
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|NaN|NAN|inf|Infinity"
_LABELLED = re.compile(
    rf"(?:probability|forecast|chance|likelihood)[^\d\n]{{0,15}}?({_NUMBER})(?!\w)[ \t]*(%?)",
    re.IGNORECASE,
)
_FREE = re.compile(rf"(?<![\w.])({_NUMBER})(?!\w)\s*(%?)")
# right after a labelled number: a second number joined to it (`0.7 or 0.8`, `0.2 and 0.4`,
# `20-30%`)
_ALTERNATIVE = re.compile(rf"\s*(?:or|to|and|-|–|—|~)\s*(?:{_NUMBER})(?!\w)\s*%?", re.IGNORECASE)
_CLAUSE_END = re.compile(r"\n|[!?;]|\.(?!\d)")
_REFUSAL = re.compile(
    r"\b(?:I can(?:no|')t|I cannot|I am unable|I'm unable|I won't|as an AI|I do not have access"
    r"|I don't have access|unable to (?:predict|provide|forecast))",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Parsed:
    """A probability, or the reason the text holds none."""

    probability: float | None
    reason: str = ""
    how: str = ""


def parse_probability(text: str) -> Parsed:
    """The probability stated in a model answer, tolerantly but never by guessing."""
    text = (text or "").strip()
    if not text:
        return Parsed(None, "empty answer")
    for parse in (_from_json, _from_labelled, _refusal, _from_free_text):
        found = parse(text)
        if found is not None:
            return found
    return Parsed(None, "no probability in the answer")


def check(value: object, how: str) -> Parsed:
    """Validate one candidate value: a finite number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return Parsed(None, f"probability is not a number: {value!r}", how)
    if not math.isfinite(value):
        return Parsed(None, f"probability is not finite: {value!r}", how)
    if not 0.0 <= value <= 1.0:
        return Parsed(None, f"probability {value!r} is outside [0, 1]", how)
    return Parsed(float(value), "", how)


def _from_json(text: str) -> Parsed | None:
    """The whole answer as JSON; else JSON in code fences; else JSON objects in the text.
    Within the tier that holds a probability, two different values are ambiguous."""
    whole = _json_probabilities([text])
    if whole:
        return whole[0]
    fenced = re.findall(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    for tier in (fenced, re.findall(r"\{[^{}]*\}", text)):
        found = _json_probabilities(tier)
        if found:
            return _one_of(found, "json")
    return None


def _json_probabilities(candidates: list[str]) -> list[Parsed]:
    found = []
    for candidate in candidates:
        try:
            value = json.loads(candidate, parse_constant=float)
        except ValueError:
            continue
        if isinstance(value, Mapping):
            key = next((k for k in KEYS if k in value), None)
            if key is not None:
                found.append(check(_number(value[key]), "json"))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            found.append(check(value, "json"))
    return found


def _one_of(found: list[Parsed], how: str) -> Parsed:
    """The single distinct parse, or an ambiguous answer when they differ."""
    distinct = {(p.probability, p.reason) for p in found}
    if len(distinct) == 1:
        return found[0]
    return Parsed(None, f"ambiguous: {len(distinct)} different probabilities given", how)


def _number(value: object) -> object:
    """A JSON string holding a number (`"0.3"`, `"30%"`) is read as that number."""
    if isinstance(value, str):
        match = re.fullmatch(rf"\s*({_NUMBER})\s*(%?)\s*", value)
        if match:
            return _scaled(match.group(1), match.group(2))
    return value


def _from_labelled(text: str) -> Parsed | None:
    matches = list(_LABELLED.finditer(text))
    if not matches:
        return None
    for match in matches:
        joined = _ALTERNATIVE.match(text, match.end())
        if joined:
            shown = text[match.start(1) : joined.end()].strip()
            return Parsed(
                None,
                f"ambiguous: {shown!r} is a range or alternatives, not one probability",
                "labelled",
            )
    values = {repr(v): v for v in _labelled_values(text, matches)}
    if len(values) > 1:
        return Parsed(
            None,
            f"ambiguous: {len(values)} different probabilities stated ({', '.join(values)})",
            "labelled",
        )
    return check(values.popitem()[1], "labelled")


def _labelled_values(text: str, matches: list[re.Match]) -> list[float]:
    """Every labelled value, and every other probability-like number (a percentage, or a
    decimal in [0, 1]) in the rest of its clause (`Probability: 0.7 (maybe 0.8)`)."""
    values = []
    for match in matches:
        values.append(_scaled(match.group(1), match.group(2)))
        end = _CLAUSE_END.search(text, match.end())
        clause = text[match.end() : end.start() if end else len(text)]
        values += [
            v
            for n, pct in _FREE.findall(clause)
            if (pct or "." in n) and 0 <= (v := _scaled(n, pct)) <= 1
        ]
    return values


def _refusal(text: str) -> Parsed | None:
    if _REFUSAL.search(text):
        return Parsed(None, "refusal: the answer declines to give a probability", "refusal")
    return None


def _from_free_text(text: str) -> Parsed | None:
    values = {_scaled(n, pct) for n, pct in _FREE.findall(text)}
    if len(values) == 1:
        return check(values.pop(), "free-text")
    if len(values) > 1:
        return Parsed(
            None,
            f"ambiguous: {len(values)} different numbers and none labelled as the probability",
            "free-text",
        )
    return None


def _scaled(number: str, percent: str) -> float:
    value = float(number)
    return value / 100.0 if percent else value


# ---- asking with bounded repairs -----------------------------------------------------------------
REPAIR = (
    "Your answer could not be used ({reason}). Reply with only a JSON object whose single key "
    '"probability" is a number between 0 and 1.'
)


async def ask_probability(
    client: ChatClient,
    messages: list[dict],
    usage: UsageTally,
    *,
    step: str = "final",
    repairs: int = 1,
    **params: Any,
) -> tuple[Parsed, list[str]]:
    """Ask for a probability; on an invalid answer re-ask up to `repairs` times.

    Returns the last parse and every raw answer; each call is logged in `usage`.
    """
    conversation, raws = list(messages), []
    for attempt in range(repairs + 1):
        reply = await client.complete(conversation, schema=PROBABILITY_SCHEMA, **params)
        parsed = parse_probability(reply.content)
        raws.append(reply.content)
        usage.add(
            step if attempt == 0 else f"{step}-repair-{attempt}",
            reply,
            raw=reply.content,
            probability=parsed.probability,
            reason=parsed.reason,
        )
        if parsed.probability is not None:
            return parsed, raws
        conversation += [
            {"role": "assistant", "content": reply.content},
            {"role": "user", "content": REPAIR.format(reason=parsed.reason)},
        ]
    return parsed, raws


def raw_text(raws: list[str]) -> str:
    """Every raw answer of a forecast, in order, for the failure record."""
    if len(raws) == 1:
        return raws[0]
    return "\n".join(f"--- attempt {i + 1} ---\n{r}" for i, r in enumerate(raws))
