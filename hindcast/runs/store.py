"""The run store: runs, every forecast (probability or failure) and every
outage, in SQL via sqlmodel.

SQLite in WAL mode by default (`sqlite:///runs/hindcast.db`); any SQLAlchemy URL works.
Each forecast is committed as it arrives, keyed by (run, forecaster, market, t0, repeat,
attempt), so a killed sweep resumes with nothing lost and nothing duplicated. `attempt`
is 0, or n for the n-th retry of a stored failure (`--retry-failed`): old attempts are
kept, and everything that scores or plans reads the newest attempt of each key.

An outage (the model could not be reached) is never a forecast: it is an `attempts` row
(kind, reason, instant) kept for audit, and the next run asks again.

The schema is versioned on SQLite and PostgreSQL (`runs.migrations`: `PRAGMA user_version`
or a `hindcast_schema` table under an advisory lock, an ordered list of steps per dialect). Opening
for writing migrates an older database in place, in one transaction, and a second process opening at
the same moment waits, then finds it done; a read-only open migrates nothing and refuses an older
database with what to run; a database newer than this code is refused, never used. A run is created
once however many processes open the database together. A file that is not a readable SQLite
database, or a folder that cannot be written, is a `RunStoreError` naming the path;
nothing is written to it.

Inserts are idempotent by constraint (INSERT … ON CONFLICT DO NOTHING); a read-only open of
PostgreSQL runs every transaction READ ONLY (the server refuses writes); rows are returned in
code-point order computed here, never by the server's collation, so an export is the same bytes
on either backend. Any other SQLAlchemy URL gets the current tables created as they are and no
version: it is never migrated, and one of an older shape is refused.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.exc import DBAPIError
from sqlmodel import Session, SQLModel, col, select

from hindcast.errors import ConfigError, RunStoreError
from hindcast.records import Forecast, Retrieval, RunIdentity, RunManifest
from hindcast.runs import migrations
from hindcast.runs.database import (
    check_readable,
    db_file,
    db_url,
    open_engine,
    open_readonly_engine,
    open_reason,
    prepare_other,
    racing,
    raw_connection,
    shown,
)
from hindcast.runs.forms import identity_form, manifest_form
from hindcast.runs.rows import StoredForecast, dumps, forecast_row, stored_forecast
from hindcast.runs.tables import CLAIMS, AttemptRow, ClaimRow, CoverageRow, ForecastRow, RunRow
from hindcast.timeutil import iso, parse_utc

if TYPE_CHECKING:
    from sqlalchemy import Delete, Table
    from sqlalchemy.dialects.postgresql import Insert as PgInsert
    from sqlalchemy.dialects.sqlite import Insert as SqliteInsert

VERSIONED = (
    "sqlite",
    "postgresql",
)  # dialects with a schema version and migrations (runs.migrations)
OPEN_TRIES = 20  # opening a new database while other processes create it too
SCHEMA_VERSION = migrations.CURRENT


TAKEN, HELD, DONE = "taken", "held", "done"  # what `RunStore.claim` found


class RunStore:
    """`read_only`: never create or change anything (a SQLite file is opened with
    `mode=ro`; no table is created, no migration run); a missing SQLite file is
    `NoRunDatabase`, a database without hindcast's tables a `RunStoreError`.

    `schema_version`: the database's version once open; `migrated`: the versions this open
    brought it through (() when it was current)."""

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        self.url, self.read_only = url, read_only
        self.schema_version = SCHEMA_VERSION
        self.migrated: tuple[int, ...] = ()
        self.engine = open_readonly_engine(url) if read_only else open_engine(url)
        for attempt in range(OPEN_TRIES):
            try:
                self._prepare()
                return
            except (DBAPIError, sqlite3.Error, self.engine.dialect.loaded_dbapi.Error) as exc:
                if (
                    racing(exc) and attempt < OPEN_TRIES - 1
                ):  # another process is creating the same database
                    time.sleep(0.05 * (attempt + 1))
                    continue
                self.engine.dispose()
                raise RunStoreError(f"run database {shown(url)}: {open_reason(exc)}") from None
            except RunStoreError:
                self.engine.dispose()
                raise

    def _prepare(self) -> None:
        if (path := db_file(self.url)) is not None:  # before a connection switches it to WAL
            migrations.refuse_foreign_file(path, shown(self.url))
        check_readable(self.engine, self.url)
        if self.engine.dialect.name not in VERSIONED:
            prepare_other(self.engine, self.url, self.read_only)
            return
        with raw_connection(self.engine, self.read_only) as db:
            if self.read_only:
                self.schema_version = migrations.check(db, shown(self.url))
            else:
                self.migrated = migrations.upgrade(db, shown(self.url))

    def close(self) -> None:
        self.engine.dispose()

    def ensure_run(
        self,
        run_id: str,
        spec: RunIdentity | Mapping[str, object],
        manifest: RunManifest | Mapping[str, object],
        created_at: datetime,
    ) -> bool:
        """Create the run if new; return False when it already existed (a resume, or a
        second sweep of the same run that created it a moment before). Records are stored in
        their JSON form (`hindcast.runs.forms`); a stored form (a mapping) is stored as given."""
        with Session(self.engine) as session:
            if session.get(RunRow, run_id) is not None:
                return False
        return self._insert_once(
            RunRow(
                id=run_id,
                created_at=iso(created_at),
                spec_json=dumps(identity_form(spec) if isinstance(spec, RunIdentity) else spec),
                manifest_json=dumps(
                    manifest_form(manifest) if isinstance(manifest, RunManifest) else manifest
                ),
            )
        )

    def run(self, run_id: str) -> RunRow:
        with Session(self.engine) as session:
            row = session.get(RunRow, run_id)
        if row is None:
            raise RunStoreError(f"no run {run_id!r} in {shown(self.url)}")
        return row

    def runs(self) -> list[RunRow]:
        with Session(self.engine) as session:
            rows = list(session.exec(select(RunRow)))
        return sorted(
            rows, key=lambda r: (r.created_at, r.id)
        )  # code-point order on every backend (no collation)

    def latest(self, run_id: str) -> dict[tuple[str, str, str, int], tuple[int, bool]]:
        """(forecaster, market_id, t0 ISO, repeat) → (newest attempt, whether it
        is a valid forecast)."""
        with Session(self.engine) as session:
            # SQLModel's select() is typed for up to 4 columns (a stubs gap, not a type error)
            rows = session.exec(
                select(  # type: ignore[call-overload]
                    ForecastRow.forecaster,
                    ForecastRow.market_id,
                    ForecastRow.t0,
                    ForecastRow.repeat,
                    ForecastRow.attempt,
                    ForecastRow.probability,
                ).where(ForecastRow.run_id == run_id)
            )
            out: dict = {}
            for forecaster, market, t0, repeat, attempt, probability in rows:
                key = (forecaster, market, t0, repeat)
                if key not in out or attempt > out[key][0]:
                    out[key] = (attempt, probability is not None)
            return out

    def done_keys(self, run_id: str, retry_failed: bool = False) -> set[tuple[str, str, str, int]]:
        """Keys stored for a run (with `retry_failed`, only those whose newest attempt is valid)."""
        return {k for k, (_, ok) in self.latest(run_id).items() if ok or not retry_failed}

    def retry_attempts(
        self, run_id: str, limit: int | None = None
    ) -> dict[tuple[str, str, str, int], int]:
        """Key → the attempt number a retry of its stored failure gets (newest + 1); with
        `limit`, only failures retried fewer than `limit` times."""
        return {
            k: attempt + 1
            for k, (attempt, ok) in self.latest(run_id).items()
            if not ok and (limit is None or attempt < limit)
        }

    def add(
        self,
        run_id: str,
        forecaster: str,
        market_id: str,
        t0: datetime,
        label: str,
        forecast: Forecast,
        retrievals: tuple[Retrieval, ...] = (),
        repeat: int = 0,
        attempt: int = 0,
        release: str | None = None,
    ) -> bool:
        """Store one forecast; False if that key and attempt was already
        stored (never a duplicate). `release`: the claim owner whose claim on it is dropped in the
        same transaction (a process killed right after leaves no claim of a stored forecast)."""
        values = forecast_row(
            run_id, forecaster, market_id, t0, label, forecast, retrievals, repeat, attempt
        )
        key = (forecaster, market_id, values["t0"], repeat)
        release_of = None if release is None else (run_id, key, attempt, release)
        return self._insert_once(ForecastRow(**values), release_of)

    def add_attempt(
        self,
        run_id: str,
        forecaster: str,
        market_id: str,
        t0: datetime,
        repeat: int,
        kind: str,
        reason: str,
        at: datetime,
    ) -> None:
        """Log one outage of a forecast (it stays unasked: the next run asks again)."""
        with Session(self.engine) as session:
            session.add(
                AttemptRow(
                    run_id=run_id,
                    forecaster=forecaster,
                    market_id=market_id,
                    t0=iso(t0),
                    repeat=repeat,
                    kind=kind,
                    reason=reason,
                    at=iso(at),
                )
            )
            session.commit()

    def attempts(self, run_id: str) -> list[AttemptRow]:
        with Session(self.engine) as session:
            return list(
                session.exec(
                    select(AttemptRow)
                    .where(AttemptRow.run_id == run_id)
                    .order_by(col(AttemptRow.id))
                )
            )

    def add_coverage(
        self, run_id: str, market_id: str, t0: datetime, n_relevant: int, stratum: str
    ) -> None:
        with Session(self.engine) as session:
            session.merge(
                CoverageRow(
                    run_id=run_id,
                    market_id=market_id,
                    t0=iso(t0),
                    n_relevant=n_relevant,
                    stratum=stratum,
                )
            )
            session.commit()

    def coverage(self, run_id: str) -> dict[tuple[str, object], str]:
        """(market_id, t0) → stratum, for the cutoffs labelled so far."""
        with Session(self.engine) as session:
            rows = session.exec(select(CoverageRow).where(CoverageRow.run_id == run_id))
            return {(r.market_id, parse_utc(r.t0)): r.stratum for r in rows}

    # ---- claims: concurrent sweeps of one run never ask the same forecast twice ------------
    def claim(
        self,
        run_id: str,
        key: tuple[str, str, str, int],
        attempt: int,
        owner: str,
        now: float,
        lease: float,
        gone: Callable[[str], bool] = lambda owner: False,
    ) -> str:
        """Take forecast `key` (forecaster, market, t0 ISO, repeat), `attempt`, for `owner` until
        `now + lease`: TAKEN (ask it), HELD (another owner's unexpired claim whose owner is not
        `gone`: leave it), or DONE (already stored: nothing to ask). A claim is one INSERT, or an
        UPDATE guarded by the old owner and expiry (compare-and-swap), so of processes racing
        for one key exactly one takes it; plain SQL on every dialect."""
        match = _claim_match(run_id, key, attempt)
        for _ in range(3):
            if self._insert_claim(run_id, key, attempt, owner, now + lease):
                break
            held = self._claim_holder(match)
            if held is None:
                continue  # released meanwhile: try again
            if held[1] > now and not gone(held[0]):
                return HELD
            if self._steal_claim(match, held, owner, now + lease):
                break
            return HELD
        else:
            return HELD
        if self._has_forecast(run_id, key, attempt):
            self.release(run_id, key, attempt, owner)
            return DONE
        return TAKEN

    def release(
        self, run_id: str, key: tuple[str, str, str, int], attempt: int, owner: str
    ) -> None:
        """Drop `owner`'s claim on the forecast (after storing it, or giving it up)."""
        with self.engine.begin() as conn:
            conn.execute(_release(run_id, key, attempt, owner))

    def release_all(self, run_id: str, owner: str) -> None:
        """Drop every claim `owner` still holds in the run (a sweep leaving, even cancelled)."""
        from sqlalchemy import delete

        with self.engine.begin() as conn:
            conn.execute(delete(CLAIMS).where(CLAIMS.c.run_id == run_id, CLAIMS.c.owner == owner))

    def renew(self, run_id: str, owner: str, until: float) -> None:
        """Extend every claim `owner` holds in the run to `until` (a sweep's heartbeat)."""
        from sqlalchemy import update

        with self.engine.begin() as conn:
            conn.execute(
                update(CLAIMS)
                .where(CLAIMS.c.run_id == run_id, CLAIMS.c.owner == owner)
                .values(expires_at=until)
            )

    def _insert_claim(
        self, run_id: str, key: tuple, attempt: int, owner: str, until: float
    ) -> bool:
        forecaster, market_id, t0, repeat = key
        return self._insert_once(
            ClaimRow(
                run_id=run_id,
                forecaster=forecaster,
                market_id=market_id,
                t0=t0,
                repeat=repeat,
                attempt=attempt,
                owner=owner,
                expires_at=until,
            )
        )

    def _insert_once(self, row: SQLModel, release: tuple | None = None) -> bool:
        """Insert `row` in its own transaction; False when its key is there already (an
        INSERT … ON CONFLICT DO NOTHING: the constraint decides, no error is raised or logged).
        `release` (run, key, attempt, owner): that claim is deleted in the same transaction."""
        table = type(row).__table__  # type: ignore[attr-defined]
        values = {
            c.name: getattr(row, c.name)
            for c in table.columns
            if getattr(row, c.name) is not None
            or not (c.primary_key and c.autoincrement is not False and c.name == "id")
        }
        if self.engine.dialect.name not in VERSIONED:
            return self._insert_or_integrity_error(table, values)
        statement = (
            _insert(self.engine.dialect.name, table).values(**values).on_conflict_do_nothing()
        )
        with (
            self.engine.begin() as conn
        ):  # RETURNING: a row back iff inserted (psycopg's rowcount is -1 here)
            inserted = conn.execute(statement.returning(*table.primary_key.columns)).first()
            if release is not None:
                run_id, key, attempt, owner = release
                conn.execute(_release(run_id, key, attempt, owner))
            return inserted is not None

    def _insert_or_integrity_error(self, table: Table, values: dict) -> bool:
        """A dialect without ON CONFLICT: the constraint's error says the key is there."""
        from sqlalchemy import insert
        from sqlalchemy.exc import IntegrityError

        try:
            with self.engine.begin() as conn:
                conn.execute(insert(table).values(**values))
        except IntegrityError:
            return False
        return True

    def _claim_holder(self, match: list) -> tuple[str, float] | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(CLAIMS.c.owner, CLAIMS.c.expires_at).where(*match)).first()
        return None if row is None else (row[0], float(row[1]))

    def _steal_claim(self, match: list, held: tuple[str, float], owner: str, until: float) -> bool:
        from sqlalchemy import update

        with self.engine.begin() as conn:
            done = conn.execute(
                update(CLAIMS)
                .where(*match, CLAIMS.c.owner == held[0], CLAIMS.c.expires_at == held[1])
                .values(owner=owner, expires_at=until)
            )
        return done.rowcount == 1

    def _has_forecast(self, run_id: str, key: tuple, attempt: int) -> bool:
        forecaster, market_id, t0, repeat = key
        with Session(self.engine) as session:
            found = session.exec(
                select(ForecastRow.id).where(
                    ForecastRow.run_id == run_id,
                    ForecastRow.forecaster == forecaster,
                    ForecastRow.market_id == market_id,
                    ForecastRow.t0 == t0,
                    ForecastRow.repeat == repeat,
                    ForecastRow.attempt >= attempt,
                )
            ).first()
        return found is not None

    def forecasts(self, run_id: str, all_attempts: bool = False) -> list[StoredForecast]:
        """The run's forecasts: the newest attempt of each key (every attempt
        with `all_attempts`)."""
        self.run(run_id)
        with Session(self.engine) as session:
            rows = sorted(
                session.exec(select(ForecastRow).where(ForecastRow.run_id == run_id)),
                key=lambda r: (r.forecaster, r.market_id, r.t0, r.repeat, r.attempt),
            )  # code-point order
            # on every backend: a server's collation (en_US on PostgreSQL) never reorders an export
        if not all_attempts:
            newest = {
                (r.forecaster, r.market_id, r.t0, r.repeat): r for r in rows
            }  # ordered by attempt
            rows = [r for r in rows if newest[(r.forecaster, r.market_id, r.t0, r.repeat)] is r]
        return [stored_forecast(row) for row in rows]


