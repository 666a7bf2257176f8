"""Polymarket's public Gamma and CLOB APIs over an injected `httpx.Client`.

Requests go through the shared HTTP layer (`hindcast.http`): every request has a timeout;
429, 5xx, timeouts and dropped connections are retried a bounded number of times with
exponential backoff, honouring `Retry-After` (seconds, or an HTTP date against the
response's `Date`); a Retry-After longer than the policy allows, or the last failure,
raises `PolymarketError` naming the URL. The sleep function is injected so tests never
wait. Paging (Gamma's offsets, the CLOB's cursors) lives here and nowhere else; a pull
passes a `PageCache` to keep each page as it arrives. This module returns raw JSON:
`parse` turns it into records, once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from hindcast.errors import PolymarketError
from hindcast.http import Outcome, Retrying, RetryPolicy

__all__ = ["CLOB_URL", "FIDELITIES", "GAMMA_PAGE_LIMIT", "GAMMA_URL", "History", "Page", "PageCache",
           "PolymarketClient", "PolymarketError", "RetryPolicy"]  # RetryPolicy, PolymarketError: re-exported

GAMMA_URL = "https://gamma-api.polymarket.com"
CLOB_URL = "https://clob.polymarket.com"
GAMMA_PAGE_LIMIT = 500  # Gamma's maximum `limit`
CLOB_LAST_CURSOR = "LTE="  # the CLOB's `next_cursor` on its last page
FIDELITIES = (60, 720, 1440)  # minutes; resolved markets often answer only the coarse ones
DEFAULT_RETRY = RetryPolicy()  # 5 attempts, 1 s doubling to 60 s, 30 s timeout; 429/5xx/transport errors


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


class PageCache(Protocol):
    """Where a listing keeps its pages by offset (a pull's work directory): a page it
    holds is read back instead of fetched; a fetched page is saved as it arrives."""

    def page(self, offset: int) -> list | None: ...

    def save_page(self, offset: int, items: list) -> None: ...


class PolymarketClient:
    """Gamma (`/markets`, `/events`) and CLOB (`/markets`, `/prices-history`) reads."""

    def __init__(self, http: httpx.Client, gamma_url: str = GAMMA_URL, clob_url: str = CLOB_URL,
                 retry: RetryPolicy = DEFAULT_RETRY, sleep: Callable[[float], None] = time.sleep):
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
        outcome = Retrying(self.http, self.retry, self.sleep).request("GET", url, params=params)
        if outcome.refused_wait is not None:
            raise PolymarketError(url, f"HTTP {outcome.last.status_code} asks to retry after "
                                       f"{outcome.refused_wait:g}s, more than the {self.retry.max_delay:g}s allowed")
        if outcome.transient:
            raise _final_error(url, outcome)
        return _raise_for_status(outcome.last)

    # -- Gamma -------------------------------------------------------------------------
    def gamma_markets(self, params: dict | None = None, limit: int = GAMMA_PAGE_LIMIT,
                      offset: int = 0, cache: PageCache | None = None) -> Iterator[Page]:
        """Pages of `GET /markets` from `offset` on, until a page is shorter than `limit`
        (each page from `cache` when it holds it)."""
        return self._offset_pages(f"{self.gamma_url}/markets", params or {}, limit, offset, cache)

    def gamma_events(self, params: dict | None = None, limit: int = GAMMA_PAGE_LIMIT,
                     offset: int = 0, cache: PageCache | None = None) -> Iterator[Page]:
        """Pages of `GET /events` (each event nests its `markets`)."""
        return self._offset_pages(f"{self.gamma_url}/events", params or {}, limit, offset, cache)

    def gamma_page(self, url: str, params: dict, limit: int, offset: int) -> Page:
        items = self.get_json(url, {**params, "limit": limit, "offset": offset})
        if not isinstance(items, list):
            raise PolymarketError(url, f"expected a JSON array at offset {offset}, got {type(items).__name__}")
        return Page(offset, items)

    def _offset_pages(self, url: str, params: dict, limit: int, offset: int,
                      cache: PageCache | None) -> Iterator[Page]:
        while True:
            page = self._cached_page(url, params, limit, offset, cache)
            yield page
            if len(page.items) < limit:
                return
            offset += limit

    def _cached_page(self, url: str, params: dict, limit: int, offset: int, cache: PageCache | None) -> Page:
        items = cache.page(offset) if cache is not None else None
        if items is not None:
            return Page(offset, items)
        page = self.gamma_page(url, params, limit, offset)
        if cache is not None:
            cache.save_page(offset, page.items)
        return page

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


def _raise_for_status(response: httpx.Response) -> httpx.Response:
    if response.is_success:
        return response
    detail = response.text[:200].strip()
    raise PolymarketError(str(response.url), f"HTTP {response.status_code}" + (f": {detail}" if detail else ""))


def _final_error(url: str, outcome: Outcome) -> PolymarketError:
    last, attempts = outcome.last, outcome.attempts
    if isinstance(last, httpx.Response):
        return PolymarketError(str(last.url), f"HTTP {last.status_code} after {attempts} attempts")
    kind = "timed out" if isinstance(last, httpx.TimeoutException) else "connection failed"
    return PolymarketError(url, f"{kind} after {attempts} attempts ({type(last).__name__}: {last})")
