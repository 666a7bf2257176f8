"""Usage of a call is its own under concurrency: retries are the HTTP attempts of that call
(not read from the client's shared request counter), and latency starts once the call has
passed the endpoint's concurrency gate (time queued behind other calls is not latency)."""

from __future__ import annotations

import asyncio
import json
import sqlite3

import httpx

from hindcast.llm import client as llm
from hindcast.llm.client import ChatClient, parse_model
from hindcast.llm.fake import FakeChatModel, answer
from tests.helpers import SAMPLE_MARKETS, run_cli

BODY = {
    "choices": [{"message": {"role": "assistant", "content": "0.4"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 5},
}


class Clock:
    """A monotonic clock that moves only while the endpoint serves a request (1 s each)."""

    def __init__(self):
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


def test_latency_excludes_time_queued_behind_the_concurrency_gate(monkeypatch):
    clock = Clock()

    async def serve(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0.01)
        clock.now += 1.0
        return httpx.Response(200, json=BODY)

    monkeypatch.setattr(llm, "time", clock)  # the stdlib clock the client reads, not our code
    c = ChatClient(
        parse_model("openai-compatible:http://127.0.0.1:9/v1#m"),
        concurrency=1,
        http=httpx.AsyncClient(transport=httpx.MockTransport(serve)),
    )

    async def three():
        return await asyncio.gather(
            *(c.complete([{"role": "user", "content": f"q{i}"}]) for i in range(3))
        )

    replies = asyncio.run(three())
    assert [r.latency_s for r in replies] == [1.0, 1.0, 1.0]  # before: 1, 2, 3 (queue time counted)
    assert [r.retries for r in replies] == [0, 0, 0]


def test_a_sweep_without_errors_records_no_retry_at_concurrency_3(tmp_path):
    fake = FakeChatModel(default=answer('{"probability": 0.3}', delay=0.05))
    with fake.serve() as url:
        proc = run_cli(
            "sweep",
            "--store",
            str(SAMPLE_MARKETS),
            "--limit",
            "4",
            "--fractions",
            "0.5",
            "-f",
            f"zero-shot:model=openai-compatible:{url}#m",
            "--concurrency",
            "3",
            "--out",
            str(tmp_path),
            "--db",
            str(tmp_path / "h.db"),
            "--json",
            check=True,
        )
    assert json.loads(proc.stdout)["executed"] == 4
    with sqlite3.connect(tmp_path / "h.db") as db:
        usages = [json.loads(u) for (u,) in db.execute("SELECT usage_json FROM forecasts")]
    db.close()
    assert len(usages) == 4 and [u["retries"] for u in usages] == [0, 0, 0, 0]
    assert all(u["requests"] == 1 for u in usages) and len(fake.requests) == 4
