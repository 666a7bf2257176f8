"""Polymarket's public Gamma, CLOB and Data APIs (late-2026 contract) over an
injected `httpx.Client`.

Listings go through Gamma's `/markets/keyset`: `after_cursor` ← `next_cursor` until an answer
has no `next_cursor` (never inferred from a short page: pages hold at most 100 items whatever
`limit` asks); a cursor that does not advance, or an answer in another shape, is an error
naming the URL. Histories reach back to a market's opening through the Data API's
`/v2/prices-history` (`interval=max`, `bucket_seconds`, cursor paging, a cursor sent twice an
error; a 200 answer with an `error` key is throttling, retried) or stitched CLOB
`startTs..endTs` windows of at most 15 days (`interval=max` is only the last 31 days on the
live CLOB).

Requests go through the shared HTTP layer (`hindcast.http`): every request has a timeout;
429, 5xx, timeouts and dropped connections are retried a bounded number of times with
exponential backoff, honouring `Retry-After` (seconds, or an HTTP date against the
response's `Date`); a Retry-After longer than the policy allows, or the last failure,
raises `PolymarketError` naming the URL. The sleep function is injected so tests never
wait. Paging (Gamma's keyset cursors, the CLOB's and the Data API's cursors) lives here and
nowhere else; a pull passes a `KeysetCache` to keep each listing page as it arrives. This module
returns raw JSON: `parse` turns it into records, once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from hindcast.errors import PolymarketError
from hindcast.http import Outcome, Retrying, RetryPolicy

__all__ = [
    "CLOB_URL",
    "DATA_URL",
    "FIDELITIES",
    "GAMMA_PAGE_LIMIT",
    "GAMMA_URL",
    "History",
    "KeysetCache",
    "KeysetPage",
    "PolymarketClient",
    "PolymarketError",
    "RetryPolicy",
]  # RetryPolicy, PolymarketError: re-exported

GAMMA_URL = "https://gamma-api.polymarket.com"
CLOB_URL = "https://clob.polymarket.com"
DATA_URL = "https://data-api.polymarket.com"
GAMMA_PAGE_LIMIT = 100  # Gamma's maximum `limit` (2026: larger values are clamped silently)
CLOB_WINDOW_SECONDS = 15 * 86400  # the CLOB's longest startTs..endTs window
DATA_BUCKET_SECONDS = 10800  # 3-hour buckets: kept permanently, unbounded window with interval=max
BATCH_TOKENS = 20  # POST /batch-prices-history: at most this many tokens a request
CLOB_LAST_CURSOR = "LTE="  # the CLOB's `next_cursor` on its last page
FIDELITIES = (60, 720, 1440)  # minutes; resolved markets often answer only the coarse ones
DEFAULT_RETRY = (
    RetryPolicy()
)  # 5 attempts, 1 s doubling to 60 s, 30 s timeout; 429/5xx/transport errors


@dataclass(frozen=True)
class History:
    """A token's raw `/prices-history` list and the fidelity (minutes) that produced it."""

    token_id: str
    fidelity: int
    history: list


@dataclass(frozen=True)
class KeysetPage:
    """One page of a keyset listing: its number, the cursor it was asked with ("" for the
    first), its raw items and the cursor of the next page (None on the last)."""

    number: int
    cursor: str
    items: list
    next_cursor: str | None


class KeysetCache(Protocol):
    """Where a keyset listing keeps its pages by number (a pull's work directory)."""

    def keyset_page(self, number: int, cursor: str) -> KeysetPage | None: ...

    def save_keyset_page(self, page: KeysetPage) -> None: ...


