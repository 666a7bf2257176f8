"""A fake of Kalshi's public market data, live and historical, in the shapes of docs/kalshi-api.md.

Ship it in your own tests: `FakeKalshi.generate(...)` builds a seeded set of markets around a
historical cutoff; `mock_transport(fake)` serves it to an `httpx.Client` in process, `serve(fake)`
over real sockets on 127.0.0.1 (`with serve(fake) as url: … --kalshi-url url`).

What it serves, as the API does (each a trap a loader must handle):
- `GET /historical/cutoff` → `{"market_settled_ts", "trades_created_ts", "orders_updated_ts",
  "market_positions_last_updated_ts"}` (RFC 3339);
- `GET /markets`: only markets settled at or after the cutoff; `status` takes the *filter*
  values (unopened|open|closed|settled) and answers 400 to any other (`finalized` is an
  answer value, not a filter); `settled` matches answers `determined`, `disputed`, `amended`,
  `finalized` (which of these Kalshi's filter matches is not documented: assumed all);
  `min/max_settled_ts`, `series_ticker`, `event_ticker`, `tickers`; `limit` ≤ 1000 (400 above);
- `GET /historical/markets`: only markets settled before the cutoff; no status filter;
- both listings page by an opaque `cursor` and end with `"cursor": ""` — never by a short page;
- prices are fixed-point dollar strings (`*_dollars`), counts `*_fp` strings; no integer
  price field exists;
- `GET /series/{series}/markets/{ticker}/candlesticks` (live markets only; the series must be
  the market's) and `GET /historical/markets/{ticker}/candlesticks` (historical only):
  `start_ts`, `end_ts`, `period_interval` ∈ {1, 60, 1440} required; more than 5000 candles in
  one request → 400 (reported by third-party clients, unconfirmed); a candle is returned when
  start_ts ≤ end_period_ts ≤ end_ts; live candles carry `*_dollars` / `*_fp` fields,
  historical ones the bare names; `price.close` is null in a period without trades
  (`price.previous` then holds the last traded price, null before the first trade).

`faults[path]` (path as requested, e.g. "/markets") is a list of `Reply` served in order
before the real answer; `stuck_cursor` makes listings hand back the cursor they were given.
Every request is recorded in `requests` as (path, sorted query items).
"""

from __future__ import annotations

import random
import threading
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from hindcast.markets import fake_http
from hindcast.markets.fake_http import Reply, json_reply

__all__ = ["FakeKalshi", "FakeMarket", "Reply", "mock_transport", "serve"]

UTC = timezone.utc
FILTERS = {
    "unopened": {"initialized", "inactive"},
    "open": {"active"},
    "closed": {"closed"},
    "settled": {"determined", "disputed", "amended", "finalized"},
}
MAX_CANDLES = 5000


@dataclass
class FakeMarket:
    """One market: its answer object and its hourly candles as (end_period_ts, close, previous)
    with close/previous as dollar strings or None."""

    raw: dict
    candles: list[tuple[int, str | None, str | None]]

    @property
    def ticker(self) -> str:
        return self.raw["ticker"]

    @property
    def settled_at(self) -> datetime:
        return _parse(self.raw["settlement_ts"])


