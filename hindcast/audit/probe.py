"""The memorisation probe: does a model already know how a market resolved?

Each model is asked about each market WITHOUT documents, twice:

* `after` — plainly, after resolution (template `probe_recall`): "what was the outcome?",
  answered `{"outcome": "yes"|"no"|"unknown", "confidence": c}`. The model RECALLS the
  market when it names the real outcome with confidence ≥ `RECALL_CONFIDENCE` (0.8).
* `t0` — at the probe's t0 (a lifetime fraction of the market, 0.5 by default) with the
  instruction to use only knowledge from before t0 (template `probe_t0`), answered with a
  probability. It is CONFIDENT AND CORRECT when p ≥ `T0_EXTREME` (0.9) on a YES market or
  p ≤ 1 − `T0_EXTREME` (0.1) on a NO market.

Only `after` decides which (model, market) pairs are recalled (what `--exclude-recalled`
drops): a confident, correct probability at t0 may be a good forecast of an easy market,
while naming the outcome when asked plainly is knowledge of it. Both rates are reported.

Errors are data, of two kinds (as in a sweep): an unreadable answer (after one repair
turn) is a stored, counted failure — never a guess, never "unknown"; an outage (the model
could not be reached) is not an answer: nothing is stored for it, the probe ends with
`StoppedError` (exit 4) once every answer it got is stored, and the next run asks again.
Every call goes through the response cache of the `Models` value: a re-run asks nothing.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from hindcast import forecasters, markets, replay
from hindcast.errors import CircuitOpen, ConfigError, CutoffError, InfrastructureError
from hindcast.llm import ask_probability, prompts
from hindcast.llm import client as llm
from hindcast.records import Question
from hindcast.scoring import regimes
from hindcast.timeutil import iso

RECALL_CONFIDENCE = 0.8  # `after`: the real outcome named with at least this confidence
T0_EXTREME = 0.9  # `t0`: p ≥ 0.9 on a YES market, p ≤ 0.1 on a NO market
DEFAULT_FRACTION = 0.5  # the probe's t0: the market's lifetime midpoint
KINDS = ("after", "t0")
TEMPLATES = {"after": "probe_recall", "t0": "probe_t0"}
REQUEST = {"temperature": 0.0, "max_tokens": 64}  # part of every request (and so of its cache key)
RECALL_SCHEMA = {
    "type": "object",
    "properties": {
        "outcome": {"type": "string", "enum": ["yes", "no", "unknown"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["outcome", "confidence"],
    "additionalProperties": False,
}
REPAIR = (
    "Your answer could not be used ({reason}). Reply with only a JSON object with the keys "
    '"outcome" ("yes", "no" or "unknown") and "confidence" (a number between 0 and 1).'
)


@dataclass(frozen=True)
class ProbeItem:
    """One market to probe: the question as it stood at the probe's t0, and how it resolved."""

    question: Question
    outcome: float  # 1.0 yes, 0.0 no
    resolved_at: datetime
    label: str = f"f={DEFAULT_FRACTION}"


@dataclass(frozen=True)
class Asked:
    """A model to probe: its spec (`local`, `openai:MODEL`, …) and how to reach it."""

    model: str
    key_env: str | None = None
    structured: str = "json_schema"


@dataclass(frozen=True)
class ProbeAnswer:
    """One stored answer (or counted failure) of the probe."""

    model: str
    market_id: str
    kind: str  # "after" | "t0"
    t0: str  # ISO UTC: the probe's t0 (the regime is labelled at it)
    label: str
    regime: str
    outcome: float
    answer: str | None = None  # after: yes | no | unknown
    confidence: float | None = None  # after
    probability: float | None = None  # t0
    error: str | None = None  # an unreadable answer after the repair turn
    raw: str = ""
    prompt_sha256: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def hit(self) -> bool:
        """Correct and confident (`after`: the recall rule; `t0`: the extreme-probability rule)."""
        if not self.ok:
            return False
        if self.kind == "after":
            named = {"yes": 1.0, "no": 0.0}.get(self.answer or "")
            return named == self.outcome and (self.confidence or 0.0) >= RECALL_CONFIDENCE
        p = self.probability
        return (
            p is not None and (p if self.outcome == 1.0 else 1.0 - p) >= T0_EXTREME
        )  # 1 − 0.1 is exactly 0.9

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.model, self.market_id, self.kind, self.t0)

    def to_json(self) -> dict:
        return {
            "model": self.model,
            "market_id": self.market_id,
            "kind": self.kind,
            "t0": self.t0,
            "label": self.label,
            "regime": self.regime,
            "outcome": self.outcome,
            "answer": self.answer,
            "confidence": self.confidence,
            "probability": self.probability,
            "error": self.error,
            "raw": self.raw,
            "prompt_sha256": self.prompt_sha256,
            "hit": self.hit,
        }

    @classmethod
    def from_json(cls, row: Mapping) -> ProbeAnswer:
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in row.items() if k in names})


