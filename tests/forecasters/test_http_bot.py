"""The `http:` forecaster (issue 27, item 2's HTTP variant) against a real service on 127.0.0.1:
the question at t0 is the POST body; the tools' URL is in a header and the service's tool calls
become the forecast's retrievals; no connection / timeout / 429 / 5xx are outages; another status
or a body without a valid probability is a forecast failure; the key is sent, never stored."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest

from hindcast import adapters
from hindcast.errors import InfrastructureError
from hindcast.forecasters import registry
from hindcast.forecasters.command import stdin_payload
from hindcast.runs import retrievals_form
from tests.adapters.support import FRACTION, build_archive, sample_market, sample_t0
from tests.helpers import SAMPLE_MARKETS

pytest.importorskip("mcp")
KEY = "sk-http-bot-9a8b7c6d5e"


async def call_tools(url: str) -> list:
    from mcp import Client

    async with Client(url) as client:
        found = await client.call_tool(
            "search", {"query": "Fed rate cuts 2025", "k": 5, "mode": "text"}
        )
        read = await client.call_tool("read", {"doc_id": "pre-1"})
        return [found.structured_content, read.structured_content]


class Service(BaseHTTPRequestHandler):
    """POST /ok, /tools, /garbage, /400, /500, /429, /slow, /echo-key."""

    seen: list = []

    def do_POST(self):  # noqa: N802 — the standard library's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Service.seen.append(
            {
                "path": self.path,
                "body": body,
                "auth": self.headers.get("Authorization"),
                "tools": self.headers.get("Hindcast-MCP-URL"),
            }
        )
        status, answer = 200, {"probability": 0.7, "rationale": "from the service"}
        if self.path == "/tools":
            answer = {
                "probability": 0.55,
                "rationale": json.dumps(asyncio.run(call_tools(self.headers["Hindcast-MCP-URL"]))),
            }
        elif self.path == "/slow":
            time.sleep(5)
        elif self.path in ("/400", "/500", "/429"):
            status, answer = int(self.path[1:]), {"error": "no"}
        elif self.path == "/echo-key":
            status, answer = 401, {"error": f"bad key {self.headers.get('Authorization')}"}
        text = "it is likely" if self.path == "/garbage" else json.dumps(answer)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(text.encode())

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Service)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    t0 = sample_t0()
    yield SimpleNamespace(
        market=sample_market(),
        t0=t0,
        base=f"http://127.0.0.1:{server.server_address[1]}",
        archive=build_archive(tmp_path_factory.mktemp("http") / "base", t0),
    )
    server.shutdown()


def ask(world, path: str, more: str = "", env=None):
    bound = adapters.bind(SAMPLE_MARKETS, world.market, fraction=FRACTION, archive=world.archive)
    forecaster = registry.create(f"http:url={world.base}{path}{more}")
    if env is not None:
        from dataclasses import replace

        forecaster = replace(forecaster, environment=env)
    return asyncio.run(forecaster.forecast(bound.question, bound.ctx)), bound


def test_the_question_is_posted_and_the_answer_read(world):
    forecast, bound = ask(world, "/ok", ",key_env=MY_SERVICE_KEY", env={"MY_SERVICE_KEY": KEY})
    assert forecast.probability == 0.7 and forecast.rationale == "from the service"
    seen = Service.seen[-1]
    assert seen["body"] == stdin_payload(bound.question) and seen["auth"] == f"Bearer {KEY}"
    assert seen["tools"].startswith("http://127.0.0.1:")


def test_the_services_tool_calls_are_its_retrievals(world):
    forecast, bound = ask(world, "/tools")
    found, read = json.loads(forecast.rationale)
    assert {h["id"] for h in found["hits"]} <= {"pre-1", "pre-2", "pre-3"} and read["document"][
        "id"
    ] == "pre-1"
    assert [c["op"] for c in retrievals_form(bound.ctx.retrievals)] == [
        "search",
        "read",
    ] and forecast.evidence == ("pre-1",)


@pytest.mark.parametrize(
    ("path", "reason"),
    [("/garbage", "the response body is not one JSON object"), ("/400", "HTTP 400")],
)
def test_a_bad_answer_is_a_forecast_failure(world, path, reason):
    forecast, _ = ask(world, path)
    assert forecast.probability is None and forecast.error == reason


@pytest.mark.parametrize(
    ("path", "more", "reason"),
    [
        ("/500", "", "HTTP 500"),
        ("/429", "", "HTTP 429"),
        ("/slow", ",timeout=1", "no answer within its timeout of 1 s"),
    ],
)
def test_an_unavailable_service_is_an_outage(world, path, more, reason):
    with pytest.raises(InfrastructureError, match=reason):
        ask(world, path, more)


def test_no_connection_is_an_outage():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    world = SimpleNamespace(market=sample_market(), base=f"http://127.0.0.1:{port}", archive=None)
    bound = adapters.bind(SAMPLE_MARKETS, world.market, fraction=FRACTION)
    with pytest.raises(InfrastructureError, match="cannot reach it: ConnectError"):
        asyncio.run(registry.create(f"http:url={world.base}/x").forecast(bound.question, bound.ctx))


def test_the_key_is_never_stored(world):
    forecast, _ = ask(world, "/echo-key", ",key_env=MY_SERVICE_KEY", env={"MY_SERVICE_KEY": KEY})
    assert forecast.error == "HTTP 401" and KEY not in forecast.raw and "Bearer ***" in forecast.raw

    forecast, _ = ask(
        world, "/echo-key", ",key_env=BOT_AUTH", env={"BOT_AUTH": KEY}
    )  # any variable name
    assert KEY not in forecast.raw and "Bearer ***" in forecast.raw