class FakeKalshi:
    """Answers Kalshi market-data requests from `markets`, split by `cutoff`."""

    def __init__(self, markets: list[FakeMarket], cutoff: datetime):
        self.markets, self.cutoff = list(markets), cutoff
        self.faults: dict[str, list[Reply]] = {}
        self.stuck_cursor = False
        self.requests: list[tuple[str, tuple]] = []
        self.lock = threading.Lock()

    # -- a seeded data set -------------------------------------------------------------------
    @classmethod
    def generate(
        cls,
        live: int = 12,
        historical: int = 12,
        cutoff: datetime = datetime(2026, 9, 1, tzinfo=UTC),
        seed: int = 0,
        extras: bool = True,
    ) -> FakeKalshi:
        """`live` finalized binary markets settled after `cutoff`, `historical` before it; with
        `extras`, on each side also a scalar market, a binary one with result "", and a
        `determined` and a `disputed` one (all to be skipped), and one market open 300 days
        (its candles need two requests)."""
        rng, markets = random.Random(seed), []
        for side, count, base in (
            ("L", live, cutoff + timedelta(days=3)),
            ("H", historical, cutoff - timedelta(days=200)),
        ):
            for i in range(count):
                markets.append(
                    _market(
                        rng, f"KXFAKE{side}-{i:03d}", base + timedelta(days=i % 40), days=3 + i % 20
                    )
                )
            if extras:
                markets += _extras(rng, side, base)
        return cls(markets, cutoff)

    def market(self, ticker: str) -> FakeMarket:
        return next(m for m in self.markets if m.ticker == ticker)

    # -- answering ---------------------------------------------------------------------------
    def answer(self, path: str, query: list[tuple[str, str]]) -> Reply:
        with self.lock:
            self.requests.append((path, tuple(sorted(query))))
            scripted = self.faults.get(path)
            if scripted:
                return scripted.pop(0)
        try:
            return self._route(path.rstrip("/"), dict(query))
        except (
            ValueError
        ) as bad:  # a request the API would refuse (the fake raises ValueError for it)
            return json_reply({"error": {"code": "bad_request", "message": str(bad)}}, 400)

    def _route(self, path: str, q: dict) -> Reply:
        parts = path.strip("/").split("/")
        if parts[-1] == "candlesticks":
            return self._candles(parts, q)
        if path == "/historical/cutoff":
            return json_reply(self._cutoffs())
        if path in ("/markets", "/historical/markets"):
            return self._listing(path == "/historical/markets", q)
        if len(parts) in (2, 3) and parts[-2] == "markets":
            found = [m for m in self._side(parts[0] == "historical") if m.ticker == parts[-1]]
            return json_reply({"market": found[0].raw}) if found else _not_found()
        return _not_found()

    def _cutoffs(self) -> dict:
        text = _iso(self.cutoff)
        return {
            "market_settled_ts": text,
            "trades_created_ts": text,
            "orders_updated_ts": text,
            "market_positions_last_updated_ts": text,
        }

    def _side(self, historical: bool) -> list[FakeMarket]:
        return [m for m in self.markets if (m.settled_at < self.cutoff) == historical]

    def _listing(self, historical: bool, q: dict) -> Reply:
        limit = _int(q, "limit", 100)
        if not 1 <= limit <= 1000:
            raise ValueError(f"limit {limit} outside 1..1000")
        items = [m.raw for m in self._side(historical) if self._matches(m, q, historical)]
        start = _cursor(q.get("cursor", ""))
        end = start + limit
        cursor = (
            q.get("cursor", "")
            if self.stuck_cursor
            else (format(end, "x") if end < len(items) else "")
        )
        return json_reply({"markets": items[start:end], "cursor": cursor})

    def _matches(self, m: FakeMarket, q: dict, historical: bool) -> bool:
        raw = m.raw
        if not historical and "status" in q:
            if q["status"] not in FILTERS:
                raise ValueError(f"status {q['status']!r}: use one of {', '.join(FILTERS)}")
            if raw["status"] not in FILTERS[q["status"]]:
                return False
        settled = int(m.settled_at.timestamp())
        checks = [
            ("series_ticker", lambda v: raw["event_ticker"].split("-")[0] == v),
            ("event_ticker", lambda v: raw["event_ticker"] == v),
            ("tickers", lambda v: raw["ticker"] in v.split(",")),
            *(
                []
                if historical
                else [
                    ("min_settled_ts", lambda v: settled >= int(v)),
                    ("max_settled_ts", lambda v: settled <= int(v)),
                ]
            ),
        ]
        return all(test(q[name]) for name, test in checks if name in q)

    def _candles(self, parts: list[str], q: dict) -> Reply:
        historical = parts[0] == "historical"
        ticker = parts[2] if historical else parts[3]
        found = [m for m in self._side(historical) if m.ticker == ticker]
        if not found or (
            not historical
            and (parts[0] != "series" or found[0].raw["event_ticker"].split("-")[0] != parts[1])
        ):
            return _not_found()
        start, end, period = _int(q, "start_ts"), _int(q, "end_ts"), _int(q, "period_interval")
        if period not in (1, 60, 1440):
            raise ValueError(f"period_interval {period} not in 1, 60, 1440")
        if (end - start) // (period * 60) + 1 > MAX_CANDLES:
            raise ValueError(f"more than {MAX_CANDLES} candlesticks asked for")
        if period != 60:
            raise ValueError("this fake holds hourly candles only")
        shape = _historical_candle if historical else _live_candle
        candles = [shape(c) for c in found[0].candles if start <= c[0] <= end]
        return json_reply({"ticker": ticker, "candlesticks": candles})


