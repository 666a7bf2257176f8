"""The service: one lock holder running jobs, by hand (`once`) or on APScheduler (`run`).

Only this package and the CLI read the wall clock. A `Service` gets a clock for the
instant its jobs receive as `now` (the wall clock in production, a fixed or simulated
instant in tests and backfills) and a separate wall clock for its job-run records.

`serve` runs the jobs on APScheduler 3.x with a persistent `SQLAlchemyJobStore` in the
run database: a job keeps its next run time across restarts, and a run missed while the
service was down happens as soon as it starts again (once, however many were missed).
Jobs run one at a time, in a single worker thread; a job that changed something makes the
jobs downstream of it due at once (pull, inbox → sweeps → export). SIGTERM stops the
service gracefully: no new job starts, a running sweep stops after its current forecast
(its batch is resumed at the next start), any other job finishes.

The service's model calls go through one `Models` value built here exactly as
`hindcast sweep` builds its own: keys from the service's environment, responses cached
persistently beside the run database (`responses.db`), so a configured sweep uses the
keys of `key_env=` and never repeats a model call it already made. It is closed (the
embedded local model server stopped) when the service stops.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TextIO

from hindcast import environment, replay, runs
from hindcast.errors import HindcastError, Interrupted, ScheduleError, StoppedError
from hindcast.schedule import logs
from hindcast.schedule.config import JOBS, ScheduleConfig
from hindcast.schedule.jobs import JOB_FUNCTIONS, JobContext
from hindcast.schedule.lock import InstanceLock
from hindcast.schedule.state import State
from hindcast.timeutil import iso

# APScheduler ships no types: its BackgroundScheduler (and its job events) are untyped here
Scheduler = Any

JOBSTORE_TABLE = "schedule_apscheduler_jobs"
DOWNSTREAM = {"pull": "sweeps", "inbox": "sweeps", "sweeps": "export"}
Clock = Callable[[], datetime]


def wall_clock() -> datetime:
    """The wall clock (read only here and in the CLI)."""
    return datetime.now(UTC)


@dataclass(frozen=True)
class Outcome:
    status: (
        str  # ok | failed | interrupted | stopped (budget, circuit breaker: resumable) | skipped
    )
    detail: dict | None = None

    @property
    def changed(self) -> bool:
        return bool(self.detail and self.detail.get("changed"))


class Service:
    def __init__(
        self,
        config: ScheduleConfig,
        clock: Clock = wall_clock,
        wall: Clock = wall_clock,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.config, self.clock, self.wall = config, clock, wall
        self.store = runs.RunStore(config.db_url)
        self.state = State(self.store.engine)
        self.stopping = threading.Event()
        self.models = replay.default_models(self.store, config.runs_out, environment.of(env))

    def close(self) -> None:
        """Stop the embedded local model server (if one was started) and
        close the response cache."""
        self.models.close()

    def run_job(self, name: str, now: datetime | None = None) -> Outcome:
        """Run one job, recorded and logged (skipped once the service is stopping)."""
        if self.stopping.is_set():
            logs.event("job.skipped", job=name, reason="the service is stopping")
            return Outcome("skipped")
        now = now or self.clock()
        record = self.state.job_started(name, now, self.wall())
        logs.event("job.started", job=name, now=iso(now), run=record)
        try:
            detail = JOB_FUNCTIONS[name](
                JobContext(
                    self.config, self.state, self.store, now, self._advance, models=self.models
                )
            )
        except Interrupted as exc:
            return self._ended(record, name, "interrupted", str(exc))
        except (
            StoppedError
        ) as exc:  # a budget or circuit breaker: what was answered is kept; resumed next time
            return self._ended(record, name, "stopped", str(exc))
        except Exception as exc:  # a failed job is recorded and reported; the service goes on
            return self._ended(record, name, "failed", f"{type(exc).__name__}: {exc}", exc)
        self.state.job_finished(record, "ok", self.wall(), detail)
        logs.event("job.finished", job=name, run=record, detail=detail)
        return Outcome("ok", detail)

    def once(self, now: datetime | None = None) -> dict[str, str]:
        """Every configured job once, in order (pull, inbox, sweeps, export), at one instant:
        each job's status (ok, failed, interrupted, skipped)."""
        now = now or self.clock()
        return {job: self.run_job(job, now).status for job in self.config.jobs}

    def _ended(
        self, record: int, name: str, status: str, error: str, exc: Exception | None = None
    ) -> Outcome:

        self.state.job_finished(record, status, self.wall(), {}, error)
        trace = exc if exc is not None and not isinstance(exc, HindcastError) else None
        logs.event(
            f"job.{status}",
            logging.ERROR if exc else logging.WARNING,
            exc_info=trace,
            job=name,
            run=record,
            error=error,
        )
        return Outcome(status)

    def _advance(self) -> None:
        if self.stopping.is_set():
            raise Interrupted("stopped by a shutdown request; the batch resumes at the next start")


