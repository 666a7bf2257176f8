"""The service over simulated time: after each tick only the newly resolved markets are swept,
the leaderboard export grows, the watermark advances — with its database a SQLite file and a
database on a real PostgreSQL server (`service_db`)."""

from __future__ import annotations

import csv
from datetime import timedelta

from hindcast.schedule.config import load
from hindcast.timeutil import iso
from tests.schedule.conftest import (
    TICKS,
    log_events,
    query,
    resolved_between,
    service_state,
    sim_markets,
    tick,
    write_config,
)


def _run_markets(tmp_path, run_id: str) -> set[str]:
    return {
        m
        for (m,) in query(
            tmp_path, "SELECT DISTINCT market_id FROM forecasts WHERE run_id = :run", run=run_id
        )
    }


def _exported(tmp_path) -> tuple[set[str], list[dict]]:
    folder = tmp_path / "leaderboards" / "baselines"
    with open(folder / "forecasts.csv", newline="") as f:
        markets = {row["market_id"] for row in csv.DictReader(f)}
    with open(folder / "leaderboard.csv", newline="") as f:
        return markets, list(csv.DictReader(f))


def _batches(tmp_path):
    return service_state(tmp_path).batches("baselines")


def test_each_tick_sweeps_only_the_newly_resolved_markets(tmp_path, server, clock, service_db):
    config = write_config(tmp_path, server.url)
    markets, previous, seen_batches = sim_markets(), None, 0
    for now in TICKS:
        clock.now = now
        statuses, log = tick(config, now)
        assert statuses == {"pull": "ok", "sweeps": "ok", "export": "ok"}
        new = resolved_between(markets, previous, now)
        batches = _batches(tmp_path)[seen_batches:]
        assert {m for b in batches for m in _run_markets(tmp_path, b.run_id)} == new
        assert all(
            b.status == "done" and set(b.forecasters) == {"market", "constant", "base-rate"}
            for b in batches
        )
        assert len(batches) == (1 if new else 0)
        seen_batches += len(batches)
        exported, board = _exported(tmp_path)
        assert exported == resolved_between(markets, None, now)
        assert {int(r["n_markets"]) for r in board} == {len(exported)}
        assert service_state(tmp_path).get("markets:watermark") == iso(now)
        previous = now
        assert {e["event"] for e in log_events(log)} >= {
            "service.started",
            "job.started",
            "job.finished",
            "service.stopped",
        }


def test_each_pull_lists_from_the_watermark_minus_the_lookback(tmp_path, server, clock, service_db):
    config = write_config(tmp_path, server.url)
    for now in TICKS[:3]:
        clock.now = now
        tick(config, now)
    firsts = [
        p for p in server.fake.listings() if "after_cursor" not in p and p.get("order") == "id"
    ]
    lookback = load(config).markets.lookback
    assert [p.get("end_date_min") for p in firsts] == [
        "2026-01-01T00:00:00Z",
        iso(TICKS[0] - lookback),
        iso(TICKS[1] - lookback),
    ]
    assert all(p["closed"] == "true" and "end_date_max" not in p for p in firsts)
    closed = [
        p
        for p in server.fake.listings()
        if "after_cursor" not in p and p.get("order") == "closedTime"
    ]
    assert len(closed) == 3 and all(
        p["ascending"] == "false" and "end_date_min" not in p for p in closed
    )
    assert lookback == timedelta(days=2)
