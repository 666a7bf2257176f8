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

import json
import os
import sqlite3
import time
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Optional
from urllib.parse import quote

from sqlalchemy import UniqueConstraint, event
from sqlalchemy.exc import DBAPIError
from sqlmodel import Field, Session, SQLModel, col, create_engine, select

from hindcast.errors import ConfigError, NoRunDatabase, RunStoreError
from hindcast.http import redact
from hindcast.records import Forecast, RunIdentity, RunManifest, Usage
from hindcast.runs import migrations
from hindcast.timeutil import iso, parse_utc

VERSIONED = (
    "sqlite",
    "postgresql",
)  # dialects with a schema version and migrations (runs.migrations)
OPEN_TRIES = 20  # opening a new database while other processes create it too
SCHEMA_VERSION = migrations.CURRENT


class RunRow(SQLModel, table=True):
    __tablename__ = "runs"
    id: str = Field(primary_key=True)
    created_at: str
    spec_json: str
    manifest_json: str


class ForecastRow(SQLModel, table=True):
    __tablename__ = "forecasts"
    __table_args__ = (
        UniqueConstraint(
            "run_id",
            "forecaster",
            "market_id",
            "t0",
            "repeat",
            "attempt",
            name="one_forecast_attempt",
        ),
    )
    id: Optional[int] = Field(default=None, primary_key=True)
    run_id: str = Field(index=True, foreign_key="runs.id")
    forecaster: str
    market_id: str
    t0: str  # canonical ISO UTC text: sortable and byte-stable
    label: str
    repeat: int = 0
    probability: Optional[float] = None
    error: Optional[str] = None
    rationale: str = ""
    evidence_json: str = "[]"
    usage_json: str = "{}"
    retrievals_json: str = "[]"  # every archive call: op, query, ids returned
    raw: str = ""
    attempt: int = 0  # 0, then 1, 2 … for each retry of a stored failure (the newest one counts)


class AttemptRow(SQLModel, table=True):
    """One outage: a forecast that could not be asked (never a stored forecast)."""

    __tablename__ = "attempts"
    id: Optional[int] = Field(default=None, primary_key=True)
    run_id: str = Field(index=True)
    forecaster: str
    market_id: str
    t0: str
    repeat: int = 0
    kind: str  # "infrastructure"
    reason: str
    at: str  # the sweep's `now` (ISO UTC)


class CoverageRow(SQLModel, table=True):
    """The archive-only coverage label of one (market, t0) of a run."""

    __tablename__ = "coverage"
    run_id: str = Field(primary_key=True, foreign_key="runs.id")
    market_id: str = Field(primary_key=True)
    t0: str = Field(primary_key=True)
    n_relevant: int
    stratum: str


class ClaimRow(SQLModel, table=True):
    """A lease: `owner` (one sweep process) is asking this forecast until `expires_at` (seconds
    since the epoch, by the sweep's clock); a claim past it, or of an owner known to be gone,
    may be taken by another process. Deleted once the forecast is stored or given up."""

    __tablename__ = "claims"
    run_id: str = Field(primary_key=True)
    forecaster: str = Field(primary_key=True)
    market_id: str = Field(primary_key=True)
    t0: str = Field(primary_key=True)
    repeat: int = Field(primary_key=True)
    attempt: int = Field(primary_key=True)
    owner: str
    expires_at: float


CLAIMS = ClaimRow.__table__  # type: ignore[attr-defined]  # the claims table, for plain SQL
TAKEN, HELD, DONE = "taken", "held", "done"  # what `RunStore.claim` found


@dataclass(frozen=True)
class StoredForecast:
    run_id: str
    forecaster: str
    market_id: str
    t0: datetime
    label: str
    forecast: Forecast
    repeat: int = 0


