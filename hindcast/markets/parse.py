"""Raw Gamma / CLOB JSON → records, once, at the boundary (docs/polymarket-api.md).

Traps handled here: `outcomes`, `outcomePrices`, `clobTokenIds` are strings holding JSON;
`closedTime` has its own format (parse_utc reads both); labels are not always Yes/No;
final prices like ["0.0005", "0.9995"] single out a winner, ["0.5", "0.5"] is a 50-50;
`umaResolutionStatuses` may lag `umaResolutionStatus`; token ids are long decimal
strings kept as text; numbers arrive as int or float, volume also as a string; unknown
keys are ignored. A market that is not binary or not resolved raises `MarketSkipped`
(with the reason); a market whose fields cannot be read raises `MalformedMarket`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime

from hindcast.errors import MalformedMarket, MarketSkipped
from hindcast.markets.bundle import MarketMeta
from hindcast.markets.prices import sort_history
from hindcast.markets.topics import TOPIC_KEYWORDS, topic_of
from hindcast.records import Market, PricePoint, Resolution, ResolutionStatus
from hindcast.timeutil import from_unix, parse_utc

WINNER_PRICE = 0.99  # a final price at or above this singles out the winner
FIFTY_FIFTY_TOLERANCE = 0.01
TOPICS = frozenset(topic for topic, _ in TOPIC_KEYWORDS)
CATEGORY_TOPICS = {
    "pop culture": "entertainment",
    "culture": "entertainment",
    "business": "finance",
    "economics": "economy",
    "global politics": "geopolitics",
    "world": "geopolitics",
    "technology": "tech",
    "ai": "tech",
    "us-current-affairs": "politics",
    "elections": "politics",
}
MARKET_URL = "https://polymarket.com/market/{slug}"


@dataclass(frozen=True)
class ParsedMarket:
    """One Gamma market as records (its price history is fetched separately)."""

    market: Market
    resolution: Resolution
    meta: MarketMeta


def market_key(raw: object) -> str:
    """The id to name a raw market by in messages: its conditionId, else its Gamma id."""
    if not isinstance(raw, dict):
        return "<not an object>"
    return str(raw.get("conditionId") or f"gamma id {raw.get('id', '?')}")


def parse_gamma_market(raw: object) -> ParsedMarket:
    """A Gamma market object → records; MarketSkipped or MalformedMarket otherwise."""
    key = market_key(raw)
    try:
        return _parse(raw)
    except (ValueError, TypeError, KeyError) as exc:
        raise MalformedMarket(key, _reason(exc)) from exc


def _parse(raw: object) -> ParsedMarket:
    if not isinstance(raw, dict):
        raise TypeError(f"expected a JSON object, got {type(raw).__name__}")
    market_id = _text(raw, "conditionId")
    outcomes = _json_list(raw, "outcomes")
    if len(outcomes) != 2:
        raise MarketSkipped(market_id, f"not binary ({len(outcomes)} outcomes)")
    tokens = _json_list(raw, "clobTokenIds")
    _check_tokens(tokens, outcomes)
    yes = yes_index(outcomes)
    resolution = _resolution(raw, market_id, outcomes, yes)
    market = _market(raw, market_id, outcomes, yes)
    return ParsedMarket(market, resolution, _meta(raw, market_id, outcomes, yes, tokens[yes]))


# -- outcomes and resolution ---------------------------------------------------------------
def yes_index(labels: list[str]) -> int:
    """The outcome read as YES: the one labelled Yes, else outcome 0."""
    lowered = [label.strip().lower() for label in labels]
    return lowered.index("yes") if "yes" in lowered else 0


def _resolution(raw: dict, market_id: str, outcomes: list, yes: int) -> Resolution:
    _require_settled(raw, market_id)
    prices = [_number(p, "outcomePrices") for p in _json_list(raw, "outcomePrices")]
    if len(prices) != len(outcomes):
        raise ValueError(f"outcomePrices has {len(prices)} prices for {len(outcomes)} outcomes")
    resolved_at, known_at = _resolution_window(raw)
    return Resolution(market_id, resolution_status(prices, yes), resolved_at, known_at)


def _require_settled(raw: dict, market_id: str) -> None:
    """Resolved = closed and UMA says resolved (umaResolutionStatuses may lag: ignored)."""
    if raw.get("closed") is not True:
        raise MarketSkipped(market_id, "not closed", pending=True)
    status = raw.get("umaResolutionStatus")
    if status != "resolved":
        raise MarketSkipped(
            market_id, f"not resolved (umaResolutionStatus={status!r})", pending=True
        )


def resolution_status(prices: list[float], yes: int) -> ResolutionStatus:
    """yes/no when one final price is ≥ WINNER_PRICE; fifty-fifty at 0.5/0.5; else ambiguous."""
    winners = [i for i, p in enumerate(prices) if p >= WINNER_PRICE]
    if len(winners) == 1:
        return "yes" if winners[0] == yes else "no"
    if all(abs(p - 0.5) <= FIFTY_FIFTY_TOLERANCE for p in prices):
        return "fifty-fifty"
    return "ambiguous"


def _resolution_window(raw: dict) -> tuple[datetime, datetime]:
    """resolved_at: the earliest of scheduled end, close and UMA end (the earliest evidence);
    known_at: the latest of close and UMA end (the outcome certainly public)."""
    settled = [t for t in (_time(raw, "closedTime"), _time(raw, "umaEndDate")) if t]
    if not settled:
        raise ValueError("a resolved market without closedTime or umaEndDate")
    end = _time(raw, "endDate")
    return min(settled + ([end] if end else [])), max(settled)


def _check_tokens(tokens: list, outcomes: list) -> None:
    if len(tokens) != len(outcomes):
        raise ValueError(f"clobTokenIds has {len(tokens)} tokens for {len(outcomes)} outcomes")
    for token in tokens:
        if not (isinstance(token, str) and token.isdigit()):
            raise ValueError(f"clobTokenIds entry {token!r} is not a decimal string")


# -- market text and metadata --------------------------------------------------------------
def _market(raw: dict, market_id: str, outcomes: list[str], yes: int) -> Market:
    question = _text(raw, "question")
    slug = _optional_text(raw, "slug")
    return Market(
        id=market_id,
        question=binary_question(question, outcomes, yes),
        description=_optional_text(raw, "description"),
        url=MARKET_URL.format(slug=slug) if slug else "",
        slug=slug,
        topic=topic_from(raw, question),
        opened_at=_time(raw, "startDate") or _time(raw, "createdAt"),
        scheduled_close=_time(raw, "endDate"),
        volume=volume_of(raw),
        source="polymarket",
    )


def binary_question(question: str, outcomes: list[str], yes: int) -> str:
    """The question, with which label counts as YES when the labels are not Yes/No."""
    if sorted(o.strip().lower() for o in outcomes) == ["no", "yes"]:
        return question
    return f"{question} (YES = {outcomes[yes]!r}, NO = {outcomes[1 - yes]!r})"


def _meta(raw: dict, market_id: str, outcomes: list[str], yes: int, yes_token: str) -> MarketMeta:
    event = _first_event(raw)
    return MarketMeta(
        market_id=market_id,
        source_id=str(raw.get("id", "")),
        neg_risk=raw.get("negRisk") is True,
        category=_category(raw),
        tags=tuple(_tag_labels(event)),
        event=str(event.get("slug") or ""),
        outcomes=tuple(outcomes),
        yes_index=yes,
        yes_token=yes_token,
        disputed=raw.get("wasDisputed") is True,
        rules_updated_at=rules_updated_at(raw),
        resolution_statuses=resolution_statuses(raw),
    )


def resolution_statuses(raw: dict) -> tuple[str, ...]:
    """The UMA status chain (`umaResolutionStatuses`, a string holding JSON, may lag or be
    missing); the current `umaResolutionStatus` appended when the chain does not end with it."""
    chain = raw.get("umaResolutionStatuses")
    try:
        statuses = json.loads(chain) if isinstance(chain, str) else chain
    except json.JSONDecodeError:
        statuses = None
    statuses = [str(s) for s in statuses] if isinstance(statuses, list) else []
    current = raw.get("umaResolutionStatus")
    if isinstance(current, str) and current and (not statuses or statuses[-1] != current):
        statuses.append(current)
    return tuple(statuses)


def rules_updated_at(raw: dict) -> datetime | None:
    """When the question's rules were updated (`questionRulesUpdated`): its own timestamp
    when the item carries one (`questionRulesUpdatedAt`, unconfirmed), else the item's
    `updatedAt` (the latest the update can have been), else its close: a cutoff before it is
    treated as possibly showing text that did not exist yet."""
    if raw.get("questionRulesUpdated") is not True:
        return None
    for key in ("questionRulesUpdatedAt", "updatedAt", "closedTime", "umaEndDate"):
        value = _time(raw, key)
        if value is not None:
            return value
    raise ValueError("questionRulesUpdated without any timestamp to bound when")


def topic_from(raw: dict, question: str) -> str:
    """The event's category or tags when they name a topic, else the keyword rule."""
    for label in (_category(raw), *_tag_labels(_first_event(raw))):
        topic = _topic_name(label)
        if topic:
            return topic
    return topic_of(question)


