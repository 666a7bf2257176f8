"""A fake Polymarket in its late-2026 shapes (docs/polymarket-api.md), for users' tests and ours.

Markets open, close and resolve over a clock the test moves (`SimMarket`, `FakePolymarket.now`).
Served, with the traps of the 2026 contract:

- Gamma `GET /markets/keyset`: the `{"$schema", "markets", "next_cursor"}` envelope, at most
  100 items a page whatever `limit` asks, `closed` defaulting to false (open markets only),
  `after_cursor` the only cursor name (`cursor`/`next_cursor` are ignored: page 1 again),
  `offset` answered 422, no `next_cursor` key on the last page; filters `condition_ids`
  (repeatable; more than 40 answer Cloudflare's 403 HTML page), `end_date_min/max`,
  `order=id|closedTime` (camelCase; other names ignored) with `ascending`.
- Gamma `GET /markets` (legacy): a bare array, deprecation headers on every answer, the same
  100-item clamp and 422 past `legacy_offset_ceiling`.
- CLOB `GET /prices-history`: `startTs..endTs` at most 15 days (400 beyond), `interval=max|all`
  = the last 31 days before `now` only, minimum fidelity for `1w`/`1m`, the resolved-market
  fidelity trap (`SimMarket.fidelity_trap`: a fidelity under 720 answers an empty history).
- CLOB `POST /batch-prices-history`: at most 20 tokens, the same rules,
  `{"history": {token: [...]}}`.
- Data API `GET /v2/prices-history`: `interval=max` the whole life at `bucket_seconds`
  (default 43200), `start`/`end` at most 15 days, cursor paging (`pagination.next_cursor`),
  the terminal tick appended off-grid, `{"error": "Too Many Requests"}` answered with HTTP 200
  every `throttle_every`-th request; a market with `data_api=False` answers no points.

Histories: a YES price every `step` seconds (default 3 hours) from opening to close; a
bucket of width b serves the points on multiples of b. `serve(fake)` runs it on 127.0.0.1
under `/gamma`, `/clob`, `/data`; `transport(fake)` is the same as an `httpx.MockTransport`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

from hindcast.markets.fake_http import Reply, json_reply, send_reply
from hindcast.markets.fake_polymarket_market import NO_END_DATE, SimMarket
from hindcast.timeutil import parse_utc, to_unix

PAGE_CAP = 100
WINDOW_CAP = 15 * 86400
INTERVAL_MAX_SECONDS = 31 * 86400
CONDITION_ID_CAP = 40
DEPRECATION = {
    "Deprecation": "true",
    "Sunset": "Fri, 01 May 2026 00:00:00 GMT",
    "Warning": '299 - "use /markets/keyset"',
}


class FakePolymarket:
    """Gamma + CLOB + Data API over `markets`, as of `now` (a datetime or a callable giving one).

    `requests` records (service, endpoint, params as a sorted tuple of pairs); `faults[(service,
    endpoint)]` is a list of Replies served first, in order. `cursor_stuck` makes the keyset
    listing answer the same `next_cursor` forever (a broken server)."""

    def __init__(
        self,
        markets: list[SimMarket],
        now: datetime | Callable[[], datetime],
        legacy_offset_ceiling: int = 2000,
        throttle_every: int = 0,
    ):
        self.markets = list(markets)
        self._now = now
        self.legacy_offset_ceiling = legacy_offset_ceiling
        self.throttle_every = throttle_every
        self.requests: list[tuple[str, str, tuple]] = []
        self.faults: dict[tuple[str, str], list[Reply]] = {}
        self.cursor_stuck = False
        self._data_calls = 0
        self.lock = threading.Lock()

    @property
    def now(self) -> datetime:
        return self._now() if callable(self._now) else self._now

    def by_token(self, token: str) -> SimMarket | None:
        return next((m for m in self.markets if m.yes_token == token), None)

    # -- dispatch --------------------------------------------------------------------------
    def answer(
        self,
        method: str,
        service: str,
        endpoint: str,
        query: list[tuple[str, str]],
        body: bytes = b"",
    ) -> Reply:
        with self.lock:
            self.requests.append((service, endpoint, tuple(sorted(query))))
            scripted = self.faults.get((service, endpoint))
            if scripted:
                return scripted.pop(0)
        route: Callable[..., Reply] | None = {
            ("GET", "gamma", "markets/keyset"): self._keyset,
            ("GET", "gamma", "markets"): self._legacy,
            ("GET", "clob", "prices-history"): self._clob_history,
            ("POST", "clob", "batch-prices-history"): self._batch,
            ("GET", "data", "v2/prices-history"): self._data_history,
        }.get((method, service, endpoint))  # type: ignore[assignment]
        if route is None:
            return json_reply({"error": "not found"}, 404)
        return route(query, body) if method == "POST" else route(query)

    # -- Gamma -----------------------------------------------------------------------------
    def _listed(self, query: list[tuple[str, str]]) -> list[SimMarket] | Reply:
        params, now = dict(query), self.now
        ids = [v for k, v in query if k == "condition_ids"]
        if len(ids) > CONDITION_ID_CAP:
            return Reply(
                403,
                b"<html><body>Attention Required! | Cloudflare</body></html>",
                {"Content-Type": "text/html"},
            )
        closed = params.get("closed") == "true"
        shown = [m for m in self.markets if m.opened <= now and (m.resolves <= now) == closed]
        if ids:
            shown = [m for m in shown if m.condition_id in ids]
        for key, keep in (
            ("end_date_min", lambda m, t: m.end_date and m.end_date >= t),
            ("end_date_max", lambda m, t: m.end_date and m.end_date <= t),
        ):
            if key in params:
                shown = [m for m in shown if keep(m, parse_utc(params[key]))]
        by_closed = params.get("order") == "closedTime"
        shown.sort(
            key=(lambda m: (m.resolves, m.n)) if by_closed else (lambda m: m.n),
            reverse=params.get("ascending") == "false",
        )
        return shown

    def _keyset(self, query: list[tuple[str, str]]) -> Reply:
        params = dict(query)
        if "offset" in params:
            return json_reply(
                {"type": "validation error", "error": "offset is not supported, use after_cursor"},
                422,
            )
        shown = self._listed([(k, v) for k, v in query if k != "after_cursor"])
        if isinstance(shown, Reply):
            return shown
        signature = _signature(query)
        start = (
            _cursor_offset(params.get("after_cursor"), signature) if "after_cursor" in params else 0
        )
        if start is None:
            return json_reply({"type": "validation error", "error": "invalid after_cursor"}, 422)
        size = min(int(params.get("limit", 20)), PAGE_CAP)
        page, now = shown[start : start + size], self.now
        answer = {
            "$schema": "https://gamma-api.polymarket.com/schemas/MarketsKeysetListResponse.json",
            "markets": [m.raw(now) for m in page],
        }
        if start + size < len(shown):
            answer["next_cursor"] = _cursor(0 if self.cursor_stuck else start + size, signature)
        return json_reply(answer)

    def _legacy(self, query: list[tuple[str, str]]) -> Reply:
        params = dict(query)
        offset = int(params.get("offset", 0))
        if offset > self.legacy_offset_ceiling:
            return json_reply(
                {
                    "type": "validation error",
                    "error": "offset too large, use /markets/keyset for deeper pagination",
                },
                422,
                DEPRECATION,
            )
        shown = self._listed(query)
        if isinstance(shown, Reply):
            return shown
        size, now = min(int(params.get("limit", 20)), PAGE_CAP), self.now
        return json_reply([m.raw(now) for m in shown[offset : offset + size]], headers=DEPRECATION)

    # -- CLOB ------------------------------------------------------------------------------
    def _clob_points(self, token: str, params: dict) -> list[dict] | Reply:
        fidelity = int(params.get("fidelity", 1))
        interval = params.get("interval")
        if interval and fidelity < {"1w": 5, "1m": 10}.get(interval, 0):
            return json_reply(
                {
                    "error": f"invalid filters: minimum 'fidelity' for '{interval}' range is "
                    f"{ {'1w': 5, '1m': 10}[interval] }"
                },
                400,
            )
        if interval in ("max", "all"):
            end = to_unix(self.now)
            start = end - INTERVAL_MAX_SECONDS
        elif "startTs" in params and "endTs" in params:
            start, end = int(params["startTs"]), int(params["endTs"])
            if end - start > WINDOW_CAP:
                return json_reply(
                    {"error": "invalid filters: 'startTs' and 'endTs' interval is too long"}, 400
                )
        else:
            return json_reply({"error": "invalid filters: no range"}, 400)
        market = self.by_token(token)
        if market is None or (market.fidelity_trap and fidelity < 720):
            return []
        return [{"t": t, "p": p} for t, p in market.series(fidelity * 60, start, end + 1)]

    def _clob_history(self, query: list[tuple[str, str]]) -> Reply:
        params = dict(query)
        points = self._clob_points(params.get("market", ""), params)
        return points if isinstance(points, Reply) else json_reply({"history": points})

    def _batch(self, query: list[tuple[str, str]], body: bytes) -> Reply:
        try:
            request = json.loads(body)
            tokens = request["markets"]
        except (ValueError, KeyError, TypeError):
            return json_reply({"error": "invalid body"}, 400)
        if not isinstance(tokens, list) or not 1 <= len(tokens) <= 20:
            return json_reply(
                {"error": "invalid filters: 'markets' must hold 1 to 20 token ids"}, 400
            )
        params = {
            k: str(request[b])
            for k, b in (
                ("startTs", "start_ts"),
                ("endTs", "end_ts"),
                ("interval", "interval"),
                ("fidelity", "fidelity"),
            )
            if b in request
        }
        history = {}
        for token in tokens:
            points = self._clob_points(token, params)
            if isinstance(points, Reply):
                return points
            history[token] = points
        return json_reply({"history": history})

    # -- Data API --------------------------------------------------------------------------
    def _data_history(self, query: list[tuple[str, str]]) -> Reply:
        params = dict(query)
        with self.lock:
            self._data_calls += 1
            if self.throttle_every and self._data_calls % self.throttle_every == 0:
                return json_reply({"error": "Too Many Requests"})
        if "cursor" in params:
            state = _decode(params["cursor"])
            if state is None:
                return json_reply({"error": "invalid cursor"}, 400)
            params, offset, limit = state["p"], state["o"], state["l"]
        else:
            offset, limit = 0, min(int(params.get("limit", 10000)), 10000)
        points = self._data_points(params)
        if isinstance(points, Reply):
            return points
        page = points[offset : offset + limit]
        more = offset + limit < len(points)
        cursor = _encode({"p": params, "o": offset + limit, "l": limit}) if more else None
        return json_reply(
            {
                "data": [{"timestamp": t, "price": p, "resolution_seconds": r} for t, p, r in page],
                "pagination": {
                    "limit": limit,
                    "offset": offset,
                    "has_more": more,
                    "next_cursor": cursor,
                },
            }
        )

    def _data_points(self, params: dict) -> list[tuple[int, float, int]] | Reply:
        token = params.get("token_id") or params.get("tokenId")
        if not token:
            return json_reply({"error": "token_id is required"}, 400)
        bucket = int(params.get("bucket_seconds") or params.get("bucketSeconds") or 43200)
        if params.get("interval") in ("max", "all"):
            start = None if bucket in (10800, 43200) else to_unix(self.now) - 30 * 86400
            end = None
        elif "start" in params:
            start = int(params["start"])
            end = int(params["end"]) if "end" in params else to_unix(self.now)
            if end - start > WINDOW_CAP:
                return json_reply({"error": "window longer than 15 days"}, 400)
        else:
            return json_reply({"error": "one of interval, start or as_of is required"}, 400)
        market = self.by_token(token)
        if market is None or not market.data_api:
            return []
        return [(t, p, bucket) for t, p in market.series(bucket, start, end, terminal=True)]


def _signature(query: list[tuple[str, str]]) -> str:
    kept = sorted((k, v) for k, v in query if k not in ("after_cursor", "limit"))
    return hashlib.sha256(json.dumps(kept).encode()).hexdigest()[:12]


def _encode(state: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(state, sort_keys=True).encode()).decode()


def _decode(cursor: str) -> dict | None:
    try:
        return json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (ValueError, TypeError):
        return None


def _cursor(offset: int, signature: str) -> str:
    return _encode({"v": 1, "o": offset, "q": signature})


def _cursor_offset(cursor: str | None, signature: str) -> int | None:
    state = _decode(cursor or "")
    if (
        not isinstance(state, dict)
        or state.get("q") != signature
        or not isinstance(state.get("o"), int)
    ):
        return None
    return state["o"]


# -- transports ----------------------------------------------------------------------------
SERVICE_OF_HOST = {
    "gamma-api.polymarket.com": "gamma",
    "clob.polymarket.com": "clob",
    "data-api.polymarket.com": "data",
}


def transport(fake: FakePolymarket):
    """An `httpx.MockTransport` answering Polymarket's three real hosts from `fake`."""
    import httpx

    def handle(request: httpx.Request) -> httpx.Response:
        service = SERVICE_OF_HOST.get(request.url.host, "unknown")
        reply = fake.answer(
            request.method,
            service,
            request.url.path.strip("/"),
            list(request.url.params.multi_items()),
            request.content,
        )
        return httpx.Response(reply.status, content=reply.body, headers=reply.headers)

    return httpx.MockTransport(handle)


