"""Polymarket's public Gamma and CLOB APIs over an injected `httpx.Client`.

Every request has a timeout; 429, 5xx, timeouts and dropped connections are retried a
bounded number of times with exponential backoff, honouring `Retry-After`; the last
failure raises `PolymarketError` naming the URL. The sleep function is injected so tests
never wait. This module returns raw JSON: `parse` turns it into records, once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from hindcast.errors import PolymarketError

GAMMA_URL = "https://gamma-api.polymarket.com"
CLOB_URL = "https://clob.polymarket.com"
GAMMA_PAGE_LIMIT = 500  # Gamma's maximum `limit`
CLOB_LAST_CURSOR = "LTE="  # the CLOB's `next_cursor` on its last page
FIDELITIES = (60, 720, 1440)  # minutes; resolved markets often answer only the coarse ones


@dataclass(frozen=True)
class RetryPolicy:
    """At most `attempts` tries; waits base·2^k seconds (≤ max_delay) or what Retry-After says."""

    attempts: int = 5
    base_delay: float = 1.0
    max_delay: float = 60.0
    timeout: float = 30.0

    def backoff(self, attempt: int) -> float:
        return min(self.base_delay * 2**attempt, self.max_delay)


@dataclass(frozen=True)
class Page:
    """One page of a paginated listing: where it starts and its raw items."""

    offset: int
    items: list


@dataclass(frozen=True)
class History:
    """A token's raw `/prices-history` list and the fidelity (minutes) that produced it."""

    token_id: str
    fidelity: int
    history: list


_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class PolymarketClient:
    """Gamma (`/markets`, `/events`) and CLOB (`/markets`, `/prices-history`) reads."""

    def __init__(self, http: httpx.Client, gamma_url: str = GAMMA_URL, clob_url: str = CLOB_URL,
                 retry: RetryPolicy = RetryPolicy(), sleep: Callable[[float], None] = time.sleep):
        self.http = http
        self.gamma_url = gamma_url.rstrip("/")
        self.clob_url = clob_url.rstrip("/")
        self.retry = retry
        self.sleep = sleep

    # -- one request -------------------------------------------------------------------
    def get_json(self, url: str, params: dict | None = None) -> Any:
        """GET and decode JSON, retrying transient failures; PolymarketError after the last."""
        response = self._get_with_retries(url, params or {})
        try:
            return response.json()
        except ValueError as exc:
            raise PolymarketError(str(response.url), f"response is not valid JSON ({exc})") from exc

    def _get_with_retries(self, url: str, params: dict) -> httpx.Response:
        for attempt in range(self.retry.attempts):
            last = attempt == self.retry.attempts - 1
            outcome = self._try_once(url, params)
            if isinstance(outcome, httpx.Response) and outcome.status_code not in _RETRY_STATUS:
                return _raise_for_status(outcome)
            if last:
                raise _final_error(url, outcome, self.retry.attempts)
            self.sleep(self._delay(url, outcome, attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def _try_once(self, url: str, params: dict) -> httpx.Response | httpx.TransportError:
        try:
            return self.http.get(url, params=params, timeout=self.retry.timeout)
        except (httpx.TimeoutException, httpx.NetworkError) as exc:
            return exc

    def _delay(self, url: str, outcome, attempt: int) -> float:
        asked = _retry_after(outcome) if isinstance(outcome, httpx.Response) else None
        if asked is None:
            return self.retry.backoff(attempt)
        if asked > self.retry.max_delay:
            raise PolymarketError(url, f"HTTP {outcome.status_code} asks to retry after {asked:g}s, "
                                       f"more than the {self.retry.max_delay:g}s allowed")
        return asked

    # -- Gamma -------------------------------------------------------------------------
    def gamma_markets(self, params: dict | None = None, limit: int = GAMMA_PAGE_LIMIT,
                      offset: int = 0) -> Iterator[Page]:
        """Pages of `GET /markets` from `offset` on, until a page is shorter than `limit`."""
        return self._offset_pages(f"{self.gamma_url}/markets", params or {}, limit, offset)

    def gamma_events(self, params: dict | None = None, limit: int = GAMMA_PAGE_LIMIT,
                     offset: int = 0) -> Iterator[Page]:
        """Pages of `GET /events` (each event nests its `markets`)."""
        return self._offset_pages(f"{self.gamma_url}/events", params or {}, limit, offset)

    def gamma_page(self, url: str, params: dict, limit: int, offset: int) -> Page:
        items = self.get_json(url, {**params, "limit": limit, "offset": offset})
        if not isinstance(items, list):
            raise PolymarketError(url, f"expected a JSON array at offset {offset}, got {type(items).__name__}")
        return Page(offset, items)

    def _offset_pages(self, url: str, params: dict, limit: int, offset: int) -> Iterator[Page]:
        while True:
            page = self.gamma_page(url, params, limit, offset)
            yield page
            if len(page.items) < limit:
                return
            offset += limit

    # -- CLOB --------------------------------------------------------------------------
    def clob_markets(self, cursor: str = "") -> Iterator[dict]:
        """Items of the CLOB's `GET /markets` envelope, following `next_cursor` to `LTE=`."""
        url = f"{self.clob_url}/markets"
        while cursor != CLOB_LAST_CURSOR:
            envelope = self.get_json(url, {"next_cursor": cursor} if cursor else {})
            if not isinstance(envelope, dict) or not isinstance(envelope.get("data"), list):
                raise PolymarketError(url, f"expected an envelope with a data array (cursor {cursor!r})")
            yield from envelope["data"]
            cursor = envelope.get("next_cursor") or CLOB_LAST_CURSOR

    def prices_history(self, token_id: str, start_ts: int | None = None, end_ts: int | None = None,
                       fidelities: tuple[int, ...] = FIDELITIES) -> History:
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
            raise PolymarketError(url, f"token {token_id}: expected {{\"history\": [...]}}")
        return body["history"]


def _history_params(token_id: str, start_ts, end_ts, fidelity: int) -> dict:
    params = {"market": token_id, "fidelity": fidelity}
    if start_ts is None or end_ts is None:
        return {**params, "interval": "max"}
    return {**params, "startTs": start_ts, "endTs": end_ts}


def _retry_after(response: httpx.Response) -> float | None:
    """Retry-After in seconds (the delta-seconds form; an HTTP date falls back to backoff)."""
    value = response.headers.get("Retry-After", "").strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _raise_for_status(response: httpx.Response) -> httpx.Response:
    if response.is_success:
        return response
    detail = response.text[:200].strip()
    raise PolymarketError(str(response.url), f"HTTP {response.status_code}" + (f": {detail}" if detail else ""))


def _final_error(url: str, outcome, attempts: int) -> PolymarketError:
    if isinstance(outcome, httpx.Response):
        return PolymarketError(str(outcome.url), f"HTTP {outcome.status_code} after {attempts} attempts")
    kind = "timed out" if isinstance(outcome, httpx.TimeoutException) else "connection failed"
    return PolymarketError(url, f"{kind} after {attempts} attempts ({type(outcome).__name__}: {outcome})")