@contextmanager
def running(
    config: ScheduleConfig,
    command: str,
    clock: Clock = wall_clock,
    wall: Clock = wall_clock,
    log_stream: TextIO | None = None,
) -> Iterator[Service]:
    """Hold the single-instance lock, open the service, mark jobs a dead process left running."""
    logs.setup(config.log, log_stream)
    lock = InstanceLock(config.lock).acquire(command, wall())
    try:
        service = Service(config, clock, wall)
        try:
            stale = service.state.interrupt_running(wall())
            logs.event(
                "service.started",
                command=command,
                config=str(config.path),
                jobs=list(config.jobs),
                interrupted_before=stale,
            )
            yield service
            logs.event("service.stopped", command=command)
        finally:
            service.close()
    finally:
        lock.release()


# -- APScheduler --------------------------------------------------------------------------------
class ServiceSlot:
    """The service of this process (at most one) while it serves: the owner of the reference
    the persistent job store's jobs reach it by (a stored job names a function, not a service)."""

    def __init__(self) -> None:
        self._service: Service | None = None

    def hold(self, service: Service) -> None:
        self._service = service

    def release(self) -> None:
        self._service = None

    def run_job(self, name: str) -> bool:
        if self._service is None:
            raise ScheduleError(f"job {name!r} fired with no service running in this process")
        return self._service.run_job(name).changed


SERVING = ServiceSlot()
_WAKING = threading.Lock()


def scheduled_job(name: str) -> bool:
    """What the persistent job store calls (by reference): one job of this process's service."""
    return SERVING.run_job(name)


def serve(service: Service, stop: threading.Event) -> None:
    """Run the configured jobs on their intervals until `stop` is set, then shut down gracefully."""
    from apscheduler.events import EVENT_JOB_EXECUTED

    scheduler = _scheduler(service)
    SERVING.hold(service)
    try:
        scheduler.start(paused=True)
        reconcile(scheduler, service.config, wall_clock())
        scheduler.add_listener(
            lambda e: _wake_downstream(scheduler, service, e), EVENT_JOB_EXECUTED
        )
        scheduler.resume()
        logs.event("scheduler.running", jobs=next_runs(scheduler))
        while not stop.wait(0.5):
            pass
        with _WAKING:  # no wake-up is half done when the scheduler starts shutting down
            service.stopping.set()
        logs.event("service.stopping", reason="shutdown requested; waiting for the running job")
        scheduler.shutdown(wait=True)
    finally:
        SERVING.release()


def _scheduler(service: Service) -> Scheduler:
    from apscheduler.executors.pool import ThreadPoolExecutor
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.schedulers.background import BackgroundScheduler

    return BackgroundScheduler(
        jobstores={
            "default": SQLAlchemyJobStore(engine=service.store.engine, tablename=JOBSTORE_TABLE)
        },
        executors={"default": ThreadPoolExecutor(1)},
        job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
        timezone=UTC,
    )


def reconcile(scheduler: Scheduler, config: ScheduleConfig, now: datetime) -> None:
    """Make the job store hold exactly the configured jobs. A job already stored with the same
    interval keeps its next run time (a run missed while down happens at once); a new or
    changed one runs now, in pipeline order."""
    wanted = {job: config.every[job] for job in config.jobs}
    for job in scheduler.get_jobs():
        if job.id not in wanted:
            job.remove()
    for name, every in wanted.items():
        stored = scheduler.get_job(name)
        if stored is not None and stored.trigger.interval == every:
            continue
        first = now + timedelta(seconds=JOBS.index(name))  # one worker: pull, inbox, sweeps, export
        scheduler.add_job(
            scheduled_job,
            "interval",
            seconds=every.total_seconds(),
            id=name,
            name=name,
            args=[name],
            replace_existing=True,
            next_run_time=first,
        )


def _wake_downstream(scheduler: Scheduler, service: Service, event: Any) -> None:
    """A job that changed something makes the next one of the pipeline due now (never while
    stopping: the scheduler is shutting down)."""
    after = DOWNSTREAM.get(event.job_id)
    with _WAKING:
        if (
            event.retval
            and after
            and not service.stopping.is_set()
            and scheduler.get_job(after) is not None
        ):
            scheduler.modify_job(after, next_run_time=wall_clock())


def next_runs(scheduler: Scheduler) -> dict[str, str | None]:
    return {job.id: job.next_run_time and iso(job.next_run_time) for job in scheduler.get_jobs()}