def _topic_name(label: str) -> str | None:
    name = label.strip().lower()
    return name if name in TOPICS else CATEGORY_TOPICS.get(name)


def _category(raw: dict) -> str:
    return str(raw.get("category") or _first_event(raw).get("category") or "")


def _first_event(raw: dict) -> dict:
    events = raw.get("events")
    return events[0] if isinstance(events, list) and events and isinstance(events[0], dict) else {}


def _tag_labels(event: dict) -> list[str]:
    tags = event.get("tags")
    if not isinstance(tags, list):
        return []
    labels = (t.get("label") or t.get("slug") for t in tags if isinstance(t, dict))
    return [str(label) for label in labels if label]


def volume_of(raw: dict) -> float | None:
    """volumeNum (a number) when present, else volume (a string such as "9999.995006")."""
    for key in ("volumeNum", "volume"):
        if raw.get(key) not in (None, ""):
            return _number(raw[key], key)
    return None


# -- price histories and CLOB items --------------------------------------------------------
def parse_history(market_id: str, history: object) -> tuple[PricePoint, ...]:
    """`[{"t": unix, "p": price}, …]` → sorted points; exact repeats are dropped."""
    try:
        if not isinstance(history, list):
            raise TypeError(f"history must be a list, got {type(history).__name__}")
        points = {(_history_point(item)) for item in history}
        return sort_history(list(points))
    except (ValueError, TypeError, KeyError) as exc:
        raise MalformedMarket(market_id, f"price history: {_reason(exc)}") from exc


