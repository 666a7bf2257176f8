"""A fake Polymarket on 127.0.0.1 whose markets resolve over simulated time.

Each `SimMarket` opens at `opened`, is scheduled to end at `end` (its `endDate`; by
default its resolution; `NO_END_DATE` leaves the field out, as Gamma does on some items) and
resolves (closes) at `resolves`; the Gamma `/markets` listing answers for the instant of the
shared `SimClock` — a market appears (closed, resolved) only from its resolution on — and
honours `closed`, `end_date_min`, `end_date_max` (on `endDate`: an item without one is
never in an end-date window), `order=id` or `order=closedTime` with `ascending`, `offset`
and `limit`. The CLOB `/prices-history` serves a
6-hourly YES history from opening to resolution. Shapes follow docs/polymarket-api.md
(JSON in strings, `closedTime`'s own format). `block(predicate)` holds matching requests
until `release()`, then answers them (the test kills or stops the client meanwhile).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qsl, urlsplit

from hindcast.timeutil import iso, parse_utc, to_unix
from tests.helpers import BlockingServer


class SimClock:
    def __init__(self, start: datetime):
        self.now = start

    def __call__(self) -> datetime:
        return self.now


NO_END_DATE = "none"  # SimMarket.end: the item has no endDate at all


@dataclass(frozen=True)
class SimMarket:
    n: int
    opened: datetime
    resolves: datetime
    yes: bool = True
    end: datetime | str | None = None  # endDate: None = the resolution instant; NO_END_DATE = absent

    @property
    def end_date(self) -> datetime | None:
        return None if self.end == NO_END_DATE else (self.end or self.resolves)

    @property
    def condition_id(self) -> str:
        return "0x" + hashlib.sha256(f"market-{self.n}".encode()).hexdigest()

    @property
    def yes_token(self) -> str:
        return str(10**70 + self.n * 2)

    def raw(self) -> dict:
        prices = ["1", "0"] if self.yes else ["0", "1"]
        end = {"endDate": iso(self.end_date)} if self.end_date else {}
        return end | {"id": str(1000 + self.n), "conditionId": self.condition_id, "question": f"Will thing {self.n} happen?",
                "slug": f"thing-{self.n}", "description": f"Resolves Yes if thing {self.n} happens.",
                "startDate": iso(self.opened), "createdAt": iso(self.opened),
                "closedTime": self.resolves.strftime("%Y-%m-%d %H:%M:%S+00"), "closed": True, "active": True,
                "umaResolutionStatus": "resolved", "outcomes": "[\"Yes\", \"No\"]",
                "outcomePrices": json.dumps(prices), "clobTokenIds": json.dumps([self.yes_token, str(10**70 + self.n * 2 + 1)]),
                "volume": "1000.5", "volumeNum": 1000.5, "negRisk": False,
                "events": [{"id": str(self.n), "slug": f"event-{self.n}", "category": "Politics", "tags": []}]}

    def history(self) -> list[dict]:
        points, t, k = [], self.opened, 0
        while t < self.resolves:
            step = 0.5 + (0.04 if self.yes else -0.04) * k
            points.append({"t": to_unix(t), "p": round(min(0.99, max(0.01, step)), 4)})
            t, k = t + timedelta(hours=6), k + 1
        return points


class FakePolymarket:
    def __init__(self, markets: list[SimMarket], clock: SimClock):
        self.markets, self.clock = markets, clock
        self.requests: list[tuple[str, str, dict]] = []
        self.lock = threading.Lock()

    def answer(self, service: str, endpoint: str, params: dict) -> tuple[int, object]:
        with self.lock:
            self.requests.append((service, endpoint, params))
        if (service, endpoint) == ("gamma", "markets"):
            return 200, self._listing(params)
        if (service, endpoint) == ("clob", "prices-history"):
            market = next((m for m in self.markets if m.yes_token == params.get("market")), None)
            return 200, {"history": market.history() if market else []}
        return 404, {"error": "not found"}

    def _listing(self, params: dict) -> list[dict]:
        shown = [m for m in self.markets if m.resolves <= self.clock.now or params.get("closed") != "true"]
        if "end_date_min" in params:
            shown = [m for m in shown if m.end_date and m.end_date >= parse_utc(params["end_date_min"])]
        if "end_date_max" in params:
            shown = [m for m in shown if m.end_date and m.end_date <= parse_utc(params["end_date_max"])]
        by_closed = params.get("order") == "closedTime"
        shown.sort(key=(lambda m: (m.resolves, m.n)) if by_closed else (lambda m: m.n),
                   reverse=params.get("ascending") == "false")
        offset, limit = int(params.get("offset", 0)), int(params.get("limit", 500))
        return [m.raw() for m in shown[offset: offset + limit]]

    def listings(self) -> list[dict]:
        return [p for s, e, p in self.requests if (s, e) == ("gamma", "markets")]


class LocalServer(BlockingServer):
    """The fake behind a ThreadingHTTPServer on 127.0.0.1: `/gamma/…` and `/clob/…`."""

    def __init__(self, fake: FakePolymarket):
        self.fake = fake
        super().__init__(_handler)


def _handler(server: LocalServer):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            parts = urlsplit(self.path)
            service, _, endpoint = parts.path.strip("/").partition("/")
            params = dict(parse_qsl(parts.query, keep_blank_values=True))
            if server.blocking(endpoint, params):
                server.blocked.set()
                server.released.wait(30)
            status, body = server.fake.answer(service, endpoint, params)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:
            pass

    return Handler
