"""The service's own records, in the run database beside the runs (tables `schedule_*`).

- job runs: one row per job execution (running → ok | failed | interrupted), for `status`;
- values: watermarks and intents (a pull begun, the newest indexed snapshot), JSON by key;
- inbox files: (name, sha256) of every dump file ingested, with the snapshot it went into;
- batches: the incremental sweep runs of a configured sweep, written *before* the run is
  made (pending) and closed after it (done), so a killed batch is resumed with its exact
  spec — the same run id — and never re-planned into a run that would duplicate its rows.

Tables are sqlmodel classes, the run store's idiom, on their own registry: nothing here is
added to the run store's tables (a run database the service never opened has none of them).
Their shape is the one the previous release wrote (a test compares it with its database), so
the file stays readable by either; they are created when missing, never migrated (they have
not changed since they were introduced).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Text
from sqlalchemy.orm import registry
from sqlmodel import Field, Session, SQLModel, select

from hindcast.timeutil import iso


class ServiceTable(SQLModel, registry=registry()):
    """The service's tables: their own MetaData, never the run store's."""


class JobRunRow(ServiceTable, table=True):
    __tablename__ = "schedule_job_runs"
    id: int | None = Field(default=None, primary_key=True)
    job: str
    now: str
    started_at: str
    finished_at: str | None = None
    status: str
    detail: str = Field(default="{}", sa_type=Text)
    error: str | None = Field(default=None, sa_type=Text)


class ValueRow(ServiceTable, table=True):
    __tablename__ = "schedule_values"
    key: str = Field(primary_key=True)
    value: str = Field(sa_type=Text)


class InboxRow(ServiceTable, table=True):
    __tablename__ = "schedule_inbox_files"
    name: str = Field(primary_key=True)
    sha256: str = Field(primary_key=True)
    source: str
    snapshot: str
    ingested_at: str


class BatchRow(ServiceTable, table=True):
    __tablename__ = "schedule_batches"
    id: int | None = Field(default=None, primary_key=True)
    sweep: str
    spec: str = Field(sa_type=Text)
    status: str
    run_id: str | None = None
    created: str
    finished: str | None = None
    markets: int
    forecasters: str = Field(sa_type=Text)


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
    def __init__(self, engine, create: bool = True) -> None:
        """`create`: make the tables that are missing (False: a reader's read-only engine)."""
        self.engine = engine
        if create:
            ServiceTable.metadata.create_all(engine)

    # -- job runs -------------------------------------------------------------------------
    def job_started(self, job: str, now: datetime, wall: datetime) -> int:
        return self._added(
            JobRunRow(job=job, now=iso(now), started_at=iso(wall), status="running")
        ).id

    def job_finished(
        self, run: int, status: str, wall: datetime, detail: dict, error: str | None = None
    ) -> None:
        with Session(self.engine) as session:
            row = session.get(JobRunRow, run)
            row.status, row.finished_at, row.detail, row.error = (
                status,
                iso(wall),
                _dumps(detail),
                error,
            )
            session.commit()

    def interrupt_running(self, wall: datetime) -> int:
        """Runs a dead process left `running` (only the lock holder calls this)."""
        with Session(self.engine) as session:
            rows = list(session.exec(select(JobRunRow).where(JobRunRow.status == "running")))
            for row in rows:
                row.status, row.finished_at = "interrupted", iso(wall)
                row.error = "the process ended during this job; the next run completes it"
            session.commit()
        return len(rows)

    def job_runs(
        self, job: str | None = None, status: str | None = None, limit: int = 20
    ) -> list[JobRun]:
        query = select(JobRunRow).order_by(JobRunRow.id.desc()).limit(limit)
        query = query.where(JobRunRow.job == job) if job else query
        query = query.where(JobRunRow.status == status) if status else query
        with Session(self.engine) as session:
            return [_job_run(r) for r in session.exec(query)]

    # -- values ---------------------------------------------------------------------------
    def get(self, key: str, default=None):
        with Session(self.engine) as session:
            row = session.get(ValueRow, key)
        return default if row is None else json.loads(row.value)

    def set(self, key: str, value) -> None:
        self.set_many({key: value})

    def set_many(self, values: dict) -> None:
        with Session(self.engine) as session:
            for key, value in values.items():
                session.merge(ValueRow(key=key, value=_dumps(value)))
            session.commit()

    def values(self, prefix: str = "") -> dict:
        with Session(self.engine) as session:
            rows = session.exec(
                select(ValueRow).where(ValueRow.key.startswith(prefix)).order_by(ValueRow.key)
            )
            return {r.key: json.loads(r.value) for r in rows}

    # -- inbox ----------------------------------------------------------------------------
    def ingested(self) -> set[tuple[str, str]]:
        with Session(self.engine) as session:
            return set(session.exec(select(InboxRow.name, InboxRow.sha256)))

    def record_ingest(
        self, files: list[tuple[str, str, str]], snapshot: str, now: datetime
    ) -> None:
        """Mark (name, sha256, source) files ingested into `snapshot`, and
        make it the indexed one."""
        with Session(self.engine) as session:
            for name, sha, source in files:
                session.add(
                    InboxRow(
                        name=name,
                        sha256=sha,
                        source=source,
                        snapshot=snapshot,
                        ingested_at=iso(now),
                    )
                )
            session.merge(ValueRow(key="archive:indexed", value=_dumps(snapshot)))
            session.commit()

    # -- batches --------------------------------------------------------------------------
    def open_batch(self, sweep: str, spec: dict, now: datetime) -> Batch:
        row = self._added(
            BatchRow(
                sweep=sweep,
                spec=_dumps(spec),
                status="pending",
                created=iso(now),
                markets=len(spec["market_ids"]),
                forecasters=_dumps(spec["forecasters"]),
            )
        )
        return self.batch(row.id)

    def close_batch(self, bid: int, run_id: str, now: datetime) -> None:
        with Session(self.engine) as session:
            row = session.get(BatchRow, bid)
            row.status, row.run_id, row.finished = "done", run_id, iso(now)
            session.commit()

    def batch(self, bid: int) -> Batch:
        return self.batches(bid=bid)[0]

    def batches(
        self, sweep: str | None = None, status: str | None = None, bid: int | None = None
    ) -> list[Batch]:
        query = select(BatchRow).order_by(BatchRow.id)
        query = query.where(BatchRow.sweep == sweep) if sweep else query
        query = query.where(BatchRow.status == status) if status else query
        query = query.where(BatchRow.id == bid) if bid is not None else query
        with Session(self.engine) as session:
            return [_batch(r) for r in session.exec(query)]

    def _added(self, row):
        """Insert one row; it comes back with its generated id."""
        with Session(self.engine) as session:
            session.add(row)
            session.commit()
            session.refresh(row)
            session.expunge(row)
        return row


def _job_run(r: JobRunRow) -> JobRun:
    return JobRun(
        r.id, r.job, r.now, r.started_at, r.finished_at, r.status, json.loads(r.detail), r.error
    )


def _batch(r: BatchRow) -> Batch:
    return Batch(
        r.id,
        r.sweep,
        json.loads(r.spec),
        r.status,
        r.run_id,
        r.created,
        r.finished,
        r.markets,
        tuple(json.loads(r.forecasters)),
    )


def _dumps(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
