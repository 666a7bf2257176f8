"""The service's own records, in the run database beside the runs (tables `schedule_*`).

- job runs: one row per job execution (running → ok | failed | interrupted), for `status`;
- values: watermarks and intents (a pull begun, the newest indexed snapshot), JSON by key;
- inbox files: (name, sha256) of every dump file ingested, with the snapshot it went into;
- batches: the incremental sweep runs of a configured sweep, written *before* the run is
  made (pending) and closed after it (done), so a killed batch is resumed with its exact
  spec — the same run id — and never re-planned into a run that would duplicate its rows.

SQLAlchemy Core on its own MetaData: nothing here is added to the run store's tables.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import (
    Column,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    insert,
    select,
    update,
)

from hindcast.timeutil import iso

META = MetaData()
JOB_RUNS = Table("schedule_job_runs", META,
                 Column("id", Integer, primary_key=True, autoincrement=True), Column("job", String, nullable=False),
                 Column("now", String, nullable=False), Column("started_at", String, nullable=False),
                 Column("finished_at", String), Column("status", String, nullable=False),
                 Column("detail", Text, nullable=False, default="{}"), Column("error", Text))
VALUES = Table("schedule_values", META, Column("key", String, primary_key=True), Column("value", Text, nullable=False))
INBOX = Table("schedule_inbox_files", META, Column("name", String, primary_key=True),
              Column("sha256", String, primary_key=True), Column("source", String, nullable=False),
              Column("snapshot", String, nullable=False), Column("ingested_at", String, nullable=False))
BATCHES = Table("schedule_batches", META,
                Column("id", Integer, primary_key=True, autoincrement=True), Column("sweep", String, nullable=False),
                Column("spec", Text, nullable=False), Column("status", String, nullable=False),
                Column("run_id", String), Column("created", String, nullable=False), Column("finished", String),
                Column("markets", Integer, nullable=False), Column("forecasters", Text, nullable=False))


@dataclass(frozen=True)
class JobRun:
    id: int
    job: str
    now: str
    started_at: str
    finished_at: str | None
    status: str
    detail: dict
    error: str | None


@dataclass(frozen=True)
class Batch:
    id: int
    sweep: str
    spec: dict
    status: str
    run_id: str | None
    created: str
    finished: str | None
    markets: int
    forecasters: tuple[str, ...]


class State:
    def __init__(self, engine):
        self.engine = engine
        META.create_all(engine)

    # -- job runs -------------------------------------------------------------------------
    def job_started(self, job: str, now: datetime, wall: datetime) -> int:
        with self.engine.begin() as c:
            return c.execute(insert(JOB_RUNS).values(job=job, now=iso(now), started_at=iso(wall), status="running",
                                                     detail="{}")).inserted_primary_key[0]

    def job_finished(self, run: int, status: str, wall: datetime, detail: dict, error: str | None = None) -> None:
        with self.engine.begin() as c:
            c.execute(update(JOB_RUNS).where(JOB_RUNS.c.id == run).values(
                status=status, finished_at=iso(wall), detail=_dumps(detail), error=error))

    def interrupt_running(self, wall: datetime) -> int:
        """Runs a dead process left `running` (only the lock holder calls this)."""
        with self.engine.begin() as c:
            return c.execute(update(JOB_RUNS).where(JOB_RUNS.c.status == "running").values(
                status="interrupted", finished_at=iso(wall),
                error="the process ended during this job; the next run completes it")).rowcount

    def job_runs(self, job: str | None = None, status: str | None = None, limit: int = 20) -> list[JobRun]:
        query = select(JOB_RUNS).order_by(JOB_RUNS.c.id.desc()).limit(limit)
        query = query.where(JOB_RUNS.c.job == job) if job else query
        query = query.where(JOB_RUNS.c.status == status) if status else query
        with self.engine.connect() as c:
            return [JobRun(**{**r._mapping, "detail": json.loads(r.detail)}) for r in c.execute(query)]

    # -- values ---------------------------------------------------------------------------
    def get(self, key: str, default=None):
        with self.engine.connect() as c:
            value = c.execute(select(VALUES.c.value).where(VALUES.c.key == key)).scalar()
        return default if value is None else json.loads(value)

    def set(self, key: str, value) -> None:
        with self.engine.begin() as c:
            _put(c, key, value)

    def set_many(self, values: dict) -> None:
        with self.engine.begin() as c:
            for key, value in values.items():
                _put(c, key, value)

    def values(self, prefix: str = "") -> dict:
        with self.engine.connect() as c:
            rows = c.execute(select(VALUES).where(VALUES.c.key.startswith(prefix)).order_by(VALUES.c.key))
            return {r.key: json.loads(r.value) for r in rows}

    # -- inbox ----------------------------------------------------------------------------
    def ingested(self) -> set[tuple[str, str]]:
        with self.engine.connect() as c:
            return {(r.name, r.sha256) for r in c.execute(select(INBOX.c.name, INBOX.c.sha256))}

    def record_ingest(self, files: list[tuple[str, str, str]], snapshot: str, now: datetime) -> None:
        """Mark (name, sha256, source) files ingested into `snapshot`, and make it the indexed one."""
        with self.engine.begin() as c:
            for name, sha, source in files:
                c.execute(insert(INBOX).values(name=name, sha256=sha, source=source, snapshot=snapshot,
                                               ingested_at=iso(now)))
            _put(c, "archive:indexed", snapshot)

    # -- batches --------------------------------------------------------------------------
    def open_batch(self, sweep: str, spec: dict, now: datetime) -> Batch:
        with self.engine.begin() as c:
            bid = c.execute(insert(BATCHES).values(
                sweep=sweep, spec=_dumps(spec), status="pending", created=iso(now), markets=len(spec["market_ids"]),
                forecasters=_dumps(spec["forecasters"]))).inserted_primary_key[0]
        return self.batch(bid)

    def close_batch(self, bid: int, run_id: str, now: datetime) -> None:
        with self.engine.begin() as c:
            c.execute(update(BATCHES).where(BATCHES.c.id == bid).values(status="done", run_id=run_id,
                                                                          finished=iso(now)))

    def batch(self, bid: int) -> Batch:
        return self.batches(bid=bid)[0]

    def batches(self, sweep: str | None = None, status: str | None = None, bid: int | None = None) -> list[Batch]:
        query = select(BATCHES).order_by(BATCHES.c.id)
        query = query.where(BATCHES.c.sweep == sweep) if sweep else query
        query = query.where(BATCHES.c.status == status) if status else query
        query = query.where(BATCHES.c.id == bid) if bid is not None else query
        with self.engine.connect() as c:
            return [_batch(r) for r in c.execute(query)]


def _batch(r) -> Batch:
    m = r._mapping
    return Batch(**{**m, "spec": json.loads(m["spec"]), "forecasters": tuple(json.loads(m["forecasters"]))})


def _put(connection, key: str, value) -> None:
    text = _dumps(value)
    if connection.execute(update(VALUES).where(VALUES.c.key == key).values(value=text)).rowcount == 0:
        connection.execute(insert(VALUES).values(key=key, value=text))


def _dumps(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
