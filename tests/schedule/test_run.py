"""`schedule run` as a real process: one instance per run database, jobs persisted in the
APScheduler job store across restarts, graceful SIGTERM — with the service's database a SQLite
file and a database on a real PostgreSQL server (`service_db`; its lock file named as the
SQLite file's would be)."""

from __future__ import annotations

import json
import signal
import time
from datetime import timedelta

from hindcast.timeutil import parse_utc
from tests.schedule.conftest import log_events, run_process, write_config

POLL = 0.05


def _wait_for(predicate, seconds: float = 120):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(POLL)
    raise AssertionError("timed out waiting")


def _events(folder) -> list[dict]:
    path = folder / "runs" / "schedule.log"
    return log_events(path.read_text()) if path.exists() else []


def _seen(folder, event: str, **fields) -> dict | None:
    return next(
        (
            e
            for e in _events(folder)
            if e["event"] == event and all(e.get(k) == v for k, v in fields.items())
        ),
        None,
    )


def _stop(proc) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(60)


def test_two_instances_at_once_the_second_exits_with_a_clear_message(tmp_path, server, service_db):
    config = write_config(tmp_path, server.url)
    procs = [run_process(config, "run", wait=False) for _ in range(2)]
    loser = _wait_for(lambda: next((p for p in procs if p.poll() is not None), None), 60)
    winner = next(p for p in procs if p is not loser)
    try:
        assert loser.returncode == 3
        message = loser.stderr.read()
        assert "hindcast: error: another hindcast scheduler is running" in message
        assert str(tmp_path / "runs" / "hindcast.schedule.lock") in message
        _wait_for(lambda: _seen(tmp_path, "job.finished", job="export"))
        assert winner.poll() is None
    finally:
        _stop(winner)
    assert winner.returncode == 0
    assert [e["event"] for e in _events(tmp_path)][-2:] == ["service.stopping", "service.stopped"]


def test_jobs_keep_their_next_run_across_a_restart(tmp_path, server, service_db):
    config = write_config(tmp_path, server.url)
    first = run_process(config, "run", wait=False)
    _wait_for(lambda: _seen(tmp_path, "job.finished", job="export"))
    _stop(first)
    before = next(e for e in _events(tmp_path) if e["event"] == "scheduler.running")["jobs"]
    status = json.loads(run_process(config, "status", "--json").stdout)
    after = {j["job"]: parse_utc(j["next_run"]) for j in status["jobs"]}
    assert after["pull"] == parse_utc(before["pull"]) + timedelta(hours=1)
    assert all(after[j] > parse_utc(before[j]) for j in before)
    assert all(j["next_run"] and j["last"]["status"] == "ok" for j in status["jobs"])
    second = run_process(config, "run", wait=False)
    try:
        again = _wait_for(
            lambda: [e for e in _events(tmp_path) if e["event"] == "scheduler.running"][1:]
        )[0]
    finally:
        _stop(second)
    assert again["jobs"] == {j["job"]: j["next_run"] for j in status["jobs"]}  # not reset to "now"
    assert sum(e["event"] == "job.started" for e in _events(tmp_path)) == 3  # nothing ran again


def test_sigterm_lets_the_running_job_finish_and_starts_no_other(tmp_path, server, service_db):
    config = write_config(tmp_path, server.url)
    server.block(lambda endpoint, params: endpoint.endswith("prices-history"))
    proc = run_process(config, "run", wait=False)
    try:
        assert server.blocked.wait(60)
        proc.send_signal(signal.SIGTERM)
        _wait_for(lambda: _seen(tmp_path, "service.stopping"))
    finally:
        server.release()
    proc.wait(60)
    assert proc.returncode == 0
    events = [(e["event"], e.get("job")) for e in _events(tmp_path)]
    assert ("job.finished", "pull") in events
    assert ("job.started", "sweeps") not in events and events[-1] == ("service.stopped", None)
