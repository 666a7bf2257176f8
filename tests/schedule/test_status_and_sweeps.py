"""`schedule status`, a failing job, and how a configured sweep may (and may not) change — with
the service's database a SQLite file and a database on a real PostgreSQL server (`service_db`)."""

from __future__ import annotations

import json

from tests.schedule.conftest import (
    TICKS,
    run_process,
    service_state,
    tick,
    write_config,
)


def test_status_shows_last_runs_watermarks_sweeps_and_failures(tmp_path, server, clock, service_db):
    config = write_config(tmp_path, server.url)
    assert "no job has run against this database yet" in run_process(config, "status").stdout
    tick(config, TICKS[0])
    broken = write_config(tmp_path, "http://127.0.0.1:9")  # nothing listens there: the pull fails
    failed = run_process(broken, "once", "--now", TICKS[1].isoformat())
    assert (
        failed.returncode == 1 and "pull: failed" in failed.stdout and "export: ok" in failed.stdout
    )
    info = json.loads(run_process(broken, "status", "--json").stdout)
    assert info["running"] is None and info["watermarks"]["markets"] == "2026-03-01T00:00:00Z"
    assert info["pull_pending"] == {
        "since": "2026-02-27T00:00:00Z",
        "listed_at": "2026-03-02T00:00:00Z",
    }
    assert [(j["job"], j["last"]["status"]) for j in info["jobs"]] == [
        ("pull", "failed"),
        ("sweeps", "ok"),
        ("export", "ok"),
    ]
    assert (
        info["failures"][0]["job"] == "pull"
        and "connection failed after 1 attempts" in info["failures"][0]["error"]
    )
    assert info["sweeps"] == [
        {
            "sweep": "baselines",
            "batches_done": 1,
            "batches_pending": 0,
            "markets": 3,
            "last_run": info["sweeps"][0]["last_run"],
            "last_batch_at": "2026-03-01T00:00:00Z",
        }
    ]
    text = run_process(broken, "status").stdout
    assert (
        "service: not running" in text and "pull    every 1:00:00" in text and "failures: 1" in text
    )


def test_a_forecaster_added_later_is_run_on_every_market_already_covered(
    tmp_path, server, clock, service_db
):
    config = write_config(tmp_path, server.url)
    tick(config, TICKS[0])
    text = config.read_text().replace(
        "[sweeps.run]", '[[sweeps.forecasters]]\nspec = "constant:p=0.3"\n[sweeps.run]'
    )
    config.write_text(text)
    clock.now = TICKS[1]
    assert set(tick(config, TICKS[1])[0].values()) == {"ok"}
    batches = service_state(tmp_path).batches("baselines")
    assert [(b.forecasters, b.markets) for b in batches] == [
        (("market", "constant", "base-rate"), 3),
        (("market", "constant", "base-rate"), 2),
        (("constant:p=0.3",), 5),
    ]


def test_a_changed_cutoff_schedule_is_refused(tmp_path, server, clock, service_db):
    config = write_config(tmp_path, server.url)
    tick(config, TICKS[0])
    config.write_text(config.read_text().replace("fractions = [0.5, 0.9]", "fractions = [0.5]"))
    statuses, _ = tick(config, TICKS[1])
    assert statuses["sweeps"] == "failed"
    error = service_state(tmp_path).job_runs("sweeps", limit=1)[0].error
    assert "cutoff schedule changed since its first batch (fractions [0.5, 0.9] → [0.5])" in error
    assert "give the changed sweep a new name" in error


def test_a_stop_request_interrupts_a_sweep_and_the_next_start_resumes_its_batch(
    tmp_path, server, clock, service_db, monkeypatch
):
    from sqlalchemy import func, select

    import hindcast.replay.runner as runner
    import hindcast.replay.sweep as sweep
    from hindcast.runs.tables import CLAIMS
    from hindcast.schedule.config import load
    from hindcast.schedule.service import Service

    config = load(write_config(tmp_path, server.url))
    service = Service(config, clock)
    service.run_job("pull")
    add_many, stored = sweep.add_many, []

    def add_then_stop(*args, **kwargs):  # the baselines' store step, a batch at a time
        stored.append(add_many(*args, **kwargs))
        service.stopping.set()  # as SIGTERM does
        return stored[-1]

    monkeypatch.setattr(runner, "BATCH", 1)  # one forecast a batch: the stop lands between two
    monkeypatch.setattr(sweep, "add_many", add_then_stop)
    assert service.run_job("sweeps").status == "interrupted"
    assert service.once()["export"] == "skipped"
    run = service_state(tmp_path).job_runs("sweeps", limit=1)[0]
    assert run.status == "interrupted" and "resumes at the next start" in run.error
    assert [b.status for b in service_state(tmp_path).batches("baselines")] == ["pending"]
    assert stored  # (baselines never suspend: every task already scheduled completes; an awaiting
    #              forecaster's tasks still in flight are cancelled with the loop)
    with service.store.engine.connect() as conn:  # the stopped sweep holds no claim: the next
        assert conn.execute(select(func.count()).select_from(CLAIMS)).scalar() == 0  # waits none

    again = Service(config, clock)
    again.run_job("sweeps")
    batch = service_state(tmp_path).batches("baselines")[0]
    assert batch.status == "done" and len(again.store.forecasts(batch.run_id)) == 3 * 3 * 2


def test_before_any_market_is_stored_the_sweeps_have_nothing_to_do(tmp_path, service_db):
    statuses, _ = tick(write_config(tmp_path, "http://127.0.0.1:9"), TICKS[0])
    assert statuses == {"pull": "failed", "sweeps": "ok", "export": "ok"}
    assert service_state(tmp_path).batches() == []
