"""Raw Kalshi JSON → records, once, at the boundary (docs/kalshi-api.md).

Traps handled here: prices are fixed-point dollar *strings* (`"0.9900"`, read with Decimal;
the integer cent fields are gone, and a number where a string belongs is refused, not
guessed); live candles name their fields `close_dollars`, `previous_dollars`, historical
candles `close`, `previous` (a candle of the other shape is an error, never read as empty);
`price.close` is null in a period without trades (then `price.previous`; with neither, the
candle gives no point); answers' statuses are not the filter's (`finalized`, not `settled`),
and only `finalized` is a settled result (`disputed`/`amended` may still change; `determined`
is not final). A market id is `kalshi:<ticker>`; a price point is the candle's close at its
`end_period_ts` (the inclusive end of the period), so `price_at(t0)` — the last point
strictly before t0 — is the last candle that closed strictly before t0.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation

from hindcast.errors import MalformedMarket, MarketSkipped
from hindcast.markets.bundle import MarketMeta
from hindcast.markets.kalshi import PERIOD_MINUTES
from hindcast.markets.parse import ParsedMarket, _text
from hindcast.markets.parse import _optional_text as _optional
from hindcast.markets.prices import sort_history
from hindcast.markets.topics import topic_of
from hindcast.records import Market, PricePoint, Resolution
from hindcast.timeutil import from_unix, parse_utc

VENUE = "kalshi"
ID_PREFIX = "kalshi:"
FINAL = "finalized"
MAY_CHANGE = frozenset({"disputed", "amended"})
BUCKET_SECONDS = PERIOD_MINUTES * 60
ROUTES = {False: "kalshi candlesticks (live)", True: "kalshi historical candlesticks"}
DEFINITIONS = {
    False: "candle close (price.close_dollars, fallback price.previous)",
    True: "candle close (price.close, fallback price.previous)",
}
CANDLE_FIELDS = {False: ("close_dollars", "previous_dollars"), True: ("close", "previous")}


@dataclass(frozen=True)
class KalshiMarket:
    """One settled Kalshi market as records, and what fetching its candles needs."""

    parsed: ParsedMarket
    ticker: str
    event_ticker: str
    opened_at: datetime
    closed_at: datetime
    settled_at: datetime


def market_id(ticker: str) -> str:
    return ID_PREFIX + ticker


def ticker_of(raw: object) -> str:
    """The ticker to name a raw market by in messages."""
    return str(raw.get("ticker") or "<no ticker>") if isinstance(raw, dict) else "<not an object>"


def parse_market(raw: object, historical: bool) -> KalshiMarket:
    """A Kalshi market object → records; MarketSkipped or MalformedMarket otherwise.
    `historical`: its candles come from /historical (the route recorded in its meta)."""
    try:
        return _parse(raw, historical)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        reason = f"missing field {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)
        raise MalformedMarket(market_id(ticker_of(raw)), reason) from exc


def _parse(raw: object, historical: bool) -> KalshiMarket:
    if not isinstance(raw, dict):
        raise TypeError(f"expected a JSON object, got {type(raw).__name__}")
    ticker = _text(raw, "ticker")
    _require_settled_binary(raw, market_id(ticker))
    opened, closed, settled = (
        _time(raw, "open_time"),
        _time(raw, "close_time"),
        _time(raw, "settlement_ts"),
    )
    resolution = Resolution(
        market_id(ticker), raw["result"], _resolved_at(raw, closed, settled), settled
    )
    return KalshiMarket(
        ParsedMarket(
            _market(raw, ticker, opened, closed), resolution, _meta(raw, ticker, historical)
        ),
        ticker,
        _text(raw, "event_ticker"),
        opened,
        closed,
        settled,
    )


def _require_settled_binary(raw: dict, mid: str) -> None:
    kind, status, result = raw.get("market_type"), raw.get("status"), raw.get("result")
    if kind != "binary":
        raise MarketSkipped(mid, f"not binary (market_type {kind!r})")
    if status in MAY_CHANGE:
        raise MarketSkipped(mid, f"result may still change (status {status!r})")
    if status != FINAL:
        raise MarketSkipped(mid, f"not finalized (status {status!r})")
    if result not in ("yes", "no"):
        raise MarketSkipped(mid, f"not a yes/no result (result {result!r})")


def _resolved_at(raw: dict, closed: datetime, settled: datetime) -> datetime:
    """The earliest evidence of the outcome: the close, the occurrence (when
    given), the settlement."""
    occurred = _optional_time(raw, "occurrence_datetime")
    return min(t for t in (closed, settled, occurred) if t is not None)


def _market(raw: dict, ticker: str, opened: datetime, closed: datetime) -> Market:
    title = _text(raw, "title")
    return Market(
        id=market_id(ticker),
        question=question_of(title, _optional(raw, "yes_sub_title")),
        description=_rules(raw),
        topic=topic_of(title),
        opened_at=opened,
        scheduled_close=closed,
        volume=_optional_amount(raw, "volume_fp"),
        source=VENUE,
    )


def question_of(title: str, yes_label: str) -> str:
    """The title, with what YES means when the title alone does not say it (multi-strike events)."""
    if not yes_label or yes_label.lower() in title.lower():
        return title
    return f"{title} (YES = {yes_label!r})"


def _rules(raw: dict) -> str:
    return "\n\n".join(
        text
        for text in (_optional(raw, "rules_primary"), _optional(raw, "rules_secondary"))
        if text
    )


def _meta(raw: dict, ticker: str, historical: bool) -> MarketMeta:
    status = raw["status"]
    return MarketMeta(
        market_id=market_id(ticker),
        source_id=ticker,
        event=_optional(raw, "event_ticker"),
        outcomes=("Yes", "No"),
        yes_index=0,
        venue=VENUE,
        price_route=ROUTES[historical],
        price_bucket_seconds=BUCKET_SECONDS,
        price_definition=DEFINITIONS[historical],
        disputed=status in MAY_CHANGE,
        rules_updated_at=_optional_time(raw, "updated_time"),
        resolution_statuses=(status,),
    )


# -- candles --------------------------------------------------------------------------------
def parse_candles(mid: str, candles: list, historical: bool) -> tuple[PricePoint, ...]:
    """Raw candles of one side → points (t = end_period_ts, p = close, else previous), sorted;
    a candle repeated exactly is kept once, two different closes at one instant are an error."""
    try:
        points: dict[int, PricePoint] = {}
        for candle in candles:
            t, point = _candle_point(candle, historical)
            if point is not None and points.setdefault(t, point) != point:
                raise ValueError(f"two different closes at end_period_ts {t}")
        return sort_history(list(points.values()))
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        reason = f"missing field {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)
        raise MalformedMarket(mid, f"candlesticks: {reason}") from exc


def _candle_point(candle: object, historical: bool) -> tuple[int, PricePoint | None]:
    if not isinstance(candle, dict):
        raise TypeError(f"candle {candle!r:.60} is not an object")
    t = candle["end_period_ts"]
    if isinstance(t, bool) or not isinstance(t, int):
        raise ValueError(f"end_period_ts {t!r} is not unix seconds")
    price = candle["price"]
    if price is None:
        return t, None
    close, previous = CANDLE_FIELDS[historical]
    if not isinstance(price, dict) or close not in price or previous not in price:
        side = "historical" if historical else "live"
        raise ValueError(
            f"candle at {t}: a {side} candle's price has {close!r} and {previous!r}, "
            f"got {sorted(price) if isinstance(price, dict) else price!r}"
        )
    value = price[close] if price[close] is not None else price[previous]
    return t, None if value is None else PricePoint(from_unix(t), dollars(value, f"price.{close}"))


def dollars(value: object, name: str) -> float:
    """A fixed-point dollar string ("0.4200") as a probability in [0, 1]."""
    amount = _decimal(value, name)
    if not Decimal(0) <= amount <= Decimal(1):
        raise ValueError(f"{name} {value!r} is outside 0..1 dollars")
    return float(amount)


def _decimal(value: object, name: str) -> Decimal:
    if not isinstance(value, str):
        raise ValueError(
            f"{name} {value!r} is not a fixed-point string (integer price fields are gone)"
        )
    try:
        amount = Decimal(value)
    except InvalidOperation:
        raise ValueError(f"{name} {value!r} is not a fixed-point number") from None
    if not amount.is_finite():
        raise ValueError(f"{name} {value!r} is not finite")
    return amount


# -- field readers (text ones shared with parse) ------------------------------------------------
def _optional_amount(raw: dict, key: str) -> float | None:
    value = raw.get(key)
    return None if value in (None, "") else float(_decimal(value, key))


def _time(raw: dict, key: str) -> datetime:
    value = _optional_time(raw, key)
    if value is None:
        raise ValueError(f"{key} is missing")
    return value


def _optional_time(raw: dict, key: str) -> datetime | None:
    value = raw.get(key)
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise ValueError(f"{key} {value!r} is not an RFC 3339 timestamp")
    return parse_utc(value)