def _not_found() -> Reply:
    return json_reply({"error": {"code": "not_found", "message": "not found"}}, 404)


def _cursor(text: str) -> int:
    try:
        return int(text, 16) if text else 0
    except ValueError:
        raise ValueError(f"cursor {text!r} is not one this listing gave") from None


def _int(q: dict, name: str, default: int | None = None) -> int:
    if name not in q:
        if default is None:
            raise ValueError(f"{name} is required")
        return default
    try:
        return int(q[name])
    except ValueError:
        raise ValueError(f"{name} {q[name]!r} is not an integer") from None


# -- candle shapes --------------------------------------------------------------------------
def _live_candle(c: tuple) -> dict:
    t, close, previous = c
    quote = {
        "open_dollars": "0.4000",
        "low_dollars": "0.3900",
        "high_dollars": "0.6100",
        "close_dollars": "0.5000",
    }
    price = {
        "open_dollars": close,
        "low_dollars": close,
        "high_dollars": close,
        "close_dollars": close,
        "mean_dollars": close,
        "previous_dollars": previous,
        "min_dollars": close,
        "max_dollars": close,
    }
    return {
        "end_period_ts": t,
        "yes_bid": quote,
        "yes_ask": dict(quote),
        "price": price,
        "volume_fp": "0.00" if close is None else "12.00",
        "open_interest_fp": "100.00",
    }


def _historical_candle(c: tuple) -> dict:
    t, close, previous = c
    quote = {"open": "0.4000", "low": "0.3900", "high": "0.6100", "close": "0.5000"}
    price = {
        "open": close,
        "low": close,
        "high": close,
        "close": close,
        "mean": close,
        "previous": previous,
    }
    return {
        "end_period_ts": t,
        "yes_bid": quote,
        "yes_ask": dict(quote),
        "price": price,
        "volume": "0.00" if close is None else "12.00",
        "open_interest": "100.00",
    }


# -- generated markets ------------------------------------------------------------------------
def _market(
    rng: random.Random,
    event: str,
    opened: datetime,
    days: int,
    *,
    result: str | None = None,
    status: str = "finalized",
    market_type: str = "binary",
    ticker: str | None = None,
) -> FakeMarket:
    result = result if result is not None else rng.choice(("yes", "no"))
    closed = opened + timedelta(days=days)
    candles = _candles(rng, opened, closed, result)
    last = next((c[1] for c in reversed(candles) if c[1] is not None), "0.5000")
    return FakeMarket(
        _raw(
            event,
            ticker or f"{event}-T{rng.randint(1, 99)}",
            opened,
            closed,
            result,
            status,
            market_type,
            last,
        ),
        candles,
    )