class RunStore:
    """`read_only`: never create or change anything (a SQLite file is opened with
    `mode=ro`; no table is created, no migration run); a missing SQLite file is
    `NoRunDatabase`, a database without hindcast's tables a `RunStoreError`.

    `schema_version`: the database's version once open; `migrated`: the versions this open
    brought it through (() when it was current)."""

    def __init__(self, url: str, *, read_only: bool = False):
        self.url, self.read_only = url, read_only
        self.schema_version = SCHEMA_VERSION
        self.migrated: tuple[int, ...] = ()
        self.engine = _readonly_engine(url) if read_only else _engine(url)
        for attempt in range(OPEN_TRIES):
            try:
                self._prepare()
                return
            except (DBAPIError, sqlite3.Error, self.engine.dialect.loaded_dbapi.Error) as exc:
                if (
                    _racing(exc) and attempt < OPEN_TRIES - 1
                ):  # another process is creating the same database
                    time.sleep(0.05 * (attempt + 1))
                    continue
                self.engine.dispose()
                raise RunStoreError(f"run database {_where(url)}: {_reason(exc)}") from None
            except RunStoreError:
                self.engine.dispose()
                raise

    def _prepare(self) -> None:
        if (path := db_file(self.url)) is not None:  # before a connection switches it to WAL
            migrations.refuse_foreign_file(path, _where(self.url))
        _check_readable(self.engine, self.url)
        if self.engine.dialect.name not in VERSIONED:
            _prepare_other(self.engine, self.url, self.read_only)
            return
        with _raw(self.engine, self.read_only) as db:
            if self.read_only:
                self.schema_version = migrations.check(db, _where(self.url))
            else:
                self.migrated = migrations.upgrade(db, _where(self.url))

    def close(self) -> None:
        self.engine.dispose()

    def ensure_run(
        self, run_id: str, spec: RunIdentity | Mapping, manifest: RunManifest | Mapping, created_at
    ) -> bool:
        """Create the run if new; return False when it already existed (a resume, or a
        second sweep of the same run that created it a moment before). `manifest`: a
        RunManifest (stored in its JSON form), or a stored manifest as it was."""
        with Session(self.engine) as session:
            if session.get(RunRow, run_id) is not None:
                return False
        return self._insert_once(
            RunRow(
                id=run_id,
                created_at=iso(created_at),
                spec_json=_dumps(dict(spec)),
                manifest_json=_dumps(
                    manifest.to_dict() if isinstance(manifest, RunManifest) else manifest
                ),
            )
        )

    def run(self, run_id: str) -> RunRow:
        with Session(self.engine) as session:
            row = session.get(RunRow, run_id)
        if row is None:
            raise RunStoreError(f"no run {run_id!r} in {_where(self.url)}")
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
        t0,
        label: str,
        forecast: Forecast,
        retrievals: tuple = (),
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
        t0,
        repeat: int,
        kind: str,
        reason: str,
        at,
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

    def add_coverage(self, run_id: str, market_id: str, t0, n_relevant: int, stratum: str) -> None:
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

    def _insert_or_integrity_error(self, table, values: dict) -> bool:
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
        return [_stored(row) for row in rows]


DB_ENV = "HINDCAST_DB"
DEFAULT_DB = Path("runs") / "hindcast.db"


def db_url(value: str | Path | None, env=None) -> str:
    """The run database a `--db` names: a URL (`scheme://…`) as is, a plain path a SQLite
    file; none given: the environment's HINDCAST_DB, else runs/hindcast.db."""
    import os

    env = os.environ if env is None else env
    text = str(value) if value not in (None, "") else (env.get(DB_ENV) or str(DEFAULT_DB))
    return text if "://" in text else f"sqlite:///{Path(text)}"


def db_file(url: str) -> Path | None:
    """The SQLite file of a URL (None for a database that is not a SQLite file)."""
    if not url.startswith("sqlite:///"):
        return None
    path = url.removeprefix("sqlite:///").partition("?")[0]
    return None if path in ("", ":memory:") else Path(path)


def _engine(url: str):
    if url.startswith("sqlite:///"):
        folder = Path(url.removeprefix("sqlite:///")).parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RunStoreError(
                f"run database {_where(url)}: cannot create folder {folder}: {exc.strerror or exc}"
            ) from None
    return _connect(url, _sqlite_pragmas)


