"""`schedule status`: read-only — is a service running, each job's last and next run,
watermarks, sweeps (batches done and pending) and recent failures."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, create_engine, inspect, text

from hindcast.http import redact
from hindcast.schedule.config import ScheduleConfig
from hindcast.schedule.jobs import PULL_PENDING, WATERMARK
from hindcast.schedule.lock import describe, holder
from hindcast.schedule.service import JOBSTORE_TABLE
from hindcast.schedule.state import JobRun, State
from hindcast.timeutil import from_unix, iso


def report(config: ScheduleConfig, failures: int = 10) -> dict:
    """The service's state; `db` is the run database without credentials (`redact`)."""
    shown = redact(config.db_url)
    if (
        config.db_url.startswith("sqlite:///")
        and not Path(config.db_url.removeprefix("sqlite:///")).exists()
    ):
        return {"running": _running(config), "never_run": True, "db": shown}
    engine = create_engine(config.db_url)
    try:
        tables = set(inspect(engine).get_table_names())
        if "schedule_job_runs" not in tables:
            return {"running": _running(config), "never_run": True, "db": shown}
        state = State(engine)
        return {
            "running": _running(config),
            "never_run": False,
            "db": shown,
            "jobs": [_job(state, job, config, _next_runs(engine, tables)) for job in config.jobs],
            "watermarks": {
                "markets": state.get(WATERMARK),
                "archive_indexed": state.get("archive:indexed"),
            },
            "pull_pending": state.get(PULL_PENDING),
            "sweeps": [_sweep(state, s.name) for s in config.sweeps],
            "failures": [
                _run(r)
                for r in state.job_runs(limit=200)
                if r.status != "ok" and r.status != "running"
            ][:failures],
        }
    finally:
        engine.dispose()


def _running(config: ScheduleConfig) -> dict | None:
    return holder(config.lock)


def _job(state: State, job: str, config: ScheduleConfig, next_runs: dict) -> dict:
    last = state.job_runs(job, limit=1)
    ok = state.job_runs(job, status="ok", limit=1)
    return {
        "job": job,
        "every": str(config.every[job]),
        "next_run": next_runs.get(job),
        "last": _run(last[0]) if last else None,
        "last_ok": ok[0].finished_at if ok else None,
    }


def _run(r: JobRun) -> dict:
    return {
        "job": r.job,
        "status": r.status,
        "now": r.now,
        "started_at": r.started_at,
        "finished_at": r.finished_at,
        "error": r.error,
        "detail": r.detail,
    }


def _sweep(state: State, name: str) -> dict:
    batches = state.batches(name)
    done = [b for b in batches if b.status == "done"]
    return {
        "sweep": name,
        "batches_done": len(done),
        "batches_pending": len(batches) - len(done),
        "markets": sum(b.markets for b in done),
        "last_run": done[-1].run_id if done else None,
        "last_batch_at": done[-1].finished if done else None,
    }


def _next_runs(engine: Engine, tables: set) -> dict:
    """Next run of each job in APScheduler's store (read as a table: nothing is unpickled)."""
    if JOBSTORE_TABLE not in tables:
        return {}
    with engine.connect() as c:
        rows = c.execute(text(f"SELECT id, next_run_time FROM {JOBSTORE_TABLE}"))
        return {
            r.id: None if r.next_run_time is None else iso(from_unix(r.next_run_time)) for r in rows
        }


def render(info: dict) -> str:
    running = info["running"]
    lines = [
        f"service: {'running (' + describe(running) + ')' if running else 'not running'} · "
        f"db {info['db']}"
    ]
    if info["never_run"]:
        return "\n".join(lines + ["no job has run against this database yet"])
    lines.append("jobs:")
    for j in info["jobs"]:
        last = j["last"]
        said = (
            f"{last['status']} at {last['finished_at'] or last['started_at']} (now={last['now']})"
            if last
            else "never"
        )
        lines.append(
            f"  {j['job']:<7} every {j['every']:<16} last {said}; next "
            f"{j['next_run'] or '— (no `run` yet)'}"
        )
    marks = info["watermarks"]
    lines.append(
        f"watermarks: markets {marks['markets'] or '—'} · archive indexed snapshot "
        f"{marks['archive_indexed'] or '—'}"
    )
    if info["pull_pending"]:
        lines.append(
            f"pull pending since {info['pull_pending']['listed_at']} (resumes at the next pull)"
        )
    for s in info["sweeps"]:
        lines.append(
            f"sweep {s['sweep']}: {s['batches_done']} batch(es) done ({s['markets']} market(s)), "
            f"{s['batches_pending']} pending; last run {s['last_run'] or '—'}"
        )
    lines.append(
        f"failures: {len(info['failures'])}"
        + "".join(
            f"\n  {f['job']} {f['status']} at {f['started_at']}: {f['error']}"
            for f in info["failures"]
        )
    )
    return "\n".join(lines)
