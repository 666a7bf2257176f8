"""Manifold's public read API (v0) over an injected `httpx.Client` (manifold-api.md).

No authentication. Requests go through the shared HTTP layer (`hindcast.http`): a timeout on
every request; 429 (honouring `Retry-After`), 5xx, timeouts and dropped connections retried a
bounded number of times. Every attempt first waits for the `Pacer`: at most 500 requests in any
60 seconds (the documented per-IP limit). A request that fails for good, or answers a shape
this module does not know (a non-JSON body from a proxy included), raises `ManifoldError`
naming the URL; `unreachable` says no answer came at all (the pull's breaker stops on it).

What this module knows of the API, and nothing else does:
- times are integer milliseconds; unknown query parameters are a 400 (send only known ones);
- resolved markets are listed by `GET /v0/search-markets?sort=newest&filter=resolved`, newest
  created first, paged by `beforeTime` (a strict `createdTime <` bound). Paging with the
  oldest `createdTime` of a page + 1 and de-duplicating by id loses no market sharing the
  boundary millisecond; the walk ends on a page that adds no new id (never on a short page);
  a *full* page that adds none (ties filling a page) is asked again with a larger `limit`,
  and past the largest it cannot advance: an error;
- `filter=resolved` includes CANCEL and MKT and every outcome type: the parser decides;
- a market's bets come from `GET /v0/bets?contractId=…`, newest first, paged the same exact
  way (`before=<bet id>` would skip bets sharing the boundary millisecond); `limit` is sent
  explicitly (docs say 1000 at most, the server 10,000);
- the description is only on the full market, `GET /v0/market/{id}`.
This module returns raw JSON; `manifold_parse` turns it into records, once.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from hindcast.errors import ManifoldError
from hindcast.http import Outcome, Retrying, RetryPolicy

__all__ = ["MANIFOLD_URL", "PAGE_LIMIT", "ManifoldClient", "ManifoldError", "Pacer"]

MANIFOLD_URL = "https://api.manifold.markets/v0"
PAGE_LIMIT = 1000  # `limit` ≤ 1000 on /search-markets (docs and source); sent on /bets too
PER_MINUTE = 500  # requests per minute per IP (docs)


class Pacer:
    """At most `per_minute` requests in any 60-second window: `wait()` before each request
    sleeps until the oldest of the last `per_minute` is a minute old."""

    def __init__(
        self,
        per_minute: int = PER_MINUTE,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if per_minute < 1:
            raise ValueError(f"{per_minute} requests a minute: at least 1")
        self.per_minute, self.clock, self.sleep = per_minute, clock, sleep
        self.sent: deque[float] = deque()

    def wait(self) -> None:
        now = self.clock()
        while self.sent and now - self.sent[0] >= 60.0:
            self.sent.popleft()
        if len(self.sent) >= self.per_minute:
            self.sleep(60.0 - (now - self.sent[0]))
            now = max(now, self.sent.popleft() + 60.0)
        self.sent.append(now)


class ManifoldClient:
    """Reads of one Manifold host: resolved markets, one full market, a market's bets."""

    def __init__(
        self,
        http: httpx.Client,
        base_url: str = MANIFOLD_URL,
        retry: RetryPolicy = RetryPolicy(),
        sleep: Callable[[float], None] = time.sleep,
        page_limit: int = PAGE_LIMIT,
        pacer: Pacer | None = None,
        max_page: int = PAGE_LIMIT,
    ):
        self.http, self.base_url, self.retry, self.sleep = http, base_url.rstrip("/"), retry, sleep
        self.page_limit, self.max_page = page_limit, max(max_page, page_limit)
        self.pacer = pacer or Pacer(sleep=sleep)

    def get_json(self, path: str, params: dict | None = None) -> Any:
        """GET `base_url + path` as JSON, paced and retried; ManifoldError after the last try."""
        url = self.base_url + path
        outcome = Retrying(self.http, self.retry, self.sleep).request(
            "GET", url, params=params or {}, before=self.pacer.wait
        )
        response = _settled(url, outcome, self.retry)
        try:
            return response.json()
        except ValueError as exc:
            raise ManifoldError(str(response.url), f"response is not JSON ({exc})") from exc

    def resolved_markets(self) -> Iterator[list]:
        """Pages of resolved markets (every outcome type), newest created first, each once."""
        params = {"term": "", "sort": "newest", "filter": "resolved", "contractType": "ALL"}
        return self._walk("/search-markets", params)

    def market(self, market_id: str) -> dict:
        body = self.get_json(f"/market/{market_id}")
        if not isinstance(body, dict):
            raise ManifoldError(
                f"{self.base_url}/market/{market_id}", f"expected a market object, got {body!r:.80}"
            )
        return body

    def bets(self, market_id: str) -> list:
        """Every bet of one market (newest first as served), each once."""
        return [bet for page in self._walk("/bets", {"contractId": market_id}) for bet in page]

    def _walk(self, path: str, params: dict) -> Iterator[list]:
        """Pages by `beforeTime` = oldest createdTime + 1, de-duplicated by id (see the module).
        A full page that adds nothing (more items share one millisecond than a page holds) is
        asked again with a larger `limit`, up to `max_page`; past that it is an error."""
        seen: set[str] = set()
        before: int | None = None
        limit = self.page_limit
        while True:
            asked = {**params, "limit": limit, **({"beforeTime": before} if before else {})}
            body = self.get_json(path, asked)
            fresh, oldest = _page(self.base_url + path, body, seen)
            if not fresh and len(body) >= limit:
                if limit >= self.max_page:
                    raise ManifoldError(
                        self.base_url + path,
                        f"a full page of {limit} before {before} adds no new item: the walk "
                        "cannot advance",
                    )
                limit = min(2 * limit, self.max_page)
                continue
            if not fresh:
                return
            seen.update(item["id"] for item in fresh)
            yield fresh
            before, limit = oldest + 1, self.page_limit


