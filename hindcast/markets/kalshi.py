"""Kalshi's public market-data API over an injected `httpx.Client` (docs/kalshi-api.md).

No authentication is needed for market data. Requests go through the shared HTTP layer
(`hindcast.http`): a timeout on every request; 429, 5xx, timeouts and dropped connections
retried a bounded number of times with backoff, honouring `Retry-After`. A request that fails
for good, or answers a shape this module does not know, raises `KalshiError` naming the URL.

What this module knows of the API, and nothing else does:
- listings page by `cursor` until the answer's `cursor` is the empty string `""`; a cursor
  that comes back again (the listing does not advance) is an error, never an end;
- `GET /historical/cutoff` splits the data: a market settled before `market_settled_ts`
  exists only under `/historical/markets` (and its candles under
  `/historical/markets/{ticker}/candlesticks`); the live `/markets` holds the rest;
- the status *filter* is `settled`; answers carry `finalized` (and others) instead;
- candles are asked for in windows of at most `MAX_CANDLES` periods (a limit reported by
  third-party clients, not by Kalshi's docs: unconfirmed), never with
  `include_latest_before_start` (its synthetic candle projects a price from outside the window).
This module returns raw JSON objects; `kalshi_parse` turns them into records, once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx

from hindcast.errors import KalshiError
from hindcast.http import Outcome, Retrying, RetryPolicy
from hindcast.timeutil import parse_utc

__all__ = [
    "KALSHI_URL",
    "MAX_CANDLES",
    "PAGE_LIMIT",
    "PERIOD_MINUTES",
    "Cutoff",
    "KalshiClient",
    "KalshiError",
    "series_of",
]

KALSHI_URL = "https://external-api.kalshi.com/trade-api/v2"  # the SDK's default host
PAGE_LIMIT = 1000  # `limit` ≤ 1000 on /markets
PERIOD_MINUTES = 60  # candle width asked for: one of 1, 60, 1440
MAX_CANDLES = 5000  # candles per request (third-party clients report a 400 beyond: unconfirmed)
SETTLED_FILTER = "settled"  # the status *filter* value; answers say "finalized"
DEFAULT_RETRY = RetryPolicy()


@dataclass(frozen=True)
class Cutoff:
    """`GET /historical/cutoff`: markets settled before `market_settled` live under /historical."""

    market_settled: datetime

    def historical(self, settled_at: datetime) -> bool:
        return settled_at < self.market_settled


def series_of(event_ticker: str) -> str:
    """The series of an event: its ticker up to the first "-" (KXFED-26SEP → KXFED). Kalshi's
    market objects carry no series ticker; this convention is what clients use (unconfirmed)."""
    return event_ticker.split("-", 1)[0]


class KalshiClient:
    """Reads of the live and the historical market data of one Kalshi host."""

    def __init__(
        self,
        http: httpx.Client,
        base_url: str = KALSHI_URL,
        retry: RetryPolicy = DEFAULT_RETRY,
        sleep: Callable[[float], None] = time.sleep,
        page_limit: int = PAGE_LIMIT,
    ):
        self.http, self.base_url, self.retry, self.sleep = http, base_url.rstrip("/"), retry, sleep
        self.page_limit = page_limit

    # -- one request -------------------------------------------------------------------------
    def get_json(self, path: str, params: dict | None = None) -> Any:
        """GET `base_url + path` and decode JSON, retrying transient failures;
        KalshiError after the last."""
        url = self.base_url + path
        outcome = Retrying(self.http, self.retry, self.sleep).request(
            "GET", url, params=params or {}
        )
        response = _settled_response(url, outcome, self.retry)
        try:
            return response.json()
        except ValueError as exc:
            raise KalshiError(str(response.url), f"response is not valid JSON ({exc})") from exc

    # -- the partition -----------------------------------------------------------------------
    def cutoff(self) -> Cutoff:
        path = "/historical/cutoff"
        body = self.get_json(path)
        try:
            return Cutoff(parse_utc(body["market_settled_ts"]))
        except (TypeError, KeyError, ValueError, AttributeError) as exc:
            raise KalshiError(
                self.base_url + path,
                f'expected {{"market_settled_ts": RFC 3339, …}}, got {body!r:.120}',
            ) from exc

    # -- listings ----------------------------------------------------------------------------
    def settled_markets(self, filters: dict | None = None) -> Iterator[list]:
        """Pages of live `GET /markets?status=settled` (answers say
        `finalized`, `determined`, …)."""
        return self._cursor_pages("/markets", {**(filters or {}), "status": SETTLED_FILTER})

    def historical_markets(self, filters: dict | None = None) -> Iterator[list]:
        """Pages of `GET /historical/markets` (it takes no status filter:
        every status comes back)."""
        return self._cursor_pages("/historical/markets", dict(filters or {}))

    def _cursor_pages(self, path: str, params: dict) -> Iterator[list]:
        """Each page's `markets`, following `cursor` until it comes back as "". A cursor that
        comes back again, or a page that starts with the previous page's first market, is a
        listing that does not advance: KalshiError naming the URL (never a loop, never an end)."""
        cursor, seen, first = "", set(), None
        while True:
            asked = cursor
            body = self.get_json(
                path, {**params, "limit": self.page_limit, **({"cursor": asked} if asked else {})}
            )
            items, cursor = _market_page(self.base_url + path, body, asked)
            head = _first_ticker(items)
            if head is not None and head == first:
                raise KalshiError(
                    self.base_url + path,
                    f"the page at cursor {asked!r} starts again with {head}: "
                    "the listing does not advance",
                )
            yield items
            if cursor == "":
                return
            if cursor in seen:
                raise KalshiError(
                    self.base_url + path,
                    f"the cursor {cursor!r} came back again: the listing does "
                    "not advance (stopped rather than loop or end early)",
                )
            seen.add(cursor)
            first = head

    # -- candles -----------------------------------------------------------------------------
    def candles(
        self, ticker: str, event_ticker: str, start_ts: int, end_ts: int, historical: bool
    ) -> list:
        """Every raw candle of [start_ts, end_ts] (unix s), window by window, oldest first:
        the live or the historical endpoint (the shapes differ; `kalshi_parse` reads both)."""
        path = (
            f"/historical/markets/{ticker}/candlesticks"
            if historical
            else f"/series/{series_of(event_ticker)}/markets/{ticker}/candlesticks"
        )
        candles = []
        for start, end in windows(start_ts, end_ts):
            body = self.get_json(
                path, {"start_ts": start, "end_ts": end, "period_interval": PERIOD_MINUTES}
            )
            candles += _candle_list(self.base_url + path, body, ticker)
        return candles


def windows(
    start_ts: int, end_ts: int, period: int = PERIOD_MINUTES * 60, most: int = MAX_CANDLES
) -> list[tuple[int, int]]:
    """[start, end] cut into consecutive windows of at most `most` periods, neither gap nor overlap
    (window k asks for the candle ends in [start_k, end_k]; the next starts one second later)."""
    span, out, start = (
        period * (most - 1),
        [],
        start_ts,
    )  # `most` candle ends fit in [start, start + span]
    while True:
        end = min(start + span, end_ts)
        out.append((start, end))
        if end >= end_ts:
            return out
        start = end + 1


def _market_page(url: str, body: object, cursor: str) -> tuple[list, str]:
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("markets"), list)
        or not isinstance(body.get("cursor"), str)
    ):
        shape = sorted(body) if isinstance(body, dict) else type(body).__name__
        raise KalshiError(
            url,
            f'unknown envelope at cursor {cursor!r}: expected {{"markets": [...], '
            f'"cursor": "…"}}, got {shape}',
        )
    return body["markets"], body["cursor"]


def _first_ticker(items: list) -> str | None:
    head = items[0] if items else None
    return head.get("ticker") if isinstance(head, dict) else None


def _candle_list(url: str, body: object, ticker: str) -> list:
    if not isinstance(body, dict) or not isinstance(body.get("candlesticks"), list):
        shape = sorted(body) if isinstance(body, dict) else type(body).__name__
        raise KalshiError(
            url,
            f'{ticker}: unknown envelope: expected {{"ticker", "candlesticks": [...]}}, got '
            f"{shape}",
        )
    return body["candlesticks"]


def _settled_response(url: str, outcome: Outcome, retry: RetryPolicy) -> httpx.Response:
    last = outcome.last
    if outcome.refused_wait is not None and isinstance(last, httpx.Response):
        raise KalshiError(
            url,
            f"HTTP {last.status_code} asks to retry after {outcome.refused_wait:g}s, "
            f"more than the {retry.max_delay:g}s allowed",
        )
    if isinstance(last, httpx.Response) and not outcome.transient and last.is_success:
        return last
    if isinstance(last, httpx.Response):
        detail = "" if outcome.transient else last.text[:200].strip()
        tries = f" after {outcome.attempts} attempts" if outcome.transient else ""
        raise KalshiError(
            str(last.url), f"HTTP {last.status_code}{tries}" + (f": {detail}" if detail else "")
        )
    kind = "timed out" if isinstance(last, httpx.TimeoutException) else "connection failed"
    raise KalshiError(
        url, f"{kind} after {outcome.attempts} attempts ({type(last).__name__}: {last})"
    )