def parse_data_history(market_id: str, data: object) -> tuple[PricePoint, ...]:
    """The Data API's `/v2/prices-history` points (`{"timestamp", "price", "resolution_seconds"}`,
    `price` a number or — unconfirmed — a string holding one) → sorted points;
    exact repeats dropped."""
    try:
        if not isinstance(data, list):
            raise TypeError(f"data must be a list, got {type(data).__name__}")
        return sort_history(list({_data_point(item) for item in data}))
    except (ValueError, TypeError, KeyError) as exc:
        raise MalformedMarket(market_id, f"Data API price history: {_reason(exc)}") from exc


def _data_point(item: object) -> PricePoint:
    if not isinstance(item, dict):
        raise TypeError(f"point {item!r:.80} is not an object")
    return _history_point({"t": item["timestamp"], "p": item["price"]})


def _history_point(item: object) -> PricePoint:
    if not isinstance(item, dict):
        raise TypeError(f"point {item!r} is not an object")
    t = item["t"]
    if isinstance(t, bool) or not isinstance(t, int):
        raise ValueError(f"t {t!r} is not unix seconds")
    return PricePoint(from_unix(t), _number(item["p"], "p"))


# -- field readers --------------------------------------------------------------------------
def _json_list(raw: dict, key: str) -> list:
    """A field holding a JSON array as a string (as Gamma sends it) or, leniently, a list."""
    value = raw[key]
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"{key} is not valid JSON ({exc.msg} at column {exc.colno}): {raw[key][:80]!r}"
            ) from exc
    if not isinstance(value, list):
        raise ValueError(f"{key} must hold a JSON array")
    return value


def _number(value: object, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"{key} value {value!r} is not a number")
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{key} value {value!r} is not a number") from None
    if not math.isfinite(number):
        raise ValueError(f"{key} value {value!r} is not finite")
    return number


def _text(raw: dict, key: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{key} must be a non-empty string")
    return value


def _optional_text(raw: dict, key: str) -> str:
    value = raw.get(key)
    return value if isinstance(value, str) else ""


def _time(raw: dict, key: str) -> datetime | None:
    value = raw.get(key)
    if value in (None, ""):
        return None
    try:
        return parse_utc(value)
    except (ValueError, AttributeError) as exc:
        raise ValueError(f"{key} {value!r} is not a timestamp") from exc


def _reason(exc: Exception) -> str:
    return f"missing field {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)
