"""Usage and cost from a real sweep (subprocess) of a zero-shot model served on loopback: what
the model client records reaches `hindcast leaderboard` summed per forecaster and priced."""

from __future__ import annotations

import json
import sqlite3

import pytest

from hindcast.llm.fake import FakeChatModel, answer
from tests.helpers import SAMPLE_MARKETS, run_cli
from tests.replay.test_outages import free_port

MODEL = "gpt-4.1-mini"  # in the shipped price table: $0.40 / $1.60 per million tokens


def test_a_swept_models_usage_is_summed_and_priced(tmp_path):
    port, fake = free_port(), FakeChatModel(default=answer('{"probability": 0.3}'))
    spec = f"zero-shot:model=openai-compatible:http://127.0.0.1:{port}/v1#{MODEL}"
    with fake.serve(port):
        swept = run_cli(
            "sweep",
            "--store",
            str(SAMPLE_MARKETS),
            "--limit",
            "3",
            "--fractions",
            "0.5",
            "-f",
            spec,
            "-f",
            "market",
            "--out",
            str(tmp_path / "runs"),
            "--db",
            str(tmp_path / "runs" / "hindcast.db"),
            timeout=300,
        )
    assert swept.returncode == 0, swept.stderr
    with sqlite3.connect(tmp_path / "runs" / "hindcast.db") as db:
        (rid,) = db.execute("SELECT id FROM runs").fetchone()
        recorded = [
            json.loads(u)
            for (u,) in db.execute("SELECT usage_json FROM forecasts WHERE usage_json != '{}'")
        ]
    run_cli(
        "leaderboard",
        rid,
        "--db",
        f"sqlite:///{tmp_path / 'runs' / 'hindcast.db'}",
        "--out",
        str(tmp_path / "b"),
        "--format",
        "json",
        check=True,
    )
    rows = {
        r["forecaster"]: r
        for r in json.loads((tmp_path / "b" / "leaderboard.json").read_text())["rows"]
    }
    (name,) = [n for n in rows if n != "market"]
    model, n = rows[name], len(fake.requests)
    assert n == 3 and model["n_forecasts"] == 3 and model["models"] == MODEL
    assert (
        model["prompt_tokens"],
        model["completion_tokens"],
        model["requests"],
        model["cache_hits"],
    ) == (30, 15, 3, 0)
    assert model["retries"] == sum(
        u["retries"] for u in recorded
    )  # summed as the client recorded them
    assert "latency_s" not in model and model["cost_status"] == "priced"  # kept in the database
    assert (
        model["cost_usd"] == pytest.approx((30 * 0.40 + 15 * 1.60) / 1e6) == model["cost_fresh_usd"]
    )
    assert rows["market"]["cost_status"] == "no model" and rows["market"]["cost_usd"] is None
    assert (
        "30 / 15" in swept.stdout and "n too small" in swept.stdout
    )  # the sweep's own table: 3 markets