def _readonly_engine(url: str):
    """An engine that cannot write. A SQLite file is opened without creating it (`mode=rw`,
    or `mode=ro` when the file is write-protected) with `PRAGMA query_only` (SQLite refuses
    every change) and no WAL switch. Not `mode=ro` always: a read-only connection to a WAL
    database leaves -wal/-shm files behind, a read-write one removes them on close."""
    path = db_file(url)
    if path is not None:
        if not path.exists():
            raise NoRunDatabase(f"no run database at {path}")
        if not path.is_file():
            raise RunStoreError(f"run database {path}: not a file")
        mode = "rw" if os.access(path, os.W_OK) and os.access(path.parent, os.W_OK) else "ro"
        url = f"sqlite:///file:{quote(str(path.resolve()))}?mode={mode}&uri=true"
    engine = _connect(url, _sqlite_read_pragmas)
    if (
        engine.dialect.name == "postgresql"
    ):  # every transaction BEGINs READ ONLY: the server refuses writes
        engine = engine.execution_options(postgresql_readonly=True)
    return engine


def _connect(url: str, sqlite_pragmas):
    """An engine for `url`; a SQLite connection gets `sqlite_pragmas` as it opens."""
    try:
        engine = create_engine(url)
    except Exception as exc:  # SQLAlchemy raises several types for a bad URL
        raise RunStoreError(f"cannot open run database {redact(url)!r}: {redact(exc)}") from None
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", sqlite_pragmas)
    return engine


def _prepare_other(engine, url: str, read_only: bool) -> None:
    """A database that is not SQLite: the current tables as they are, never migrated."""
    from sqlalchemy import inspect

    if not read_only:
        SQLModel.metadata.create_all(engine)
    tables = set(inspect(engine).get_table_names())
    if not {"runs", "forecasts"} <= tables:
        raise RunStoreError(
            f"run database {_where(url)} is not a hindcast run database (it has no runs/forecasts "
            "tables); point --db at one"
        )
    columns = {c["name"] for c in inspect(engine).get_columns("forecasts")}
    if "attempt" not in columns or not {"attempts", "coverage"} <= tables:
        raise RunStoreError(
            f"run database {_where(url)} was written by an older hindcast; only a SQLite run "
            "database is migrated: point --db at a new database"
        )


@contextmanager
def _raw(engine, read_only: bool):
    """The DB-API connection of one pooled connection, as the migrations want it: SQLite's in
    autocommit mode (they issue their own BEGIN IMMEDIATE), psycopg's in a transaction (they
    commit it), read-only when `read_only` (the server refuses any write). Its modes are
    restored, and any transaction left rolled back, before it goes back to the pool."""
    with engine.connect() as conn:  # (not raw_connection(): a failed connect is then a DBAPIError)
        db = conn.connection.driver_connection
        sqlite = engine.dialect.name == "sqlite"
        before = db.isolation_level if sqlite else db.read_only
        if sqlite:
            db.isolation_level = None
        else:
            db.read_only = read_only
        try:
            yield db
        finally:
            if sqlite:
                db.isolation_level = before
            else:
                db.rollback()
                db.read_only = before


def _check_readable(engine, url: str) -> None:
    """An existing SQLite file must be a whole database: refuse a corrupt or truncated one."""
    path = db_file(url)
    if engine.dialect.name != "sqlite" or path is None or not path.is_file():
        return
    with engine.connect() as conn:
        result = conn.exec_driver_sql("PRAGMA quick_check(1)").scalar()
    if result != "ok":
        raise RunStoreError(
            f"run database {_where(url)} is damaged ({result}); restore it or point --db elsewhere"
        )


def _racing(exc) -> bool:
    """An error another process opening the same SQLite database can cause at the same moment:
    SQLite refusing a read-then-write upgrade while it wrote. (Creating tables never races: the
    migrations hold the one write lock, BEGIN IMMEDIATE or PostgreSQL's advisory lock.)"""
    return "database is locked" in str(exc)


def _where(url: str) -> str:
    """The database as messages name it: a SQLite file's path, else the URL without credentials."""
    return url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else redact(url)


