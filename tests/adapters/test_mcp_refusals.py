"""What the MCP server refuses, and that every call — the `question` tool, the question resource,
a refused call — is in the retrieval log (issue 36, items 13 and 14): `k` is an integer, not a
boolean or a string the SDK would coerce; `mcp serve --t0` and `--port` refuse in one line."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys

import pytest

pytest.importorskip("mcp")
from mcp import Client, StdioServerParameters

from hindcast import adapters
from hindcast.forecasters.tool_server import QUESTION_URI, mcp_server
from hindcast.runs import retrievals_form
from tests.adapters.support import FRACTION, PYTHON_CMD, sample_market
from tests.helpers import ROOT, SAMPLE_MARKETS, run_cli

CALLS = [
    ("search", {"query": "rates", "k": True}),
    ("search", {"query": "rates", "k": "5"}),
    ("search", {"query": "rates", "k": 1.0}),
    ("search", {"query": "rates", "k": 5, "mode": "bogus"}),
    ("no_such_tool", {}),
    ("question", {}),
]


async def calls(client) -> list[bool]:
    errors = [(await client.call_tool(name, args)).is_error for name, args in CALLS]
    await client.read_resource(QUESTION_URI)
    return errors


def expected_log() -> list[tuple]:
    return [
        ("refused", "search"),
        ("refused", "search"),
        ("refused", "search"),
        ("refused", "search"),
        ("refused", "no_such_tool"),
        ("question", None),
        ("question", None),
    ]


def test_k_must_be_an_integer_and_every_call_is_logged():
    bound = adapters.bind(SAMPLE_MARKETS, sample_market(), fraction=FRACTION)

    async def run():
        async with Client(mcp_server(bound.tools)) as client:
            return await calls(client)

    assert asyncio.run(run()) == [True, True, True, True, True, False]
    log = retrievals_form(bound.tools.log())
    assert [(e["op"], e.get("tool")) for e in log] == expected_log()
    assert log[0]["arguments"] == {"query": "rates", "k": True}
    assert log[1]["arguments"]["k"] == "5" and "valid integer" in log[1]["reason"]
    assert "mode must be one of" in log[3]["reason"]
    assert log[-1] == {"op": "question", "via": QUESTION_URI, "ids": []}


def test_the_served_log_holds_refused_calls_and_question_reads(tmp_path):
    served = tmp_path / "served.json"
    args = [*PYTHON_CMD, "--market", sample_market(), "--fraction", str(FRACTION)]
    params = StdioServerParameters(
        command=sys.executable,
        args=[*args, "--store", str(SAMPLE_MARKETS), "--log", str(served)],
        env=dict(os.environ),
        cwd=str(ROOT),
    )

    async def run():
        async with Client(params) as client:
            return await calls(client)

    asyncio.run(run())
    written = json.loads(served.read_text())["retrievals"]
    assert [(e["op"], e.get("tool")) for e in written] == expected_log()


@pytest.mark.parametrize("t0", ["2025-11-01T00:00:00", "yesterday", "2025-13-01T00:00:00Z"])
def test_a_bad_t0_is_one_line_naming_the_option(t0):
    done = run_cli("mcp", "serve", "--market", sample_market(), "--t0", t0)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) == 1 and f"--t0 {t0!r}" in done.stderr, done.stderr


def test_a_taken_port_is_one_line_naming_it():
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        args = ["--market", sample_market(), "--fraction", str(FRACTION), "--transport", "http"]
        done = run_cli("mcp", "serve", *args, "--port", str(port), timeout=120)
    finally:
        taken.close()
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1, done.stderr
    assert f"port {port}" in done.stderr and "already in use" in done.stderr, done.stderr
