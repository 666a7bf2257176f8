"""The LLM judge leak detector. `judge:model=<model
spec>[,key_env=…,structured=…,max_tokens=64,repairs=1]` — an LLM judge
(`JudgeDetector`): any model spec a forecaster takes, the `leak_judge` prompt template (its
sha256's first 8 hex digits end the detector's name: `judge:model=local#6af1e8f8`), answers
through the Models value's response cache. Unreadable answers, outages: see JudgeDetector.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from hindcast import llm
from hindcast.errors import ChatError, ConfigError
from hindcast.leaks.registry import LABELS, Verdict, check_params
from hindcast.records import Question

# ---- the LLM judge: `judge:model=<model spec>` -------------------------------------------------
JUDGE_TEMPLATE = "leak_judge"
JUDGE_TEXT_CHARS = 4000  # a longer text (a rationale, a page) is cut here, with " …" appended
JUDGE_LABELS = {
    "reveals-outcome": "reveals-outcome",
    "after-date": "after-t0",
    "neither": "neither",
}
# the template's label "after-date" is Verdict label "after-t0" (no digit in a template)
JUDGE_SCHEMA = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "enum": list(JUDGE_LABELS)},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["label", "confidence"],
    "additionalProperties": False,
}
JUDGE_REPAIR = (
    'Your answer could not be read ({reason}). Reply with only a JSON object with the keys "label" '
    '(reveals-outcome, after-date or neither) and "confidence" (a number between 0 and 1).'
)
UNREADABLE = "unreadable judge answer"


@dataclass(frozen=True)
class JudgeAnswer:
    """A judge's reply read once: a label and a confidence, or the reason it cannot be read."""

    label: str | None
    confidence: float = math.nan
    reason: str = ""


def parse_judge(text: str) -> JudgeAnswer:
    """`{"label": …, "confidence": …}` (whole, fenced or inside text); the label spelled loosely
    (`reveals_outcome`, `After date`; the template's "after-date" and "after-t0" both read as
    "after-t0"); confidence a number or percentage in [0, 1]."""
    obj = _json_object(text or "")
    if obj is None:
        return JudgeAnswer(None, reason="no JSON object in the answer")
    label = _label(obj.get("label"))
    if label is None:
        return JudgeAnswer(
            None, reason=f"label {obj.get('label')!r} is not one of {', '.join(JUDGE_LABELS)}"
        )
    confidence = _confidence(obj.get("confidence"))
    if confidence is None:
        return JudgeAnswer(
            None, reason=f"confidence {obj.get('confidence')!r} is not a number in [0, 1]"
        )
    return JudgeAnswer(label, confidence)


def _json_object(text: str) -> dict | None:
    import json

    fenced = re.findall(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    for candidate in [text.strip(), *fenced, *re.findall(r"\{[^{}]*\}", text)]:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _label(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    spelled = re.sub(r"[\s_]+", "-", value.strip().lower().strip(".\"'"))
    return JUDGE_LABELS.get(spelled, spelled if spelled in LABELS else None)


def _confidence(value: object) -> float | None:
    if isinstance(value, str):
        match = re.fullmatch(r"\s*([0-9.]+)\s*(%?)\s*", value)
        value = (float(match.group(1)) / (100 if match.group(2) else 1)) if match else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value) if 0.0 <= value <= 1.0 else None


class JudgeDetector:
    """An LLM judge: the `leak_judge` template (its sha256 in the detector's name), temperature 0,
    structured output, answers through the response cache of the Models value (keyed like
    forecasts: a repeated judgement is a cache hit, no request). An unreadable answer is re-asked
    `repairs` times, then gives label "neither" with score NaN and reason "unreadable judge answer
    …" — never a silent "neither"; an outage (InfrastructureError) propagates: it is no verdict."""

    def __init__(
        self,
        spec: str,
        model: str,
        models=None,
        key_env: str | None = None,
        structured: str = "json_schema",
        max_tokens: int = 64,
        repairs: int = 1,
    ):
        # a malformed model spec fails when the detector is made
        llm.client.parse_model(model, key_env)
        self.template = llm.prompts.load(JUDGE_TEMPLATE)
        self.name = f"{spec}#{self.template.sha256[:8]}"
        self.model, self.key_env, self.structured = model, key_env, structured
        self.max_tokens, self.repairs, self.models = int(max_tokens), int(repairs), models

    async def judge(self, text: str, question: Question) -> Verdict:
        conversation, raws = self.messages(text, question), []
        try:
            for _ in range(self.repairs + 1):
                reply = await self.client().complete(
                    conversation, schema=JUDGE_SCHEMA, temperature=0.0, max_tokens=self.max_tokens
                )
                answer = parse_judge(reply.content)
                raws.append(reply.content)
                if answer.label is not None:
                    return self.verdict(answer)
                conversation = conversation + [
                    {"role": "assistant", "content": reply.content},
                    {"role": "user", "content": JUDGE_REPAIR.format(reason=answer.reason)},
                ]
        except ChatError as exc:  # a reply that cannot be used (not an outage)
            return Verdict(
                "neither", math.nan, self.name, f"{UNREADABLE}: {type(exc).__name__}: {exc}"
            )
        return Verdict(
            "neither",
            math.nan,
            self.name,
            f"{UNREADABLE} after {len(raws)} attempt(s): {answer.reason}; "
            f"raw: {_excerpt(raws[-1])}",
        )

    def messages(self, text: str, question: Question) -> list[dict]:
        text = " ".join((text or "").split())
        if len(text) > JUDGE_TEXT_CHARS:
            text = text[:JUDGE_TEXT_CHARS] + " …"
        return self.template.messages(
            **llm.prompts.question_fields(question), text=text or "(empty)"
        )

    def verdict(self, answer: JudgeAnswer) -> Verdict:
        """score: the confidence for a flagged label, 1 − confidence for "neither"."""
        score = answer.confidence if answer.label != "neither" else 1.0 - answer.confidence
        return Verdict(
            answer.label, round(score, 4), self.name, f"judge confidence {answer.confidence:.2f}"
        )

    def client(self):
        return (self.models or llm.FALLBACK.get()).client(self.model, self.key_env, self.structured)


def _excerpt(text: str, n: int = 200) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[:n] + "…"


def make(spec: str, params: dict[str, str], models=None) -> JudgeDetector:
    check_params(spec, params, ("model", "key_env", "structured", "max_tokens", "repairs"))

    if not params.get("model"):
        raise ConfigError(f"leak detector {spec!r}: name the judge's model, e.g. judge:model=local")
    if params.get("structured", "json_schema") not in llm.STRUCTURED:
        raise ConfigError(
            f"leak detector {spec!r}: structured must be one of {', '.join(llm.STRUCTURED)}"
        )
    try:
        return JudgeDetector(
            spec,
            params["model"],
            models,
            params.get("key_env"),
            params.get("structured", "json_schema"),
            int(params.get("max_tokens", 64)),
            int(params.get("repairs", 1)),
        )
    except ValueError as exc:
        raise ConfigError(f"leak detector {spec!r}: {exc}") from None
