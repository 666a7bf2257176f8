"""A fake Polymarket serving tests/fixtures/polymarket: in-process (httpx.MockTransport) and
over real sockets on 127.0.0.1 (for the subprocess pull test).

Fixture files (exact Gamma / CLOB shapes of docs/polymarket-api.md):
- gamma_markets.json: the market objects, served by `/markets/keyset` (and `/markets` by id);
- gamma_events.json: the event objects (markets nested), served by `/events/keyset`;
- clob_markets_page1.json, clob_markets_page2.json: the CLOB `/markets` envelopes;
- prices_history.json: `{token_id: {fidelity: body}}` — each body exactly what
  `/prices-history` answers (a string is sent as raw text: a broken body); a token or
  fidelity not listed answers `{"history": []}`.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from hindcast.markets.fake_http import Reply, json_reply, send_reply
from hindcast.markets.polymarket import PolymarketClient, RetryPolicy
from tests.helpers import BlockingServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "polymarket"
GAMMA = "https://gamma-api.polymarket.com"
CLOB = "https://clob.polymarket.com"


def load(name: str):
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def raw_markets() -> list[dict]:
    return load("gamma_markets.json")


def by_question(fragment: str) -> dict:
    return next(m for m in raw_markets() if fragment in m["question"])


def tokens(raw: dict) -> list[str]:
    return json.loads(raw["clobTokenIds"])


TIMEOUT = "timeout"  # a scripted fault: the request times out


class FakePolymarket:
    """Answers Gamma and CLOB requests from the fixtures; records every request.

    `faults[(service, endpoint)]` is a list of Replies (or TIMEOUT) served, in order, before
    the fixture answer. Requests are recorded as (service, endpoint, sorted query items).
    """

    def __init__(self, markets: list | None = None):
        self.markets = raw_markets() if markets is None else markets
        self.events = load("gamma_events.json")
        self.histories = load("prices_history.json")
        self.by_id: list | None = None  # what `condition_ids` requests find (default: self.markets)
        self.faults: dict[tuple[str, str], list] = {}
        self.requests: list[tuple] = []
        self.lock = threading.Lock()

    def answer(self, service: str, endpoint: str, query: list[tuple[str, str]]):
        with self.lock:
            self.requests.append(request_key(service, endpoint, query))
            scripted = self.faults.get((service, endpoint))
            if scripted:
                return scripted.pop(0)
        return self._fixture(
            service, endpoint, dict(query), [v for k, v in query if k == "condition_ids"]
        )

    def _fixture(self, service: str, endpoint: str, params: dict, ids: list[str]) -> Reply:
        if service == "gamma" and endpoint == "markets/keyset":
            return self._keyset(params, ids)
        if service == "gamma" and endpoint == "events/keyset":
            return self._keyset(params, [], "events")
        if service == "gamma" and endpoint == "markets" and ids:  # a repeatable filter, as on Gamma
            pool = self.markets if self.by_id is None else self.by_id
            return json_reply([m for m in pool if m.get("conditionId") in ids])
        if service == "gamma" and endpoint in ("markets", "events"):
            items = self.markets if endpoint == "markets" else self.events
            offset, limit = int(params.get("offset", 0)), int(params.get("limit", 500))
            return json_reply(items[offset : offset + limit])
        if service == "clob" and endpoint == "markets":
            page = {"": "clob_markets_page1.json", "MQ==": "clob_markets_page2.json"}[
                params.get("next_cursor", "")
            ]
            return json_reply(load(page))
        if service == "clob" and endpoint == "prices-history":
            return self._history(params)
        return json_reply({"error": "not found"}, 404)

    def _keyset(self, params: dict, ids: list[str], kind: str = "markets") -> Reply:
        """`/markets/keyset` over the fixture list: 100 a page at most, `after_cursor` an opaque
        offset, no `next_cursor` on the last page; by `condition_ids`, `closed` as on Gamma
        (false unless given). The plain listing serves every fixture item (their parse traps)."""
        if "offset" in params:
            return json_reply({"type": "validation error", "error": "offset not allowed"}, 422)
        if ids:
            pool = self.markets if self.by_id is None else self.by_id
            closed = params.get("closed") == "true"
            items = [
                m
                for m in pool
                if m.get("conditionId") in ids and (m.get("closed") is True) == closed
            ]
        else:
            items = self.markets if kind == "markets" else self.events
        start = int(params["after_cursor"].removeprefix("c")) if "after_cursor" in params else 0
        size = min(int(params.get("limit", 20)), 100)
        answer = {
            "$schema": f"https://gamma-api.polymarket.com/schemas/{kind.title()}KeysetListResponse.json",
            kind: items[start : start + size],
        }
        return json_reply(
            answer | ({"next_cursor": f"c{start + size}"} if start + size < len(items) else {})
        )

    def _history(self, params: dict) -> Reply:
        """The fixture body of this token and fidelity; with startTs/endTs, its points inside."""
        body = self.histories.get(params["market"], {}).get(
            str(params["fidelity"]), {"history": []}
        )
        if isinstance(body, str):
            return Reply(200, body.encode(), {"Content-Type": "text/html"})
        if "startTs" in params and isinstance(body.get("history"), list):
            start, end = int(params["startTs"]), int(params["endTs"])
            body = {
                **body,
                "history": [
                    p
                    for p in body["history"]
                    if not isinstance(p, dict)
                    or not isinstance(p.get("t"), int)
                    or start <= p["t"] <= end
                ],
            }
        return json_reply(body)

    def history_requests(self, token: str) -> list[tuple]:
        return [r for r in self.requests if r[1] == "prices-history" and ("market", token) in r[2]]

    def count(self, endpoint: str, service: str | None = None) -> int:
        return sum(1 for r in self.requests if r[1] == endpoint and service in (None, r[0]))


def request_key(service: str, endpoint: str, query) -> tuple:
    return service, endpoint, tuple(sorted(query))


# -- in-process: httpx.MockTransport ----------------------------------------------------------
def mock_transport(fake: FakePolymarket) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        service = {"gamma-api": "gamma", "data-api": "data"}.get(
            request.url.host.split(".")[0], "clob"
        )
        reply = fake.answer(
            service, request.url.path.strip("/"), list(request.url.params.multi_items())
        )
        if reply == TIMEOUT:
            raise httpx.ReadTimeout("timed out", request=request)
        return httpx.Response(reply.status, content=reply.body, headers=reply.headers)

    return httpx.MockTransport(handle)


class Sleeps(list):
    """An injected sleep that records what it was asked to wait, and never waits."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def fake() -> FakePolymarket:
    return FakePolymarket()


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def client(fake, sleeps) -> PolymarketClient:
    http = httpx.Client(transport=mock_transport(fake))
    yield PolymarketClient(
        http, GAMMA, CLOB, RetryPolicy(attempts=4, base_delay=0.5, max_delay=30), sleeps
    )
    http.close()


# -- over real sockets on 127.0.0.1 ------------------------------------------------------------
class LocalServer(BlockingServer):
    """FakePolymarket behind a ThreadingHTTPServer on 127.0.0.1: `/gamma/…` and `/clob/…`.

    `block(predicate)` makes a matching request wait (after recording it) until `release()`:
    the test kills the client meanwhile. `served` holds the requests answered (not blocked).
    """

    def __init__(self, fake: FakePolymarket):
        self.fake = fake
        self.served: list[tuple] = []
        super().__init__(_handler)


def _handler(server: LocalServer):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            parts = urlsplit(self.path)
            service, _, endpoint = parts.path.strip("/").partition("/")
            query = parse_qsl(parts.query, keep_blank_values=True)
            key = request_key(service, endpoint, query)
            reply = server.fake.answer(service, endpoint, query)
            if server.blocking(key):
                server.blocked.set()
                server.released.wait(30)
                return
            server.served.append(key)  # before the write: the client reads it only after this
            self._send(reply)

        def _send(self, reply: Reply) -> None:
            send_reply(self, reply)

        def log_message(self, *args) -> None:
            pass

    return Handler


@pytest.fixture
def local_server():
    with LocalServer(FakePolymarket()) as server:
        yield server
