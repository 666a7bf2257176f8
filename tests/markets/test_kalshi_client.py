"""Kalshi's traps at the HTTP transport (the shipped fake, hindcast.markets.fake_kalshi, in the
shapes of docs/kalshi-api.md): cursor paging to "", the live/historical split by the cutoff,
fixed-point dollar strings, both candle shapes, a null price.close, the status vocabularies,
429 + Retry-After, a cursor that does not advance, an unknown envelope."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from decimal import Decimal

import httpx
import pytest

from hindcast.errors import KalshiError, MalformedMarket
from hindcast.http import RetryPolicy
from hindcast.markets.fake_kalshi import FakeKalshi, Reply, json_reply, mock_transport
from hindcast.markets.kalshi import KalshiClient, windows
from hindcast.markets.kalshi_parse import parse_candles, parse_market
from hindcast.markets.prices import price_at
from hindcast.timeutil import from_unix

BASE = "https://external-api.kalshi.com/trade-api/v2"
UTC = timezone.utc


class Sleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def fake() -> FakeKalshi:
    return FakeKalshi.generate(live=12, historical=9)


def make_client(fake: FakeKalshi, sleeps=None, page_limit: int = 5) -> KalshiClient:
    http = httpx.Client(transport=mock_transport(fake))
    return KalshiClient(
        http,
        BASE,
        RetryPolicy(attempts=3, base_delay=0.5, max_delay=30),
        Sleeps() if sleeps is None else sleeps,
        page_limit,
    )


def tickers(pages) -> list[str]:
    return [m["ticker"] for page in pages for m in page]


def listing_requests(fake: FakeKalshi, path: str) -> list[dict]:
    return [dict(q) for p, q in fake.requests if p == path]


# -- paging ------------------------------------------------------------------------------------
def test_listing_follows_the_cursor_until_it_comes_back_empty(fake):
    client = make_client(fake, page_limit=5)
    got = tickers(client.settled_markets())
    live = [m.ticker for m in fake.markets if m.settled_at >= fake.cutoff]
    assert got == live and len(live) == 17  # 12 + scalar, void, determined, disputed, long
    asked = listing_requests(fake, "/markets")
    assert len(asked) == 4 and "cursor" not in asked[0] and all("cursor" in q for q in asked[1:])


def test_a_short_page_with_a_cursor_is_not_the_end(fake):
    live = [m.raw for m in fake.markets if m.settled_at >= fake.cutoff]
    fake.faults["/markets"] = [json_reply({"markets": live[:2], "cursor": format(2, "x")})]
    got = tickers(make_client(fake, page_limit=5).settled_markets())
    assert got == [m["ticker"] for m in live]


def test_a_cursor_that_comes_back_again_is_an_error_naming_the_url(fake):
    fake.stuck_cursor = True
    fake.faults["/markets"] = [json_reply({"markets": [], "cursor": "abc"})]
    with pytest.raises(KalshiError) as err:
        tickers(make_client(fake).settled_markets())
    assert f"{BASE}/markets" in str(err.value) and "does not advance" in str(err.value)
    assert (
        len(listing_requests(fake, "/markets")) == 2
    )  # asked with "abc" once, got "abc" back: stop


def test_a_new_cursor_on_the_same_page_again_is_an_error_naming_the_url(fake):
    live = [m.raw for m in fake.markets if m.settled_at >= fake.cutoff]
    fake.faults["/markets"] = [
        json_reply({"markets": live[:5], "cursor": "c1"}),
        json_reply({"markets": live[:5], "cursor": "c2"}),
    ]
    with pytest.raises(KalshiError) as err:
        tickers(make_client(fake).settled_markets())
    assert f"{BASE}/markets" in str(err.value) and "does not advance" in str(err.value)


@pytest.mark.parametrize(
    "body",
    [
        {"data": [], "next_cursor": ""},
        [],
        {"markets": [], "cursor": None},
        {"markets": {}, "cursor": ""},
    ],
    ids=["other keys", "array", "null cursor", "not a list"],
)
def test_an_unknown_envelope_is_an_error_naming_the_url(fake, body):
    fake.faults["/historical/markets"] = [json_reply(body)]
    with pytest.raises(KalshiError) as err:
        tickers(make_client(fake).historical_markets())
    assert f"{BASE}/historical/markets" in str(err.value) and "unknown envelope" in str(err.value)


# -- the live / historical partition ----------------------------------------------------------
def test_the_cutoff_splits_markets_between_live_and_historical(fake):
    client = make_client(fake)
    cutoff = client.cutoff()
    assert cutoff.market_settled == datetime(2026, 9, 1, tzinfo=UTC)
    live, historical = tickers(client.settled_markets()), tickers(client.historical_markets())
    assert not set(live) & set(historical)
    assert all(fake.market(t).settled_at < cutoff.market_settled for t in historical)
    assert all(fake.market(t).settled_at >= cutoff.market_settled for t in live)


def test_a_historical_market_has_no_live_candles_and_the_client_asks_the_historical_endpoint(fake):
    client = make_client(fake)
    old = next(m for m in fake.markets if m.settled_at < fake.cutoff)
    start, end = int(old.candles[0][0]) - 3600, int(old.candles[-1][0])
    with pytest.raises(KalshiError, match="HTTP 404"):
        client.candles(old.ticker, old.raw["event_ticker"], start, end, historical=False)
    candles = client.candles(old.ticker, old.raw["event_ticker"], start, end, historical=True)
    assert [c["end_period_ts"] for c in candles] == [c[0] for c in old.candles]
    assert fake.requests[-1][0] == f"/historical/markets/{old.ticker}/candlesticks"


def test_live_candles_are_asked_under_the_series_of_the_event(fake):
    client = make_client(fake)
    new = next(m for m in fake.markets if m.settled_at >= fake.cutoff)
    client.candles(
        new.ticker, new.raw["event_ticker"], new.candles[0][0], new.candles[-1][0], historical=False
    )
    series = new.raw["event_ticker"].split("-")[0]
    path, query = fake.requests[-1]
    assert path == f"/series/{series}/markets/{new.ticker}/candlesticks"
    assert dict(query)["period_interval"] == "60" and "include_latest_before_start" not in dict(
        query
    )


def test_candle_windows_hold_at_most_5000_candles_without_gap_or_overlap():
    start, end = 1_700_000_000, 1_700_000_000 + 3600 * 12_345
    parts = windows(start, end)
    assert parts[0][0] == start and parts[-1][1] == end
    assert all(b[0] == a[1] + 1 for a, b in zip(parts, parts[1:]))
    ends = [t for t in range(start, end + 1, 3600)]
    assert sum(1 for t in ends for a, b in parts if a <= t <= b) == len(ends)
    assert all(sum(1 for t in ends if a <= t <= b) <= 5000 for a, b in parts)


# -- status vocabularies ----------------------------------------------------------------------
def test_the_listing_filters_with_settled_and_the_answers_say_finalized(fake):
    client = make_client(fake)
    statuses = {m["status"] for page in client.settled_markets() for m in page}
    assert listing_requests(fake, "/markets")[0]["status"] == "settled"
    assert "finalized" in statuses and "settled" not in statuses
    answer = fake.answer("/markets", [("status", "finalized")])
    assert answer.status == 400  # the answer vocabulary is not a filter value


def test_only_finalized_binary_yes_no_markets_are_read_the_rest_skipped_by_reason(fake):
    from hindcast.errors import MarketSkipped

    reasons = {}
    for m in fake.markets:
        try:
            parse_market(m.raw, historical=False)
        except MarketSkipped as skip:
            reasons[m.ticker.split("-")[1]] = skip.reason
    assert reasons == {
        "SCALAR": "not binary (market_type 'scalar')",
        "VOID": "not a yes/no result (result '')",
        "DET": "not finalized (status 'determined')",
        "DISP": "result may still change (status 'disputed')",
    }


# -- fixed-point strings and candle shapes ------------------------------------------------------
def test_market_objects_carry_fixed_point_strings_and_no_integer_price_field(fake):
    raw = fake.markets[0].raw
    assert {"yes_bid", "yes_ask", "last_price", "volume", "open_interest"} & set(raw) == set()
    assert isinstance(raw["last_price_dollars"], str) and isinstance(raw["volume_fp"], str)
    assert parse_market(raw, historical=False).parsed.market.volume == float(
        Decimal(raw["volume_fp"])
    )


def test_a_price_that_is_a_number_not_a_fixed_point_string_is_refused():
    candle = {"end_period_ts": 1_700_000_000, "price": {"close": 42, "previous": None}}
    with pytest.raises(MalformedMarket, match="not a fixed-point string"):
        parse_candles("kalshi:X", [candle], historical=True)


def test_each_side_reads_its_own_candle_shape_and_refuses_the_other(fake):
    client = make_client(fake)
    new = next(m for m in fake.markets if m.settled_at >= fake.cutoff)
    old = next(m for m in fake.markets if m.settled_at < fake.cutoff)
    live = client.candles(
        new.ticker, new.raw["event_ticker"], new.candles[0][0], new.candles[-1][0], False
    )
    hist = client.candles(
        old.ticker, old.raw["event_ticker"], old.candles[0][0], old.candles[-1][0], True
    )
    assert "close_dollars" in live[0]["price"] and "volume_fp" in live[0]
    assert (
        "close" in hist[0]["price"]
        and "volume" in hist[0]
        and "close_dollars" not in hist[0]["price"]
    )
    assert parse_candles("kalshi:a", live, historical=False) and parse_candles(
        "kalshi:b", hist, historical=True
    )
    with pytest.raises(MalformedMarket, match="live candle"):
        parse_candles("kalshi:b", hist, historical=False)
    with pytest.raises(MalformedMarket, match="historical candle"):
        parse_candles("kalshi:a", live, historical=True)


def test_a_null_close_falls_back_to_previous_and_no_trade_yet_gives_no_point(fake):
    client = make_client(fake)
    new = next(m for m in fake.markets if m.settled_at >= fake.cutoff)
    raw = client.candles(
        new.ticker, new.raw["event_ticker"], new.candles[0][0], new.candles[-1][0], False
    )
    points = {int(p.t.timestamp()): p.p for p in parse_candles("kalshi:x", raw, historical=False)}
    null_close = [
        c
        for c in raw
        if c["price"]["close_dollars"] is None and c["price"]["previous_dollars"] is not None
    ]
    untraded = [
        c
        for c in raw
        if c["price"]["close_dollars"] is None and c["price"]["previous_dollars"] is None
    ]
    assert null_close and untraded  # the fake has both kinds
    for c in null_close:
        assert points[c["end_period_ts"]] == float(Decimal(c["price"]["previous_dollars"]))
    assert not {c["end_period_ts"] for c in untraded} & set(points)
    traded = [c for c in raw if c["price"]["close_dollars"] is not None]
    assert all(
        points[c["end_period_ts"]] == float(Decimal(c["price"]["close_dollars"])) for c in traded
    )


def test_price_at_t0_is_the_last_candle_that_closed_strictly_before_t0():
    def candle(t, close):
        return {"end_period_ts": t, "price": {"close_dollars": close, "previous_dollars": None}}

    base = 1_780_000_000 - 1_780_000_000 % 3600
    points = parse_candles(
        "kalshi:x",
        [candle(base, "0.3100"), candle(base + 3600, "0.4200"), candle(base + 7200, "0.5300")],
        historical=False,
    )
    assert (
        price_at(points, from_unix(base + 3600)).p == 0.31
    )  # t0 exactly on a close: that candle is out
    assert price_at(points, from_unix(base + 3601)).p == 0.42
    assert price_at(points, from_unix(base)) is None


# -- retries ------------------------------------------------------------------------------------
def test_429_with_retry_after_is_waited_for_then_asked_again(fake):
    sleeps = Sleeps()
    fake.faults["/historical/cutoff"] = [Reply(429, b"slow down", {"Retry-After": "7"})]
    cutoff = make_client(fake, sleeps).cutoff()
    assert cutoff.market_settled == fake.cutoff and sleeps == [7.0]
    assert [p for p, _ in fake.requests] == ["/historical/cutoff", "/historical/cutoff"]


def test_a_retry_after_beyond_the_policy_is_an_error_naming_the_url(fake):
    fake.faults["/historical/cutoff"] = [Reply(429, b"", {"Retry-After": "3600"})]
    with pytest.raises(KalshiError, match="retry after 3600s") as err:
        make_client(fake).cutoff()
    assert f"{BASE}/historical/cutoff" in str(err.value)


def test_the_fake_answers_json_in_the_documented_cutoff_shape(fake):
    body = json.loads(fake.answer("/historical/cutoff", []).body)
    assert set(body) == {
        "market_settled_ts",
        "trades_created_ts",
        "orders_updated_ts",
        "market_positions_last_updated_ts",
    }
