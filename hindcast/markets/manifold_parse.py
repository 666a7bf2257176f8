"""Raw Manifold JSON → records, once, at the boundary (manifold-api.md).

Traps handled here:
- `resolution` decides the outcome: YES → 1, NO → 0, MKT → a *fractional* outcome equal to
  `resolutionProbability`, CANCEL (N/A) → skipped. `resolutionProbability` is present on every
  resolution (the price just before resolving) and is read only for MKT; `probability` (the
  AMM's current value) is never an outcome.
- `closeTime` is rewritten at resolution and movable by the creator: a close time read now may
  hold information from after t0 (the resolution instant). It is never shown to a forecaster
  (`scheduled_close` stays empty) and never anchors a cutoff; the pull records it as read.
- the API returns only the current question and description, with no edit log. The text is
  marked as possibly edited up to `lastUpdatedTime` (which moves on *any* change, so it bounds
  the last edit from above): a cutoff at or before it is text-uncertain, as a Polymarket
  market with updated rules is (`MarketMeta.rules_updated_at`).
- multiple-choice, numeric, poll and other non-binary markets are read and skipped by kind.
- bets: `probAfter` at `createdTime` (ms) is the price from then on; the first bet's
  `probBefore` is the price from the market's creation. Bets sharing one millisecond collapse
  to one point: the end of their `probBefore → probAfter` chain (a redemption never ends it
  when a trade can). Bets of an answer (`answerId`) never enter a binary series, and no bet is
  dropped on `isFilled` (decided later: a look-ahead flag, and absent on old bets).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone

from hindcast.errors import MalformedMarket, MarketSkipped
from hindcast.markets.bundle import MarketMeta
from hindcast.markets.parse import ParsedMarket, _text
from hindcast.markets.prices import sort_history
from hindcast.markets.topics import topic_of
from hindcast.records import Market, PricePoint, Resolution

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
VENUE = "manifold"
ID_PREFIX = "manifold:"
ROUTE = "manifold /v0/bets"
MAX_CHAIN = 8  # bets of one millisecond ordered by search (more: by the fallback rule)
DEFINITION = "probAfter of the last bet strictly before t0 (the first bet's probBefore before it)"
KINDS = {
    "MULTIPLE_CHOICE": "multiple choice",
    "FREE_RESPONSE": "multiple choice (free response)",
    "PSEUDO_NUMERIC": "numeric",
    "NUMBER": "numeric",
    "MULTI_NUMERIC": "numeric",
    "DATE": "numeric (date)",
}


def market_id(raw_id: str) -> str:
    return ID_PREFIX + raw_id


def id_of(raw: object) -> str:
    value = raw.get("id") if isinstance(raw, dict) else None
    return value if isinstance(value, str) and value else "<no id>"


def require_binary(raw: object) -> None:
    """MarketSkipped (by kind, or by resolution) unless a resolved YES/NO/MKT binary market;
    enough of a listed (lite) market to decide before fetching anything else for it."""
    if not isinstance(raw, dict):
        raise MalformedMarket("manifold:<not an object>", f"expected an object, got {raw!r:.60}")
    mid, kind = market_id(id_of(raw)), raw.get("outcomeType")
    if kind != "BINARY":
        answers = raw.get("answers")
        count = f", {len(answers)} answers" if isinstance(answers, list) else ""
        label = KINDS.get(kind, "not binary") if isinstance(kind, str) else "not binary"
        raise MarketSkipped(mid, f"{label} (outcomeType {kind!r}{count}): not a binary market")
    resolution = raw.get("resolution")
    if resolution == "CANCEL":
        raise MarketSkipped(mid, "resolved CANCEL (N/A): no outcome")
    if resolution not in ("YES", "NO", "MKT"):
        raise MarketSkipped(mid, f"not resolved YES, NO or MKT (resolution {resolution!r})")


def parse_market(raw: object) -> ParsedMarket:
    """A full binary market object → records; MarketSkipped or MalformedMarket otherwise."""
    require_binary(raw)
    assert isinstance(raw, dict)
    try:
        return _parse(raw)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        reason = f"missing field {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)
        raise MalformedMarket(market_id(id_of(raw)), reason) from exc


def _parse(raw: dict) -> ParsedMarket:
    mid = market_id(_text(raw, "id"))
    resolved = from_ms(raw.get("resolutionTime"), "resolutionTime")
    market = Market(
        id=mid,
        question=_text(raw, "question"),
        description=description_of(raw),
        url=raw["url"] if isinstance(raw.get("url"), str) else "",
        slug=raw["slug"] if isinstance(raw.get("slug"), str) else "",
        topic=topic_of(raw["question"]),
        opened_at=from_ms(raw.get("createdTime"), "createdTime"),
        scheduled_close=None,  # read after resolution: rewritten to min(close, resolution)
        volume=_number(raw.get("volume")),
        source=VENUE,
    )
    return ParsedMarket(market, _resolution(raw, mid, resolved), _meta(raw, mid))


def _resolution(raw: dict, mid: str, resolved: datetime) -> Resolution:
    if raw["resolution"] != "MKT":
        return Resolution(mid, "yes" if raw["resolution"] == "YES" else "no", resolved, resolved)
    fraction = _number(raw.get("resolutionProbability"))
    if fraction is None or not 0.0 <= fraction <= 1.0:
        raise ValueError(f"MKT resolution without a probability in [0, 1]: {fraction!r}")
    return Resolution(mid, "fractional", resolved, resolved, fraction)


def _meta(raw: dict, mid: str) -> MarketMeta:
    updated = raw.get("lastUpdatedTime")
    return MarketMeta(
        market_id=mid,
        source_id=raw["id"],
        outcomes=("YES", "NO"),
        yes_index=0,
        venue=VENUE,
        price_route=ROUTE,
        price_definition=DEFINITION,
        rules_updated_at=None if updated is None else from_ms(updated, "lastUpdatedTime"),
        resolution_statuses=(raw["resolution"],),
    )


def description_of(raw: dict) -> str:
    """`textDescription` (the plain rendering), else a string `description`, else the text of a
    tiptap document (`{"type": "doc", "content": [...]}`), else ""."""
    text = raw.get("textDescription")
    if isinstance(text, str) and text.strip():
        return text
    description = raw.get("description")
    if isinstance(description, str):
        return description
    return "\n".join(_tiptap_text(description)).strip() if isinstance(description, dict) else ""


def _tiptap_text(node: object) -> Iterable[str]:
    if not isinstance(node, dict):
        return
    if isinstance(node.get("text"), str):
        yield node["text"]
    parts = [t for child in node.get("content") or () for t in _tiptap_text(child)]
    if parts:
        yield "".join(parts) if node.get("type") == "paragraph" else "\n".join(parts)


# -- bets -------------------------------------------------------------------------------------
def parse_bets(
    mid: str, opened: datetime | None, bets: list, initial: float | None = None
) -> tuple[PricePoint, ...]:
    """A binary market's bets → its price points (see the module); MalformedMarket when a bet
    cannot be read. `initial`: the market's `probability` when it has no bet at all (then
    unchanged since its creation), its one point, from the creation."""
    try:
        groups: dict[int, list[dict]] = {}
        for bet in bets:
            if _binary_bet(bet):
                groups.setdefault(bet["createdTime"], []).append(bet)
        points, price = [], None
        for t in sorted(groups):
            price = _chain_end(groups[t], price)
            points.append(PricePoint(from_ms(t, "createdTime"), price))
        return sort_history(points + _opening(opened, groups, initial))
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        reason = f"missing field {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)
        raise MalformedMarket(mid, f"bets: {reason}") from exc


def _binary_bet(bet: object) -> bool:
    if not isinstance(bet, dict):
        raise TypeError(f"bet {bet!r:.60} is not an object")
    created = bet["createdTime"]
    if isinstance(created, bool) or not isinstance(created, int):
        raise ValueError(f"bet {bet.get('id')!r}: createdTime {created!r} is not integer ms")
    for key in ("probBefore", "probAfter"):
        if _number(bet.get(key)) is None or not 0.0 <= bet[key] <= 1.0:
            raise ValueError(f"bet {bet.get('id')!r}: {key} {bet.get(key)!r} is not in [0, 1]")
    return not bet.get("answerId")


def _opening(
    opened: datetime | None, groups: dict[int, list[dict]], initial: float | None
) -> list[PricePoint]:
    """The first bet's probBefore (or, without any bet, `initial`), from the market's creation
    (if that precedes the first bet): the opening probability, public from the creation."""
    if opened is None:
        return []
    if not groups:
        return [] if initial is None or not 0.0 <= initial <= 1.0 else [PricePoint(opened, initial)]
    first = min(groups)
    start = from_ms(first, "createdTime")
    if opened >= start:
        return []
    before = {b["probBefore"] for b in groups[first]} - {b["probAfter"] for b in groups[first]}
    chained = [b for b in groups[first] if b["probBefore"] in before] or groups[first]
    return [PricePoint(opened, float(chained[0]["probBefore"]))]


def _chain_end(bets: list[dict], start: float | None) -> float:
    """The probability after the last of bets placed in one millisecond: the end of an order of
    them in which each bet starts where the one before ended (from `start`, the price before
    the millisecond, when known); trades tried before redemptions and resting orders. Where no
    such order exists, a bet no other one starts from, else the largest id (deterministic)."""
    ordered = sorted(bets, key=_preference)
    end = _walk(start, ordered) if len(bets) <= MAX_CHAIN else None
    if end is not None:
        return end
    ends = [
        b
        for b in ordered
        if not any(o is not b and o["probBefore"] == b["probAfter"] for o in bets)
    ]
    return float((ends or ordered)[0]["probAfter"])


def _walk(current: float | None, left: list[dict]) -> float | None:
    if not left:
        return current
    for i, bet in enumerate(left):
        if current is None or bet["probBefore"] == current:
            end = _walk(float(bet["probAfter"]), left[:i] + left[i + 1 :])
            if end is not None:
                return end
    return None


def _preference(bet: dict) -> tuple:
    return (
        bool(bet.get("isRedemption")),
        bet["probBefore"] == bet["probAfter"],
        str(bet.get("id")),
    )


def initial_of(raw: dict, bets: list) -> float | None:
    """The `probability` of a market without any bet (its opening value), else None."""
    return None if bets else _number(raw.get("probability"))


# -- field readers ----------------------------------------------------------------------------
def from_ms(value: object, name: str) -> datetime:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} {value!r} is not integer milliseconds")
    return EPOCH + timedelta(milliseconds=value)  # exact: no float seconds


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None
