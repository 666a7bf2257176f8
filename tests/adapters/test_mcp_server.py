"""`hindcast mcp serve` (issue 27, item 1): the t0-bound tools through the official MCP SDK's
in-memory client, its stdio client against the real command, and streamable HTTP on loopback.
Every tool answers; a document created exactly at t0 (or later) is never returned; extra
arguments named t0 / until / before … change nothing; the served calls are written to the log;
adding documents, prices and resolutions after t0 changes no answer."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

pytest.importorskip("mcp")
from mcp import Client, StdioServerParameters

from hindcast import adapters
from hindcast.forecasters.tool_server import QUESTION_URI, mcp_server
from hindcast.runs import retrievals_form
from hindcast.timeutil import iso, parse_utc
from tests.adapters.support import (
    FRACTION,
    PYTHON_CMD,
    QUERY,
    build_archive,
    sample_market,
    sample_t0,
    with_post_t0_market_data,
)
from tests.helpers import ROOT, SAMPLE_MARKETS

MODES = ("text", "vector", "hybrid")
CALLS = [
    *(("search", {"query": QUERY, "k": 10, "mode": m}) for m in MODES),
    (
        "search",
        {
            "query": "Fed rate cuts 2025: exactly two cuts confirmed, market resolves",
            "k": 50,
            "mode": "text",
        },
    ),
    ("read", {"doc_id": "pre-1"}),
    ("read", {"doc_id": "at-t0"}),
    ("read", {"doc_id": "post-1"}),
    ("thread", {"submission_id": "pre-1"}),
    ("price_history", {}),
    ("resolved_before", {}),
    ("question", {}),
]
EXTRA = {
    "t0": "2030-01-01T00:00:00Z",
    "until": "2030-01-01",
    "before": "2030-01-01",
    "after": "2020-01-01",
    "snapshot": "latest",
    "market": "other",
    "store": "/",
    "date": "2030-01-01",
}
PRE = {"pre-1", "pre-2", "pre-3"}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mcp")
    t0 = sample_t0()
    return SimpleNamespace(
        market=sample_market(),
        t0=t0,
        folder=folder,
        archive=build_archive(folder / "base", t0),
        later=build_archive(folder / "later", t0, extra=True),
    )


def bind(world, archive=None):
    return adapters.bind(
        SAMPLE_MARKETS, world.market, fraction=FRACTION, archive=archive or world.archive
    )


async def answers(client, calls=CALLS, extra=None) -> list:
    out = []
    for name, args in calls:
        result = await client.call_tool(name, {**args, **(extra or {})})
        assert not result.is_error, (name, result.content)
        assert (
            json.loads(result.content[0].text) == result.structured_content
        )  # the same JSON as text
        out.append(result.structured_content)
    return out


def in_memory(tools, calls=CALLS, extra=None) -> list:
    async def run():
        async with Client(mcp_server(tools)) as client:
            return await answers(client, calls, extra)

    return asyncio.run(run())


def test_every_tool_answers_within_t0(world):
    bound = bind(world)
    (
        search_text,
        search_vector,
        search_hybrid,
        exact,
        read_pre,
        read_at,
        read_post,
        thread,
        prices,
        past,
        question,
    ) = in_memory(bound.tools)
    for hits in (search_text, search_vector, search_hybrid, exact):
        ids = [h["id"] for h in hits["hits"]]
        assert ids and set(ids) <= PRE, ids  # only what existed strictly before t0
    assert [h["id"] for h in search_text["hits"]][0] == "pre-1"
    assert read_pre["document"]["id"] == "pre-1" and read_pre["document"]["created_at"] < iso(
        world.t0
    )
    assert read_at == {"document": None} and read_post == {"document": None}
    assert [d["id"] for d in thread["documents"]] in ([], ["pre-1"])
    assert prices["prices"] and all(parse_utc(p["t"]) < world.t0 for p in prices["prices"])
    assert past["resolutions"] and world.market not in {r["market_id"] for r in past["resolutions"]}
    assert question == adapters.question_view(bound.question) and question["t0"] == iso(world.t0)
    assert not {"outcome", "resolution", "resolved_at", "status"} & set(question)
    for hit in search_text["hits"]:  # no counter, edit or retrieval instant, deletion flag
        assert not {"score_count", "num_comments", "edited_at", "retrieved_at", "deleted"} & set(
            hit
        )


def test_question_resource_is_the_question_at_t0(world):
    bound = bind(world)

    async def run():
        async with Client(mcp_server(bound.tools)) as client:
            listed = await client.list_resources()
            read = await client.read_resource(QUESTION_URI)
            return [str(r.uri) for r in listed.resources], json.loads(read.contents[0].text)

    uris, question = asyncio.run(run())
    assert uris == [QUESTION_URI]
    assert question == dict(adapters.question_view(bound.question))


def test_a_document_created_exactly_at_t0_is_never_returned(world):
    bound = bind(world)
    title = "Fed rate cuts 2025: exactly two cuts confirmed, market resolves"
    calls = [
        ("search", {"query": q, "k": 50, "mode": m})
        for m in MODES
        for q in (title, "confirmed resolves")
    ]
    for result in in_memory(bound.tools, calls):
        assert "at-t0" not in {h["id"] for h in result["hits"]}
    assert in_memory(bound.tools, [("read", {"doc_id": "at-t0"})]) == [{"document": None}]


def test_extra_arguments_named_t0_until_before_change_nothing(world):
    plain = in_memory(bind(world).tools)
    bound = bind(world)
    assert in_memory(bound.tools, extra=EXTRA) == plain
    tools = bind(
        world
    ).tools  # called directly (as the Inspect adapter does): ignored, and logged as such
    assert tools.search(QUERY, 10, "text", **EXTRA) == tools.search(QUERY, 10, "text")
    ignored = [e for e in retrievals_form(tools.log()) if e["op"] == "ignored"]
    assert ignored == [{"op": "ignored", "tool": "search", "arguments": sorted(EXTRA), "ids": []}]


def test_post_t0_documents_prices_and_resolutions_change_no_answer(world):
    """Property: the archive with more documents after t0, and market data with prices and
    resolutions at and after t0 added, give every tool the same answer."""
    base = in_memory(bind(world).tools)
    assert in_memory(bind(world, world.later).tools) == base
    assert in_memory(with_post_t0_market_data(bind(world, world.later)).tools) == base


def test_every_call_is_in_the_retrieval_log(world):
    bound = bind(world)
    in_memory(bound.tools)
    log = retrievals_form(bound.tools.log())
    assert [e["op"] for e in log] == ["search"] * 4 + ["read"] * 3 + [
        "thread",
        "price_history",
        "resolved_before",
        "question",  # logged like any other call (issue 36, item 14)
    ]
    assert log[0]["query"] == QUERY and log[0]["mode"] == "text" and log[0]["k"] == 10
    assert log[4] == {"op": "read", "doc_id": "pre-1", "ids": ["pre-1"]}
    assert log[5] == {"op": "read", "doc_id": "at-t0", "ids": []}


def serve_args(world, *more: str) -> list[str]:
    return [
        *PYTHON_CMD,
        "--market",
        world.market,
        "--fraction",
        str(FRACTION),
        "--store",
        str(SAMPLE_MARKETS),
        "--archive",
        str(world.archive),
        *more,
    ]


def test_stdio_client_against_the_real_command_and_its_log(world, tmp_path):
    log = tmp_path / "served.json"
    params = StdioServerParameters(
        command=sys.executable,
        args=serve_args(world, "--log", str(log)),
        env=dict(os.environ),
        cwd=str(ROOT),
    )

    async def run():
        async with Client(params) as client:
            return await answers(client, extra=EXTRA)

    assert asyncio.run(run()) == in_memory(bind(world).tools)
    written = json.loads(log.read_text())
    assert written["market_id"] == world.market and written["t0"] == iso(world.t0)
    expected = bind(world)
    in_memory(expected.tools)
    assert written["retrievals"] == retrievals_form(expected.tools.log())


def test_streamable_http_on_loopback(world, tmp_path):
    log = tmp_path / "served.json"
    proc = subprocess.Popen(
        [sys.executable, *serve_args(world, "--transport", "http", "--log", str(log))],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stderr.readline()
        assert line.startswith("serving http://127.0.0.1:"), line
        url = line.split()[1]

        async def run():
            async with Client(url) as client:
                return await answers(client)

        assert asyncio.run(run()) == in_memory(bind(world).tools)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    written = json.loads(log.read_text())
    assert [e["op"] for e in written["retrievals"]][:4] == ["search"] * 4
    assert len(written["retrievals"]) == 11


def test_without_the_mcp_extra_the_command_names_it(world):
    code = (
        "import sys; sys.modules['mcp'] = None; sys.argv = ['hindcast', *sys.argv[1:]]; "
        "from hindcast.cli.main import run; run()"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *serve_args(world)[2:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert "pip install 'hindcast-replay[mcp]'" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--market", "no-such-market", "--fraction", "0.5"], "market(s) not in store"),
        (
            ["--fraction", "0.5", "--t0", "2025-11-01T00:00:00Z"],
            "give exactly one of --t0 and --fraction",
        ),
        (["--t0", "2030-01-01T00:00:00Z"], "at or after market"),
        (["--fraction", "0.5", "--transport", "carrier-pigeon"], "--transport 'carrier-pigeon'"),
    ],
)
def test_bad_input_is_one_line_and_exit_1(world, args, message):
    full = [*PYTHON_CMD[2:], *(["--market", world.market] if "--market" not in args else []), *args]
    proc = subprocess.run(
        [sys.executable, "-m", "hindcast", *full],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and message in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