def _page(url: str, body: object, seen: set[str]) -> tuple[list, int]:
    """The page's items not seen yet, and its oldest createdTime; an unknown shape is an error."""
    if not isinstance(body, list):
        shape = sorted(body) if isinstance(body, dict) else type(body).__name__
        raise ManifoldError(url, f"expected a JSON array, got {shape}")
    times = []
    for item in body:
        created = item.get("createdTime") if isinstance(item, dict) else None
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise ManifoldError(url, f"an item without an id: {item!r:.80}")
        if isinstance(created, bool) or not isinstance(created, int):
            raise ManifoldError(url, f"{item['id']}: createdTime {created!r} is not integer ms")
        times.append(created)
    return [item for item in body if item["id"] not in seen], min(times, default=0)


def _settled(url: str, outcome: Outcome, retry: RetryPolicy) -> httpx.Response:
    last = outcome.last
    if outcome.refused_wait is not None and isinstance(last, httpx.Response):
        raise ManifoldError(
            url,
            f"HTTP {last.status_code} asks to retry after {outcome.refused_wait:g}s, "
            f"more than the {retry.max_delay:g}s allowed",
        )
    if isinstance(last, httpx.Response) and not outcome.transient and last.is_success:
        return last
    if isinstance(last, httpx.Response):
        tries = f" after {outcome.attempts} attempts" if outcome.transient else ""
        return _raise(url, f"HTTP {last.status_code}{tries}: {_message(last)}")
    kind = "timed out" if isinstance(last, httpx.TimeoutException) else "connection failed"
    raise ManifoldError(
        url, f"{kind} after {outcome.attempts} attempts ({type(last).__name__}: {last})", True
    )


def _raise(url: str, reason: str) -> httpx.Response:
    raise ManifoldError(url, reason)


def _message(response: httpx.Response) -> str:
    """Manifold's error `message` (and `details`), else the body's start."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200].strip()
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        details = body.get("details")
        return body["message"] + (f" {details}" if details else "")
    return response.text[:200].strip()