@dataclass(frozen=True)
class ProbeResult:
    """What one probe got: every answer (failures included) and the outages (not answers)."""

    answers: tuple[ProbeAnswer, ...]
    outages: tuple[str, ...] = ()  # "model market kind: reason" of each question not asked
    skipped: tuple[str, ...] = ()  # markets without a replayable probe t0 (with the reason)
    requests: int = 0  # calls sent to a model now (repairs included)
    cache_hits: int = 0  # calls answered from the response cache


# ---- what to probe -------------------------------------------------------------------------------
def models_of(specs: Iterable[str]) -> list[Asked]:
    """The models of forecaster specs (`zero-shot:model=local`) or bare model specs (`local`,
    `openai:MODEL`, `openai-compatible:URL#MODEL`), each once, in the order given."""
    seen: dict[str, Asked] = {}
    for spec in specs:
        asked = _asked(spec)
        seen.setdefault(asked.model, asked)
    if not seen:
        raise ConfigError(
            "probe recall needs at least one model: -f zero-shot:model=local, -f openai:MODEL …"
        )
    return list(seen.values())


def _asked(spec: str) -> Asked:
    if spec == "local" or spec.startswith(("openai:", "openai-compatible:")):
        llm.parse_model(spec)  # a malformed model spec fails here
        return Asked(spec)

    made = forecasters.registry.create(spec)
    if not isinstance(getattr(made, "model", None), str):
        raise ConfigError(f"forecaster {spec!r} calls no model: nothing to probe")
    return Asked(
        made.model, getattr(made, "key_env", None), getattr(made, "structured", "json_schema")
    )


def items_from_store(
    store: Path,
    version: str | None = None,
    ids: Sequence[str] = (),
    limit: int | None = None,
    fraction: float = DEFAULT_FRACTION,
) -> tuple[list[ProbeItem], list[str]]:
    """The store's Yes/No markets (sorted by id; `ids` only, at most `limit`) as probe items at
    lifetime fraction `fraction`; and the markets skipped (no replayable t0), with the reason."""
    replay.check_fraction(fraction)  # a bad fraction is refused once, not reported per market
    bundle = markets.open_version(store, version).bundle
    resolutions = {r.market_id: r for r in bundle.resolutions}
    missing = sorted(set(ids) - set(resolutions))
    if missing:
        raise ConfigError(f"market(s) not in store {store}: {', '.join(missing)}")
    chosen = [i for i in sorted(ids or resolutions) if resolutions[i].outcome is not None][
        : limit or None
    ]
    by_id = {m.id: m for m in bundle.markets}
    made = [_item(bundle, by_id[i], resolutions[i], fraction) for i in chosen]
    return [m for m in made if isinstance(m, ProbeItem)], [m for m in made if isinstance(m, str)]


def _item(bundle, market, resolution, fraction: float) -> ProbeItem | str:
    """The probe item of one market at `fraction`, or why it has no replayable t0."""
    try:
        life = replay.cutoffs.lifetime(market, resolution, bundle.prices.get(market.id, ()))
        cut = replay.cutoffs.fraction_cutoff(life, fraction)
    except CutoffError as exc:
        return f"{market.id}: {exc}"
    return ProbeItem(
        replay.plan.question_at(bundle, cut), resolution.outcome, resolution.resolved_at, cut.label
    )


# ---- asking --------------------------------------------------------------------------------------
async def probe(
    asked: Sequence[Asked],
    items: Sequence[ProbeItem],
    models,
    cutoffs: Mapping[str, datetime],
    concurrency: int = 4,
) -> ProbeResult:
    """Ask every model both questions about every item (through `models`: its clients, its
    response cache); answers in a fixed order whatever order they arrive in."""
    gate = asyncio.Semaphore(max(1, int(concurrency)))
    jobs = [(a, item, kind) for a in asked for item in items for kind in KINDS]
    counts = {"requests": 0, "cache_hits": 0}
    results = await asyncio.gather(
        *(_one(gate, models, a, item, kind, cutoffs, counts) for a, item, kind in jobs)
    )
    answers = tuple(sorted((r for r in results if isinstance(r, ProbeAnswer)), key=lambda r: r.key))
    return ProbeResult(answers, tuple(r for r in results if isinstance(r, str)), **counts)


