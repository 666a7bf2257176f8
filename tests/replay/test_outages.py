"""Outages are not forecasts (subprocess, as a user runs it): a sweep against an endpoint that is
down or refuses the key stops with exit 4 and stores no forecast (each outage is logged as an
attempt); once the endpoint is back, the identical command completes every planned (market, t0)."""

from __future__ import annotations

import json
import socket
import sqlite3

import pytest

from hindcast.llm.fake import FakeChatModel, answer
from tests.helpers import SAMPLE_MARKETS, run_cli

ANSWER = answer('{"probability": 0.3}')


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def sweep(out, port: int, *flags: str, params: str = "", env: dict | None = None):
    spec = f"zero-shot:model=openai-compatible:http://127.0.0.1:{port}/v1#m{params}"
    return run_cli(
        "sweep",
        "--store",
        str(SAMPLE_MARKETS),
        "--limit",
        "4",
        "--fractions",
        "0.25,0.5",
        "-f",
        spec,
        "--out",
        str(out),
        "--db",
        str(out / "hindcast.db"),
        "--concurrency",
        "2",
        "--breaker-threshold",
        "2",
        *flags,
        env=env,
        timeout=300,
    )


def rows(out, sql: str) -> list[tuple]:
    with sqlite3.connect(out / "hindcast.db") as db:
        return db.execute(sql).fetchall()


def planned(out) -> int:
    (spec_json,) = rows(out, "SELECT spec_json FROM runs")[0]
    return len(json.loads(spec_json)["markets"]) * 2


def test_a_dead_endpoint_stops_resumably_then_the_identical_command_completes(tmp_path):
    port = free_port()
    first = sweep(tmp_path, port)
    assert first.returncode == 4, first.stderr
    assert "circuit breaker open" in first.stderr and f"127.0.0.1:{port}" in first.stderr
    assert first.stderr.count("hindcast: error:") == 1 and "Traceback" not in first.stderr
    assert rows(tmp_path, "SELECT COUNT(*) FROM forecasts") == [(0,)]
    attempts = rows(tmp_path, "SELECT kind, reason FROM attempts")
    assert len(attempts) == 2 and all(
        k == "infrastructure" and "connection failed" in r for k, r in attempts
    )
    shown = run_cli(
        "runs",
        "show",
        rows(tmp_path, "SELECT id FROM runs")[0][0],
        "--db",
        str(tmp_path / "hindcast.db"),
    )
    assert shown.returncode == 0 and "infrastructure attempts: 2" in shown.stdout

    fake = FakeChatModel(default=ANSWER)
    with fake.serve(port):
        second = sweep(tmp_path, port)
    assert second.returncode == 0, second.stderr
    probabilities = rows(tmp_path, "SELECT market_id, t0, probability FROM forecasts")
    assert len(probabilities) == planned(tmp_path) == len(fake.requests)
    assert all(p == 0.3 for _, _, p in probabilities)


def test_a_refused_key_stops_resumably_until_the_right_key_is_given(tmp_path):
    fake = FakeChatModel(default=ANSWER, require_key="sk-right")
    port = free_port()
    with fake.serve(port):
        missing = sweep(tmp_path, port, params=",key_env=MY_KEY", env={"MY_KEY": None})
        assert (
            missing.returncode == 4
            and "MY_KEY is not set" in missing.stderr
            and fake.requests == []
        )
        wrong = sweep(tmp_path, port, params=",key_env=MY_KEY", env={"MY_KEY": "sk-wrong"})
        assert wrong.returncode == 4 and "HTTP 401" in wrong.stderr, wrong.stderr
        assert rows(tmp_path, "SELECT COUNT(*) FROM forecasts") == [(0,)]
        asked_before = len(fake.requests)
        right = sweep(tmp_path, port, params=",key_env=MY_KEY", env={"MY_KEY": "sk-right"})
    assert right.returncode == 0, right.stderr
    stored = rows(tmp_path, "SELECT probability FROM forecasts")
    assert len(stored) == planned(tmp_path) and all(p == 0.3 for (p,) in stored)
    assert all(h["authorization"] == "Bearer sk-right" for h in fake.headers[asked_before:])
    assert "sk-right" not in (tmp_path / "hindcast.db").read_bytes().decode("utf-8", "replace")


@pytest.mark.parametrize("flag", ["--max-cost", "--max-tokens"])
def test_a_budget_stops_the_sweep_and_a_higher_one_completes_it_without_asking_again(
    tmp_path, flag
):
    prices = tmp_path / "prices.toml"
    prices.write_text("m = { input = 1000.0, output = 1000.0 }\n")  # 15 tokens a call: $0.015
    fake = FakeChatModel(default=ANSWER)
    port = free_port()
    low, high = {"--max-cost": ("0.03", "100"), "--max-tokens": ("30", "100000")}[flag]
    with fake.serve(port):
        stopped = sweep(tmp_path, port, "--prices", str(prices), flag, low)
        made = len(fake.requests)
        assert stopped.returncode == 4 and "budget reached" in stopped.stderr, stopped.stderr
        assert (
            2 <= made <= 2 + 2 < planned(tmp_path)
        )  # reached after 2 calls; overshoot ≤ the calls in flight (2)
        assert rows(tmp_path, "SELECT COUNT(*) FROM forecasts") == [(made,)]
        same = sweep(
            tmp_path, port, "--prices", str(prices), flag, low
        )  # the budget is the run's, not per call
        assert same.returncode == 4 and len(fake.requests) == made, same.stderr
        done = sweep(tmp_path, port, "--prices", str(prices), flag, high)
    assert done.returncode == 0, done.stderr
    assert len(fake.requests) == planned(tmp_path)  # nothing asked twice
    bodies = [json.dumps(b, sort_keys=True) for b in fake.requests]
    assert len(set(bodies)) == len(bodies)


def test_max_cost_with_a_model_without_a_price_is_refused_before_any_call(tmp_path):
    fake = FakeChatModel(default=ANSWER)
    port = free_port()
    with fake.serve(port):
        refused = sweep(tmp_path, port, "--max-cost", "1")
    assert refused.returncode == 1 and "needs a price" in refused.stderr and " m" in refused.stderr
    assert fake.requests == []