def _candles(rng: random.Random, opened: datetime, closed: datetime, result: str) -> list:
    """Hourly candles ending on the hour after the opening, through the close: no trade in
    the first three hours, then a walk toward the result with hours without trades."""
    first = (int(opened.timestamp()) // 3600 + 1) * 3600
    p, target = 0.5, 0.97 if result == "yes" else 0.03
    previous: str | None = None
    out: list[tuple[int, str | None, str | None]] = []
    for k, t in enumerate(range(first, int(closed.timestamp()) + 1, 3600)):
        traded = k >= 3 and rng.random() < 0.7
        if traded:
            p = min(0.99, max(0.01, p + 0.1 * (target - p) + rng.gauss(0, 0.02)))
        close = f"{p:.4f}" if traded else None
        out.append((t, close, previous))
        previous = close or previous
    return out


def _raw(
    event: str,
    ticker: str,
    opened: datetime,
    closed: datetime,
    result: str,
    status: str,
    market_type: str,
    last: str,
) -> dict:
    settled = closed + timedelta(hours=2)
    title = f"Will fake indicator {event} be above its threshold?"
    return {
        "ticker": ticker,
        "event_ticker": event,
        "market_type": market_type,
        "title": title,
        "subtitle": "",
        "yes_sub_title": "Above threshold",
        "no_sub_title": "Not above threshold",
        "created_time": _iso(opened - timedelta(days=1)),
        "updated_time": _iso(settled + timedelta(minutes=5)),
        "open_time": _iso(opened),
        "close_time": _iso(closed),
        "expected_expiration_time": _iso(closed),
        "expiration_time": _iso(closed + timedelta(hours=1)),
        "latest_expiration_time": _iso(closed + timedelta(days=7)),
        "settlement_timer_seconds": 3600,
        "status": status,
        "result": result,
        "yes_bid_dollars": "0.0000",
        "yes_bid_size_fp": "0.00",
        "yes_ask_dollars": "1.0000",
        "yes_ask_size_fp": "0.00",
        "no_bid_dollars": "0.0000",
        "no_ask_dollars": "1.0000",
        "last_price_dollars": last,
        "previous_yes_bid_dollars": "0.0000",
        "previous_yes_ask_dollars": "1.0000",
        "previous_price_dollars": last,
        "volume_fp": "10234.00",
        "volume_24h_fp": "0.00",
        "open_interest_fp": "0.00",
        "notional_value_dollars": "1.0000",
        "settlement_value_dollars": "1.0000" if result == "yes" else "0.0000",
        "settlement_ts": _iso(settled),
        "expiration_value": "",
        "settlement_bounds_type": "default",
        "can_close_early": True,
        "early_close_condition": None,
        "strike_type": "greater",
        "floor_strike": 4.25,
        "cap_strike": None,
        "functional_strike": None,
        "custom_strike": None,
        "rules_primary": (
            f"If the fake indicator {event} is above 4.25 at close, the market resolves to Yes."
        ),
        "rules_secondary": "The source is the fake agency's release.",
        "occurrence_datetime": None,
        "fee_waiver_expiration_time": None,
        "mve_collection_ticker": None,
        "price_level_structure": "linear_cent",
        "price_ranges": [{"start": "0.0000", "end": "1.0000", "step": "0.0100"}],
        "is_provisional": False,
        "exchange_index": 0,
    }


def _extras(rng: random.Random, side: str, base: datetime) -> list[FakeMarket]:
    """Markets a loader must skip (scalar, no result, not final, disputed) and a long one."""
    return [
        _market(rng, f"KXFAKE{side}-SCALAR", base, 5, result="scalar", market_type="scalar"),
        _market(rng, f"KXFAKE{side}-VOID", base, 5, result=""),
        _market(rng, f"KXFAKE{side}-DET", base, 5, status="determined"),
        _market(rng, f"KXFAKE{side}-DISP", base, 5, status="disputed"),
        _market(rng, f"KXFAKE{side}-LONG", base - timedelta(days=295), 300),
    ]


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


# -- transports -------------------------------------------------------------------------------
def mock_transport(fake: FakeKalshi, prefix: str = "/trade-api/v2"):
    """An `httpx.MockTransport` answering from `fake` (requests under `prefix`, any host)."""
    return fake_http.mock_transport(fake.answer, prefix)


def serve(fake: FakeKalshi, prefix: str = "/trade-api/v2") -> AbstractContextManager[str]:
    """`fake` over HTTP on 127.0.0.1 (a free port); yields the base URL (…/trade-api/v2)."""
    return fake_http.serve(fake.answer, prefix)
