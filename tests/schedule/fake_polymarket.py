"""The shipped 2026 fake (`hindcast.markets.fake_polymarket`) on 127.0.0.1 for the service
tests, over a simulated clock: a market is listed with `closed=true` only from its resolution
on (Gamma lists open markets without it). `block(predicate)` holds matching requests until
`release()`, then answers them (the test kills or stops the client meanwhile)."""

from __future__ import annotations

from datetime import datetime
from http.server import BaseHTTPRequestHandler

from hindcast.markets.fake_http import send_reply
from hindcast.markets.fake_polymarket import NO_END_DATE, SimMarket, split_path
from hindcast.markets.fake_polymarket import FakePolymarket as _Fake
from tests.helpers import BlockingServer

__all__ = ["NO_END_DATE", "FakePolymarket", "LocalServer", "SimClock", "SimMarket"]


class SimClock:
    def __init__(self, start: datetime):
        self.now = start

    def __call__(self) -> datetime:
        return self.now


class FakePolymarket(_Fake):
    def listings(self) -> list[dict]:
        """The params of every Gamma listing request, in order."""
        return [dict(q) for s, e, q in self.requests if s == "gamma"]


class LocalServer(BlockingServer):
    """The fake behind a ThreadingHTTPServer on 127.0.0.1: `/gamma/…`, `/clob/…`, `/data/…`."""

    def __init__(self, fake: FakePolymarket):
        self.fake = fake
        super().__init__(_handler)


def _handler(server: LocalServer):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            service, endpoint, query = split_path(self.path)
            if server.blocking(endpoint, dict(query)):
                server.blocked.set()
                server.released.wait(30)
            send_reply(self, server.fake.answer("GET", service, endpoint, query))

        def log_message(self, *args) -> None:
            pass

    return Handler