class PolymarketClient:
    """Gamma (`/markets/keyset`, `/events/keyset`), CLOB (`/markets`, `/prices-history`,
    `/batch-prices-history`) and Data API (`/v2/prices-history`) reads."""

    def __init__(
        self,
        http: httpx.Client,
        gamma_url: str = GAMMA_URL,
        clob_url: str = CLOB_URL,
        retry: RetryPolicy = DEFAULT_RETRY,
        sleep: Callable[[float], None] = time.sleep,
        data_url: str | None = DATA_URL,
    ):
        self.http = http
        self.gamma_url = gamma_url.rstrip("/")
        self.clob_url = clob_url.rstrip("/")
        self.data_url = (
            data_url.rstrip("/") if data_url else None
        )  # None: no Data API (CLOB windows only)
        self.retry = retry
        self.sleep = sleep

    # -- one request -------------------------------------------------------------------
    def get_json(
        self,
        url: str,
        params: dict | None = None,
        transient=None,
        method: str = "GET",
        body: Any = None,
    ) -> Any:
        """GET (or POST `body`) and decode JSON, retrying transient failures;
        PolymarketError after the last."""
        response = self._get_with_retries(url, params or {}, transient, method, body)
        try:
            return response.json()
        except ValueError as exc:
            raise PolymarketError(str(response.url), f"response is not valid JSON ({exc})") from exc

    def _get_with_retries(
        self, url: str, params: dict, transient=None, method: str = "GET", body: Any = None
    ) -> httpx.Response:
        extra = {"json": body} if body is not None else {}
        outcome = Retrying(self.http, self.retry, self.sleep).request(
            method, url, params=params, transient=transient, **extra
        )
        if outcome.refused_wait is not None:
            raise PolymarketError(
                url,
                f"HTTP {outcome.last.status_code} asks to retry after "
                f"{outcome.refused_wait:g}s, more than the {self.retry.max_delay:g}s allowed",
            )
        if outcome.transient:
            raise _final_error(url, outcome)
        return _raise_for_status(outcome.last)

    # -- Gamma keyset ------------------------------------------------------------------
    def keyset_markets(
        self, params: dict, limit: int = GAMMA_PAGE_LIMIT, cache: KeysetCache | None = None
    ) -> Iterator[KeysetPage]:
        """Pages of `GET /markets/keyset` until an answer has no `next_cursor` (each page from
        `cache` when it holds it). A page whose cursor does not advance (the same cursor, or
        the same first item, twice) raises PolymarketError naming the URL."""
        return self._keyset("markets", params, limit, cache)

    def keyset_events(
        self, params: dict, limit: int = GAMMA_PAGE_LIMIT, cache: KeysetCache | None = None
    ) -> Iterator[KeysetPage]:
        """Pages of `GET /events/keyset` (`{"events": [...], "next_cursor"}`; each
        event nests its markets)."""
        return self._keyset("events", params, limit, cache)

    def _keyset(
        self, kind: str, params: dict, limit: int, cache: KeysetCache | None
    ) -> Iterator[KeysetPage]:
        url, cursor, number, first = f"{self.gamma_url}/{kind}/keyset", "", 0, None
        while True:
            cached = cache.keyset_page(number, cursor) if cache is not None else None
            page = cached or self.keyset_page(url, kind, params, limit, number, cursor)
            head = _first_id(page.items)
            if page.next_cursor == cursor or (head is not None and head == first):
                raise PolymarketError(
                    url,
                    f"the listing does not advance: page {number + 1} "
                    + (
                        "answers the cursor it was sent"
                        if page.next_cursor == cursor
                        else f"starts with item {head} again"
                    ),
                )
            if cache is not None and cached is None:  # a page that does not advance is never cached
                cache.save_keyset_page(page)
            yield page
            if page.next_cursor is None:
                return
            cursor, number, first = page.next_cursor, number + 1, head

    def keyset_page(
        self, url: str, kind: str, params: dict, limit: int, number: int, cursor: str
    ) -> KeysetPage:
        """One keyset answer, its envelope checked (`kind`: the list's key, markets or events)."""
        body = self.get_json(
            url, {**params, "limit": limit, **({"after_cursor": cursor} if cursor else {})}
        )
        where = f"{url} (page {number + 1})"
        if not isinstance(body, dict) or not isinstance(body.get(kind), list):
            shape = (
                type(body).__name__
                if not isinstance(body, dict)
                else f"an object without a {kind} array"
            )
            raise PolymarketError(
                where,
                f'unknown answer shape: expected {{"{kind}": [...], "next_cursor"}}, got {shape}',
            )
        next_cursor = body.get("next_cursor")
        if next_cursor is not None and not isinstance(next_cursor, str):
            raise PolymarketError(where, f"next_cursor {next_cursor!r} is not a string")
        return KeysetPage(number, cursor, body[kind], next_cursor or None)

    # -- CLOB --------------------------------------------------------------------------
    def clob_markets(self, cursor: str = "") -> Iterator[dict]:
        """Items of the CLOB's `GET /markets` envelope, following `next_cursor` to `LTE=`."""
        url = f"{self.clob_url}/markets"
        while cursor != CLOB_LAST_CURSOR:
            envelope = self.get_json(url, {"next_cursor": cursor} if cursor else {})
            if not isinstance(envelope, dict) or not isinstance(envelope.get("data"), list):
                raise PolymarketError(
                    url, f"expected an envelope with a data array (cursor {cursor!r})"
                )
            yield from envelope["data"]
            cursor = envelope.get("next_cursor") or CLOB_LAST_CURSOR

    def data_history(
        self, token_id: str, bucket_seconds: int = DATA_BUCKET_SECONDS, page_size: int | None = None
    ) -> list:
        """The token's whole history from the Data API's `/v2/prices-history` (`interval=max`),
        every page (`pagination.next_cursor`); `[]` when it serves no points (or answers 404).
        A `next_cursor` already sent (the walk does not advance) raises PolymarketError."""
        if self.data_url is None:
            return []
        url, points, sent = f"{self.data_url}/v2/prices-history", list[dict](), set[str]()
        params: dict = {
            "token_id": token_id,
            "interval": "max",
            "bucket_seconds": bucket_seconds,
            **({"limit": page_size} if page_size else {}),
        }
        for number in range(1, 100_001):
            body = self._data_page(url, params)
            if body is None:
                return points
            points += body["data"]
            cursor = body["pagination"].get("next_cursor")
            if not cursor:
                return points
            if cursor in sent:
                raise PolymarketError(
                    url,
                    f"token {token_id}: the history does not advance: page {number} answers "
                    "a next_cursor already sent",
                )
            sent.add(cursor)
            params = {"token_id": token_id, "cursor": cursor}
        raise PolymarketError(
            url, f"token {token_id}: the history does not end after 100,000 pages"
        )

    def _data_page(self, url: str, params: dict) -> dict | None:
        try:
            body = self.get_json(url, params, transient=self._data_transient)
        except PolymarketError as exc:
            if exc.reason.startswith("HTTP 404"):
                return None
            raise
        if (
            not isinstance(body, dict)
            or "error" in body
            or not isinstance(body.get("data"), list)
            or not isinstance(body.get("pagination"), dict)
        ):
            detail = (
                body.get("error")
                if isinstance(body, dict) and "error" in body
                else "unknown answer shape"
            )
            raise PolymarketError(url, f"token {params.get('token_id')}: {detail}")
        return body

    def _data_transient(self, response: httpx.Response) -> bool:
        """The policy's statuses, and a 200 answer `{"error": ...}` (the Data API's throttling)."""
        if self.retry.transient(response):
            return True
        if response.status_code != 200:
            return False
        try:
            body = response.json()
        except ValueError:
            return False
        return isinstance(body, dict) and "error" in body

    def windowed_history(self, token_id: str, start_ts: int, end_ts: int, fidelity: int) -> list:
        """`GET /prices-history` over startTs..endTs in consecutive windows of at most 15 days
        (inclusive bounds: the next window starts one second after the last one ends)."""
        points, start = [], start_ts
        while start <= end_ts:
            stop = min(start + CLOB_WINDOW_SECONDS, end_ts)
            points += self._history_once(token_id, start, stop, fidelity)
            start = stop + 1
        return points

    def batch_history(
        self, token_ids: list[str], start_ts: int, end_ts: int, fidelity: int
    ) -> dict[str, list]:
        """`POST /batch-prices-history` for at most 20 tokens over one ≤ 15-day window."""
        if not 1 <= len(token_ids) <= BATCH_TOKENS or end_ts - start_ts > CLOB_WINDOW_SECONDS:
            raise ValueError(f"a batch holds 1..{BATCH_TOKENS} tokens over at most 15 days")
        url = f"{self.clob_url}/batch-prices-history"
        body = self.get_json(
            url,
            method="POST",
            body={
                "markets": token_ids,
                "start_ts": start_ts,
                "end_ts": end_ts,
                "fidelity": fidelity,
            },
        )
        history = body.get("history") if isinstance(body, dict) else None
        if not isinstance(history, dict) or not all(isinstance(v, list) for v in history.values()):
            raise PolymarketError(url, 'expected {"history": {token: [...]}}')
        return {token: history.get(token, []) for token in token_ids}

    def prices_history(
        self,
        token_id: str,
        start_ts: int | None = None,
        end_ts: int | None = None,
        fidelities: tuple[int, ...] = FIDELITIES,
    ) -> History:
        """The token's history at the finest fidelity that is not empty (empty if none is)."""
        for fidelity in fidelities:
            history = self._history_once(token_id, start_ts, end_ts, fidelity)
            if history:
                return History(token_id, fidelity, history)
        return History(token_id, fidelities[-1], [])

    def _history_once(self, token_id: str, start_ts, end_ts, fidelity: int) -> list:
        url = f"{self.clob_url}/prices-history"
        body = self.get_json(url, _history_params(token_id, start_ts, end_ts, fidelity))
        if not isinstance(body, dict) or not isinstance(body.get("history"), list):
            raise PolymarketError(url, f'token {token_id}: expected {{"history": [...]}}')
        return body["history"]


def _first_id(items: list) -> str | None:
    head = items[0] if items else None
    if isinstance(head, dict):
        return str(head.get("id") or head.get("conditionId") or "") or None
    return None


def _history_params(token_id: str, start_ts, end_ts, fidelity: int) -> dict:
    params = {"market": token_id, "fidelity": fidelity}
    if start_ts is None or end_ts is None:
        return {**params, "interval": "max"}
    return {**params, "startTs": start_ts, "endTs": end_ts}


def _raise_for_status(response: httpx.Response) -> httpx.Response:
    if response.is_success:
        return response
    detail = response.text[:200].strip()
    raise PolymarketError(
        str(response.url), f"HTTP {response.status_code}" + (f": {detail}" if detail else "")
    )


def _final_error(url: str, outcome: Outcome) -> PolymarketError:
    last, attempts = outcome.last, outcome.attempts
    if isinstance(last, httpx.Response):
        return PolymarketError(str(last.url), f"HTTP {last.status_code} after {attempts} attempts")
    kind = "timed out" if isinstance(last, httpx.TimeoutException) else "connection failed"
    return PolymarketError(url, f"{kind} after {attempts} attempts ({type(last).__name__}: {last})")