def _insert(dialect: str, table: Table) -> PgInsert | SqliteInsert:
    """The dialect's INSERT with ON CONFLICT (SQLite and PostgreSQL both have it)."""
    from sqlalchemy.dialects import postgresql, sqlite

    return postgresql.insert(table) if dialect == "postgresql" else sqlite.insert(table)


def _release(run_id: str, key: tuple, attempt: int, owner: str) -> Delete:
    from sqlalchemy import delete

    return delete(CLAIMS).where(*_claim_match(run_id, key, attempt), CLAIMS.c.owner == owner)


def _claim_match(run_id: str, key: tuple, attempt: int) -> list:
    forecaster, market_id, t0, repeat = key
    c = CLAIMS.c
    return [
        c.run_id == run_id,
        c.forecaster == forecaster,
        c.market_id == market_id,
        c.t0 == t0,
        c.repeat == repeat,
        c.attempt == attempt,
    ]


def open_store(
    db: str | Path | None, runs: RunStore | None = None, where: str = "hindcast.sweep"
) -> RunStore:
    """The run database given as `db` (a path or URL, read as `db_url` reads it) or `runs` (an open
    RunStore), not both."""
    if runs is not None and db is not None:
        raise ConfigError(
            f"{where}: give the run database as db= (a path or URL) or runs= (an open RunStore), "
            "not both"
        )
    return runs if runs is not None else RunStore(db_url(db))
