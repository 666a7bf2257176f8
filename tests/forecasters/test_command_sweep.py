"""`command:` through real `hindcast sweep` subprocesses (issue 27, item 2): a re-run asks only
the outages again (stored failures are kept, counted, not re-asked); a kill -9 of the sweep
resumes with no duplicate."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

from tests.forecasters.command_bots import PASSED, write_bot
from tests.helpers import ROOT, SAMPLE_MARKETS, run_cli


def rows(db, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def markets(db) -> list[str]:
    (spec_json,) = rows(db, "SELECT spec_json FROM runs")[0]
    return json.loads(spec_json)["markets"]


def asked(log) -> list[str]:
    return (
        [json.loads(line)["market_id"] for line in log.read_text().splitlines()]
        if log.exists()
        else []
    )


def test_a_rerun_asks_only_the_outages_again(tmp_path):
    bot, db, log = write_bot(tmp_path), tmp_path / "h.db", tmp_path / "asked.jsonl"
    env = {"BOT_LOG": str(log), "BOT_FIXED": str(tmp_path / "fixed")}

    def sweep():
        return run_cli(
            "sweep",
            "--store",
            str(SAMPLE_MARKETS),
            "--limit",
            "4",
            "--fractions",
            "0.5",
            "-f",
            f"command:cmd={bot} flaky,timeout=5,{PASSED}",
            "--concurrency",
            "2",
            "--breaker-threshold",
            "50",
            "--out",
            str(tmp_path),
            "--db",
            str(db),
            env=env,
            timeout=300,
        )

    # which 4 markets the sweep takes is the planner's business: learn them from a first, harmless plan
    first_plan = run_cli(
        "sweep",
        "--store",
        str(SAMPLE_MARKETS),
        "--limit",
        "4",
        "--fractions",
        "0.5",
        "-f",
        "constant",
        "--out",
        str(tmp_path / "plan"),
        "--db",
        str(tmp_path / "plan.db"),
        timeout=300,
    )
    assert first_plan.returncode == 0, first_plan.stderr
    slow, failing, *_ = markets(tmp_path / "plan.db")
    env["BOT_SLOW"], env["BOT_FAIL"] = slow, failing

    first = sweep()
    assert first.returncode == 4, (
        first.stderr
    )  # stopped: one forecast was not made (an outage), resumable
    assert "Traceback" not in first.stderr
    assert sorted(asked(log)) == sorted(markets(db))
    stored = {
        m: (p, e) for m, p, e in rows(db, "SELECT market_id, probability, error FROM forecasts")
    }
    assert (
        slow not in stored
        and stored[failing][0] is None
        and stored[failing][1].startswith("program exited 1")
    )
    assert len(stored) == 3
    (attempt,) = rows(db, "SELECT market_id, kind, reason FROM attempts")
    assert attempt[:2] == (slow, "infrastructure") and "timeout of 5 s" in attempt[2]

    (tmp_path / "fixed").write_text("")
    before = len(asked(log))
    second = sweep()
    assert second.returncode == 0, second.stderr
    assert asked(log)[before:] == [
        slow
    ]  # only the outage was asked again; the stored failure was not
    stored = {
        m: (p, e) for m, p, e in rows(db, "SELECT market_id, probability, error FROM forecasts")
    }
    assert len(stored) == 4 and stored[slow] == (0.4, None) and stored[failing][0] is None


def test_kill_9_of_the_sweep_resumes_with_no_duplicate(tmp_path):
    bot, db, log = write_bot(tmp_path), tmp_path / "h.db", tmp_path / "asked.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "hindcast",
        "sweep",
        "--store",
        str(SAMPLE_MARKETS),
        "--limit",
        "8",
        "--fractions",
        "0.25,0.5",
        "-f",
        f"command:cmd={bot} flaky 0.4,timeout=60,{PASSED}",
        "--concurrency",
        "2",
        "--out",
        str(tmp_path),
        "--db",
        str(db),
    ]
    env = {**os.environ, "BOT_LOG": str(log), "BOT_FIXED": str(tmp_path / "fixed")}
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and (not db.exists() or _count(db) < 3):
            time.sleep(0.2)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        proc.kill()
    at_kill = _count(db)
    assert 3 <= at_kill < 16, at_kill
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    keys = rows(db, "SELECT forecaster, market_id, t0, repeat FROM forecasts")
    assert len(keys) == 16 and len(set(keys)) == 16
    assert all(p == 0.4 for (p,) in rows(db, "SELECT probability FROM forecasts"))
    assert (
        len(asked(log)) <= 16 + 2
    )  # only a program in flight at the kill (≤ concurrency) is asked again


def _count(db) -> int:
    try:
        return rows(db, "SELECT COUNT(*) FROM forecasts")[0][0]
    except sqlite3.OperationalError:  # the schema is not there yet
        return 0


def test_reported_tokens_count_against_the_run_budget_and_a_higher_budget_resumes(tmp_path):
    bot, db = write_bot(tmp_path), tmp_path / "h.db"
    spec = f"command:cmd={bot} tokens,timeout=60"  # each answer reports 1,000 + 50 tokens

    def sweep(budget: str):
        return run_cli(
            "sweep",
            "--store",
            str(SAMPLE_MARKETS),
            "--limit",
            "4",
            "--fractions",
            "0.5",
            "-f",
            spec,
            "--concurrency",
            "1",
            "--max-tokens",
            budget,
            "--out",
            str(tmp_path),
            "--db",
            str(db),
            timeout=300,
        )

    first = sweep("2000")
    assert (
        first.returncode == 4 and "token budget reached: 2100 of --max-tokens 2000" in first.stderr
    ), first.stderr
    assert rows(db, "SELECT COUNT(*) FROM forecasts") == [(2,)]
    second = sweep("10000")
    assert second.returncode == 0, second.stderr
    assert rows(db, "SELECT COUNT(*), SUM(probability = 0.6) FROM forecasts") == [(4, 4)]


def test_a_cost_cap_prices_the_tokens_as_the_specs_model(tmp_path):
    bot, db = write_bot(tmp_path), tmp_path / "h.db"
    spec = f"command:cmd={bot} tokens,timeout=60,model=gpt-4.1-mini"  # $0.00048 an answer at the shipped prices

    def sweep(spec: str, cap: str):
        return run_cli(
            "sweep",
            "--store",
            str(SAMPLE_MARKETS),
            "--limit",
            "4",
            "--fractions",
            "0.5",
            "-f",
            spec,
            "--concurrency",
            "1",
            "--max-cost",
            cap,
            "--out",
            str(tmp_path),
            "--db",
            str(db),
            timeout=300,
        )

    refused = sweep(f"command:cmd={bot} tokens,model=no-such-model", "1")
    assert (
        refused.returncode == 1
        and "needs a price for every model; none for no-such-model" in refused.stderr
    ), refused.stderr
    stopped = sweep(spec, "0.0009")
    assert stopped.returncode == 4 and "cost budget reached: $0.000960" in stopped.stderr, (
        stopped.stderr
    )
    usage = json.loads(rows(db, "SELECT usage_json FROM forecasts LIMIT 1")[0][0])
    assert usage["model_name"] == "gpt-4.1-mini" and usage["reported_model"] == "bot-model"
