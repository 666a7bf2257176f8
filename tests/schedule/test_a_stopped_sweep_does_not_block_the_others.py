"""One configured sweep stopped by a circuit breaker (or a budget) does not keep the other
sweeps of the same tick from running: they all run, then the job reports 'stopped' (exit 4)."""

from __future__ import annotations

import socket

from tests.helpers import SAMPLE_MARKETS, run_cli
from tests.schedule.conftest import SERVICE_HEAD, on_service_db, query, sweep_table

MARKETS = [
    "0x05af636e0989accb08334a74f69e5368e0aa28fe498fd16a3ca991e6dc5ae2cc",
    "0x0a7e45f69a8d2c45fc008fa9d8242efa13264ba540a782d82f613d673f1d1205",
]


def config(port: int) -> str:
    dead = f"zero-shot:model=openai-compatible:http://127.0.0.1:{port}/v1#m"
    return on_service_db(
        SERVICE_HEAD
        + sweep_table(
            "dead-endpoint",
            dead,
            SAMPLE_MARKETS,
            MARKETS,
            {"breaker_threshold": 1, "concurrency": 1},
        )
        + sweep_table("baselines", "constant", SAMPLE_MARKETS, MARKETS)
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_sweep_after_a_stopped_one_still_runs(tmp_path, service_db):
    path = tmp_path / "hindcast.toml"
    path.write_text(config(free_port()), encoding="utf-8")
    proc = run_cli(
        "schedule", "once", "--config", str(path), "--now", "2026-11-30T00:00:00Z", timeout=300
    )
    assert proc.returncode == 4 and "sweeps: stopped" in proc.stdout, proc.stdout + proc.stderr
    stored = query(tmp_path, "SELECT forecaster, probability FROM forecasts")
    assert stored == [("constant", 0.5), ("constant", 0.5)]  # before: the baselines never ran