def _reason(exc: Exception) -> str:
    orig = getattr(exc, "orig", None) or exc
    text = redact(str(orig).splitlines()[0]) if str(orig) else type(orig).__name__
    if "not a database" in text or "malformed" in text:
        return f"not a readable SQLite database ({text}); restore it or point --db elsewhere"
    if "unable to open" in text or "readonly" in text or "read-only" in text:
        return f"cannot be opened for writing ({text}); is the folder writable?"
    if "permission denied" in text:
        return f"{text} (the database role lacks a privilege hindcast needs on it)"
    return text


def _sqlite_read_pragmas(connection, _record) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA query_only=ON")
    cursor.close()


def _sqlite_pragmas(connection, _record) -> None:
    cursor = connection.cursor()
    cursor.execute(
        "PRAGMA busy_timeout=30000"
    )  # first: switching to WAL waits for other openers too
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(
        "PRAGMA synchronous=NORMAL"
    )  # WAL + NORMAL: every commit survives a killed process
    cursor.close()


def _insert(dialect: str, table):
    """The dialect's INSERT with ON CONFLICT (SQLite and PostgreSQL both have it)."""
    from sqlalchemy.dialects import postgresql, sqlite

    return postgresql.insert(table) if dialect == "postgresql" else sqlite.insert(table)


def forecast_row(
    run_id: str,
    forecaster: str,
    market_id: str,
    t0,
    label: str,
    forecast: Forecast,
    retrievals: tuple = (),
    repeat: int = 0,
    attempt: int = 0,
) -> dict[str, Any]:
    """The stored form of one forecast, column by column (`RunStore.add`; `runs.batch.add_many`
    inserts these without building a row object each)."""
    return {
        "run_id": run_id,
        "forecaster": forecaster,
        "market_id": market_id,
        "t0": iso(t0),
        "label": label,
        "repeat": repeat,
        "probability": forecast.probability,
        "error": forecast.error,
        "rationale": forecast.rationale,
        "evidence_json": _dumps(list(forecast.evidence)),
        "usage_json": _dumps(forecast.usage.to_dict()),
        "retrievals_json": _dumps(list(retrievals)),
        "raw": forecast.raw,
        "attempt": attempt,
    }


def _release(run_id: str, key: tuple, attempt: int, owner: str):
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


def _stored(row: ForecastRow) -> StoredForecast:
    forecast = Forecast(
        probability=row.probability,
        error=row.error,
        rationale=row.rationale,
        evidence=tuple(json.loads(row.evidence_json)),
        usage=Usage.of(json.loads(row.usage_json)),
        raw=row.raw,
    )
    return StoredForecast(
        row.run_id,
        row.forecaster,
        row.market_id,
        parse_utc(row.t0),
        row.label,
        forecast,
        row.repeat,
    )


def _dumps(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class Detail:
    """What the run store kept of one forecast beyond its score."""

    rationale: str = ""
    raw: str = ""
    retrievals: tuple = ()  # each {"op", "query" | "doc_id", …, "ids": [...]}


def stored_details(store, run_id: str) -> dict[tuple, Detail]:
    """(run, forecaster, market, t0 ISO, repeat) → Detail of the newest attempt of each key."""
    f = ForecastRow
    query = (
        # SQLModel's select() is typed for up to 4 columns (a stubs gap, not a type error)
        select(  # type: ignore[call-overload]
            f.forecaster, f.market_id, f.t0, f.repeat, f.rationale, f.raw, f.retrievals_json
        )
        .where(f.run_id == run_id)
        .order_by(f.forecaster, f.market_id, f.t0, f.repeat, f.attempt)
    )
    with Session(store.engine) as session:
        rows = list(session.exec(query))
    return {
        (run_id, name, market, t0, repeat): Detail(rationale, raw, tuple(json.loads(calls or "[]")))
        for name, market, t0, repeat, rationale, raw, calls in rows
    }  # the newest attempt comes last


def open_store(db, runs: RunStore | None = None, where: str = "hindcast.sweep") -> RunStore:
    """The run database given as `db` (a path or URL, read as `db_url` reads it) or `runs` (an open
    RunStore), not both."""
    if runs is not None and db is not None:
        raise ConfigError(
            f"{where}: give the run database as db= (a path or URL) or runs= (an open RunStore), "
            "not both"
        )
    return runs if runs is not None else RunStore(db_url(db))