async def _one(
    gate, models, asked: Asked, item: ProbeItem, kind: str, cutoffs, counts: dict
) -> ProbeAnswer | str:
    """One question's answer, or the line naming the outage that kept it from being asked."""
    async with gate:
        client = models.client(asked.model, asked.key_env, asked.structured)
        base, usage = _blank(asked.model, item, kind, cutoffs), llm.UsageTally(client)
        try:
            return await (_ask_after if kind == "after" else _ask_t0)(client, item, base, usage)
        except CircuitOpen as exc:
            return f"{asked.model} {item.question.market_id} {kind}: not asked ({exc})"
        except InfrastructureError as exc:
            return f"{asked.model} {item.question.market_id} {kind}: {exc}"
        finally:
            counts["requests"] += usage.totals["requests"]
            counts["cache_hits"] += usage.totals["cache_hits"]


def _blank(model: str, item: ProbeItem, kind: str, cutoffs) -> ProbeAnswer:
    q = item.question
    label = regimes.regime(model, q.t0, item.resolved_at, dict(cutoffs))
    return ProbeAnswer(
        model,
        q.market_id,
        kind,
        iso(q.t0),
        item.label,
        label,
        item.outcome,
        prompt_sha256=prompts.load(TEMPLATES[kind]).sha256,
    )


async def _ask_t0(
    client: llm.ChatClient, item: ProbeItem, base: ProbeAnswer, usage: llm.UsageTally
) -> ProbeAnswer:
    messages = prompts.load("probe_t0").messages(**prompts.question_fields(item.question))
    parsed, raws = await ask_probability(client, messages, usage, step="probe-t0", **REQUEST)
    if parsed.probability is None:
        return replace(
            base,
            error=f"invalid answer after {len(raws)} attempt(s): {parsed.reason}",
            raw=raws[-1],
        )
    return replace(base, probability=parsed.probability, raw=raws[-1])


async def _ask_after(
    client: llm.ChatClient, item: ProbeItem, base: ProbeAnswer, usage: llm.UsageTally
) -> ProbeAnswer:
    fields = prompts.question_fields(item.question)
    conversation = prompts.load("probe_recall").messages(**fields)
    for _ in range(2):  # the question, then one repair turn
        reply = await client.complete(conversation, schema=RECALL_SCHEMA, **REQUEST)
        answer, confidence, reason = parse_recall(reply.content)
        usage.add("probe-after", reply, raw=reply.content, reason=reason)
        if answer is not None:
            return replace(base, answer=answer, confidence=confidence, raw=reply.content)
        conversation += [
            {"role": "assistant", "content": reply.content},
            {"role": "user", "content": REPAIR.format(reason=reason)},
        ]
    return replace(base, error=f"invalid answer after 2 attempt(s): {reason}", raw=reply.content)


# ---- reading a recall answer ---------------------------------------------------------------------
_OUTCOME = re.compile(r"\boutcome\b\W{0,4}(yes|no|unknown)\b", re.IGNORECASE)
_CONFIDENCE = re.compile(r"\bconfidence\b\W{0,4}([01](?:\.\d+)?|\.\d+)\b", re.IGNORECASE)


def parse_recall(text: str) -> tuple[str | None, float | None, str]:
    """(outcome, confidence, "") from an answer, or (None, None, reason). JSON first (also in
    surrounding text), else labelled `outcome: yes … confidence: 0.9`. "unknown" needs no
    confidence (it is read as 0); "yes"/"no" without a confidence in [0, 1] is unreadable."""
    text = (text or "").strip()
    if not text:
        return None, None, "empty answer"
    found = _json_recall(text) or _labelled_recall(text)
    if found is None:
        return None, None, "no outcome (yes, no or unknown) in the answer"
    outcome, confidence = found
    if outcome == "unknown":
        return outcome, 0.0 if confidence is None else confidence, ""
    if confidence is None or not 0.0 <= confidence <= 1.0:
        return None, None, f"outcome {outcome!r} without a confidence between 0 and 1"
    return outcome, confidence, ""


def _json_recall(text: str) -> tuple[str, float | None] | None:
    for candidate in [text, *re.findall(r"\{[^{}]*\}", text)]:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict) and str(value.get("outcome", "")).strip().lower() in (
            "yes",
            "no",
            "unknown",
        ):
            return str(value["outcome"]).strip().lower(), _number(value.get("confidence"))
    return None


def _labelled_recall(text: str) -> tuple[str, float | None] | None:
    outcomes = {m.lower() for m in _OUTCOME.findall(text)}
    if len(outcomes) != 1:
        return None
    confidence = _CONFIDENCE.search(text)
    return outcomes.pop(), float(confidence.group(1)) if confidence else None


def _number(value) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).strip().rstrip("%")) / (
            100.0 if str(value).strip().endswith("%") else 1.0
        )
    except ValueError:
        return None