@contextmanager
def serve(fake: FakePolymarket, port: int = 0) -> Iterator[str]:
    """The fake on 127.0.0.1 (`port`, or a free one); yields the base URL: Gamma at `URL/gamma`,
    the CLOB at `URL/clob`, the Data API at `URL/data`."""
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler(fake))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def split_path(path: str) -> tuple[str, str, list[tuple[str, str]]]:
    parts = urlsplit(path)
    service, _, endpoint = parts.path.strip("/").partition("/")
    return service, endpoint, parse_qsl(parts.query, keep_blank_values=True)


def _handler(fake: FakePolymarket):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            self._send(fake.answer("GET", *split_path(self.path)))

        def do_POST(self):  # noqa: N802
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self._send(fake.answer("POST", *split_path(self.path), body))

        def _send(self, reply: Reply) -> None:
            send_reply(self, reply)

        def log_message(self, *args) -> None:
            pass

    return Handler


def population(count: int, start: datetime, seed: int = 0) -> list[SimMarket]:
    """`count` resolved markets, lives of 10 to 500 days, closing over the 200 days after `start`
    (a deterministic mix: every 7th disputed, every 11th with rules updated, every 5th not on
    the Data API, every 13th in the fidelity trap)."""
    markets = []
    for n in range(seed, seed + count):
        life = timedelta(days=10 + (n * 37) % 490, hours=(n * 5) % 24)
        resolves = start + timedelta(days=(n * 13) % 200, minutes=(n * 17) % 1440)
        opened = resolves - life
        markets.append(
            SimMarket(
                n,
                opened,
                resolves,
                yes=n % 3 != 0,
                data_api=n % 5 != 0,
                fidelity_trap=n % 13 == 0,
                disputed=n % 7 == 0,
                rules_updated_at=opened + life / 2 if n % 11 == 0 else None,
            )
        )
    return markets


__all__ = [
    "FakePolymarket",
    "NO_END_DATE",
    "Reply",
    "SimMarket",
    "population",
    "serve",
    "transport",
]
