"""The run database's schema version, and the ordered steps that bring any older one up to it.

Per dialect. On SQLite the version is `PRAGMA user_version`: a number in the file header,
changed in the same transaction as the tables it describes, and ignored by hindcast releases
before it (a database at the current version stays readable by release 1d68a1e, which wrote
version 2 without stamping it). On PostgreSQL it is the one row of the table
`hindcast_schema`, and every upgrade runs under a transaction-scoped advisory lock
(`pg_advisory_xact_lock`): openers racing on a new or older database queue there, and the
second finds the work done. A PostgreSQL database without that table reads as 0, exactly like
an unversioned SQLite file (release 1d68a1e created its tables as the models declared them).
Versions:

    1  runs, forecasts (one row per run, forecaster, market, t0, repeat), coverage
    2  forecasts.attempt (each retry of a stored failure kept), attempts (outages)   — 1d68a1e
    3  claims (a sweep process's lease on a forecast it is asking: concurrent sweeps of one
       run never pay twice). Readers never read it: a read-only open accepts version 2.

`STEPS[n]` turns version n-1 into version n; a new database is built by the same steps from
0, so there is one path to every version (a test checks it equals the tables the models
declare). A file written before versioning reads as 0 and the first two steps accept every
shape those releases wrote (each completes what is missing and keeps every row).

`upgrade` (a write open): the version is read; when it is older, `BEGIN IMMEDIATE` (SQLite)
or the advisory lock (PostgreSQL) takes the one write lock, the version is read again (a second
process opening at the same moment waits there, then finds the work done and does nothing), the
steps run in order, the new version is stamped and everything commits at once, or nothing does.
`check` (a read-only open) changes nothing: an older database is refused with what to run. A version
newer than CURRENT is refused by both, never used and never changed.

Steps are literal SQL frozen at their version: never build them from the models, which move on.
The PostgreSQL steps are the same SQL with SERIAL ids, and version 2 alters the forecasts table
in place (PostgreSQL can change a constraint). `db` is a DB-API connection: sqlite3's, or
psycopg's (both have `execute(...).fetchone()`).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hindcast.errors import RunStoreError

# a DB-API connection (sqlite3's or psycopg's): the two share no typed protocol
Connection = Any

CURRENT = 3
# the oldest version a read-only open reads as is (3 only added claims, which no reader reads)
READABLE = 2

# A trailing backslash continues a line: the SQL is byte for byte what its version wrote.
_RUNS = """CREATE TABLE IF NOT EXISTS runs (
    id VARCHAR NOT NULL, created_at VARCHAR NOT NULL, spec_json VARCHAR NOT NULL, \
manifest_json VARCHAR NOT NULL,
    PRIMARY KEY (id))"""
_FORECASTS_1 = """CREATE TABLE IF NOT EXISTS forecasts (
    id INTEGER NOT NULL, run_id VARCHAR NOT NULL, forecaster VARCHAR NOT NULL, \
market_id VARCHAR NOT NULL,
    t0 VARCHAR NOT NULL, label VARCHAR NOT NULL, repeat INTEGER NOT NULL, probability FLOAT, \
error VARCHAR,
    rationale VARCHAR NOT NULL, evidence_json VARCHAR NOT NULL, usage_json VARCHAR NOT NULL,
    retrievals_json VARCHAR NOT NULL, raw VARCHAR NOT NULL,
    PRIMARY KEY (id), CONSTRAINT one_forecast UNIQUE (run_id, forecaster, market_id, t0, repeat),
    FOREIGN KEY(run_id) REFERENCES runs (id))"""
_COVERAGE = """CREATE TABLE IF NOT EXISTS coverage (
    run_id VARCHAR NOT NULL, market_id VARCHAR NOT NULL, t0 VARCHAR NOT NULL, \
n_relevant INTEGER NOT NULL,
    stratum VARCHAR NOT NULL, PRIMARY KEY (run_id, market_id, t0), \
FOREIGN KEY(run_id) REFERENCES runs (id))"""
_FORECASTS_2 = """CREATE TABLE forecasts_v2 (
    id INTEGER NOT NULL, run_id VARCHAR NOT NULL, forecaster VARCHAR NOT NULL, \
market_id VARCHAR NOT NULL,
    t0 VARCHAR NOT NULL, label VARCHAR NOT NULL, repeat INTEGER NOT NULL, probability FLOAT, \
error VARCHAR,
    rationale VARCHAR NOT NULL, evidence_json VARCHAR NOT NULL, usage_json VARCHAR NOT NULL,
    retrievals_json VARCHAR NOT NULL, raw VARCHAR NOT NULL, attempt INTEGER NOT NULL,
    PRIMARY KEY (id), CONSTRAINT one_forecast_attempt UNIQUE (run_id, forecaster, market_id, t0, \
repeat, attempt),
    FOREIGN KEY(run_id) REFERENCES runs (id))"""
_ATTEMPTS = """CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER NOT NULL, run_id VARCHAR NOT NULL, forecaster VARCHAR NOT NULL, \
market_id VARCHAR NOT NULL,
    t0 VARCHAR NOT NULL, repeat INTEGER NOT NULL, kind VARCHAR NOT NULL, reason VARCHAR NOT NULL,
    at VARCHAR NOT NULL, PRIMARY KEY (id))"""
_CLAIMS = """CREATE TABLE IF NOT EXISTS claims (
    run_id VARCHAR NOT NULL, forecaster VARCHAR NOT NULL, market_id VARCHAR NOT NULL, \
t0 VARCHAR NOT NULL,
    repeat INTEGER NOT NULL, attempt INTEGER NOT NULL, owner VARCHAR NOT NULL, \
expires_at FLOAT NOT NULL,
    PRIMARY KEY (run_id, forecaster, market_id, t0, repeat, attempt))"""
_RUN_COLUMNS = {"id", "created_at", "spec_json", "manifest_json"}
_COLUMNS_1 = (
    "id",
    "run_id",
    "forecaster",
    "market_id",
    "t0",
    "label",
    "repeat",
    "probability",
    "error",
    "rationale",
    "evidence_json",
    "usage_json",
    "retrievals_json",
    "raw",
)


def _to_1(db: sqlite3.Connection, where: str) -> None:
    """The first schema (completes whatever part of it an unversioned file lacks)."""
    for sql in (
        _RUNS,
        _FORECASTS_1,
        "CREATE INDEX IF NOT EXISTS ix_forecasts_run_id ON forecasts (run_id)",
        _COVERAGE,
    ):
        db.execute(sql)


def _to_2(db: sqlite3.Connection, where: str) -> None:
    """Attempts: SQLite cannot change a UNIQUE constraint, so forecasts is
    copied into a new table."""
    columns = _columns(db, "forecasts")
    if "attempt" not in columns:
        cols = ", ".join(f'"{c}"' for c in _COLUMNS_1)
        db.execute(_FORECASTS_2)
        db.execute(f"INSERT INTO forecasts_v2 ({cols}, attempt) SELECT {cols}, 0 FROM forecasts")
        db.execute("DROP TABLE forecasts")  # and its index
        db.execute("ALTER TABLE forecasts_v2 RENAME TO forecasts")
        db.execute("CREATE INDEX ix_forecasts_run_id ON forecasts (run_id)")
    db.execute(_ATTEMPTS)
    db.execute("CREATE INDEX IF NOT EXISTS ix_attempts_run_id ON attempts (run_id)")


def _to_3(db: sqlite3.Connection, where: str) -> None:
    """Claims: which sweep process is asking which forecast, until when (a lease)."""
    db.execute(_CLAIMS)


def _pg(sql: str) -> str:
    """A step's SQL as PostgreSQL runs it: ids drawn from a sequence (what SQLAlchemy declared)."""
    return sql.replace("id INTEGER NOT NULL,", "id SERIAL NOT NULL,", 1)


def _pg_to_1(db: Connection, where: str) -> None:
    for sql in (
        _RUNS,
        _pg(_FORECASTS_1),
        "CREATE INDEX IF NOT EXISTS ix_forecasts_run_id ON forecasts (run_id)",
        _COVERAGE,
    ):
        db.execute(sql)


def _pg_to_2(db: Connection, where: str) -> None:
    """Attempts: the column and the wider unique constraint, changed in place."""
    columns = _columns(db, "forecasts")
    if "attempt" not in columns:
        db.execute("ALTER TABLE forecasts ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0")
        db.execute("ALTER TABLE forecasts ALTER COLUMN attempt DROP DEFAULT")
        db.execute("ALTER TABLE forecasts DROP CONSTRAINT IF EXISTS one_forecast")
        db.execute(
            "ALTER TABLE forecasts ADD CONSTRAINT one_forecast_attempt UNIQUE "
            "(run_id, forecaster, market_id, t0, repeat, attempt)"
        )
    db.execute(_pg(_ATTEMPTS))
    db.execute("CREATE INDEX IF NOT EXISTS ix_attempts_run_id ON attempts (run_id)")


STEPS: dict[int, Callable[[sqlite3.Connection, str], None]] = {1: _to_1, 2: _to_2, 3: _to_3}
PG_STEPS: dict[int, Callable[..., None]] = {1: _pg_to_1, 2: _pg_to_2, 3: _to_3}
PG_LOCK = 0x68696E6463617374  # pg_advisory_xact_lock key: "hindcast" in ASCII
_PG_VERSION_TABLE = "CREATE TABLE IF NOT EXISTS hindcast_schema (version INTEGER NOT NULL)"


def _is_sqlite(db: Connection) -> bool:
    return isinstance(db, sqlite3.Connection)


def version(db: Connection) -> int:
    if _is_sqlite(db):
        return db.execute("PRAGMA user_version").fetchone()[0]
    if db.execute("SELECT to_regclass('hindcast_schema')").fetchone()[0] is None:
        return 0
    row = db.execute("SELECT max(version) FROM hindcast_schema").fetchone()
    return row[0] or 0


def upgrade(db: Connection, where: str) -> tuple[int, ...]:
    """Bring the database up to CURRENT, atomically; the versions it went through, () when it
    was current already. SQLite: a connection in autocommit mode (this issues BEGIN IMMEDIATE);
    PostgreSQL: a psycopg connection outside autocommit (this commits or rolls back)."""
    if not _is_sqlite(db):
        return _upgrade_pg(db, where)
    if _checked(db, where) == CURRENT:
        return ()
    db.execute("BEGIN IMMEDIATE")  # the one writer; a concurrent opener waits here
    try:
        done = _apply(
            db, where, _checked(db, where)
        )  # read again: it may have been migrated meanwhile
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return done


def _upgrade_pg(db: Connection, where: str) -> tuple[int, ...]:
    try:
        if _checked(db, where) == CURRENT:
            db.rollback()
            return ()
        db.execute(
            "SELECT pg_advisory_xact_lock(%s)", (PG_LOCK,)
        )  # the one writer; concurrent openers queue here
        db.execute(_PG_VERSION_TABLE)
        done = _apply(
            db, where, _checked(db, where)
        )  # read again: it may have been migrated meanwhile
        db.commit()
    except BaseException:
        db.rollback()
        raise
    return done


def _apply(db: Connection, where: str, found: int) -> tuple[int, ...]:
    steps = STEPS if _is_sqlite(db) else PG_STEPS
    for target in range(found + 1, CURRENT + 1):
        steps[target](db, where)
    if found != CURRENT:
        _stamp(db, CURRENT)
    return tuple(range(found + 1, CURRENT + 1))


def _stamp(db: Connection, value: int) -> None:
    if _is_sqlite(db):
        db.execute(f"PRAGMA user_version = {value}")
    else:
        db.execute("DELETE FROM hindcast_schema")
        db.execute("INSERT INTO hindcast_schema (version) VALUES (%s)", (value,))


def check(db: Connection, where: str) -> int:
    """A read-only open: the database must be a hindcast run database at READABLE or later (an
    unversioned one already of version 2's shape counts); nothing is
    changed. Returns its version."""
    found = _checked(db, where)
    tables = _tables(db)
    if not {"runs", "forecasts"} <= tables:
        raise RunStoreError(
            f"run database {where} is not a hindcast run database (it has no runs/forecasts "
            "tables); point --db at one"
        )
    if found == 0 and "attempt" in _columns(db, "forecasts") and {"attempts", "coverage"} <= tables:
        return READABLE  # written by 1d68a1e, before versioning: already a readable shape
    if found < READABLE:
        raise RunStoreError(
            f"run database {where} was written by an older hindcast (schema version {found}, "
            f"this hindcast reads {READABLE} or later); run a write command on it first (e.g. "
            f"hindcast sweep --db {where} …, which migrates it in place)"
        )
    return found


def _checked(db: Connection, where: str) -> int:
    """The version; refused when newer than this code, or 0 on tables another program wrote."""
    found = version(db)
    if found == 0:
        refuse_foreign(db, where)
    if found > CURRENT and "forecasts" not in _tables(db):
        raise RunStoreError(
            f"run database {where} is not a hindcast run database (schema version {found}, no "
            "forecasts table); point --db at one"
        )
    if found > CURRENT:
        raise RunStoreError(
            f"run database {where} has schema version {found}, newer than this hindcast reads "
            f"({CURRENT}); nothing was changed: upgrade hindcast (pip install -U hindcast-replay) "
            "or point --db at another database"
        )
    return found


def refuse_foreign(db: Connection, where: str) -> None:
    """An unversioned database whose `runs` or `forecasts` table lacks the columns every hindcast
    release wrote holds another program's tables: refused before anything is changed (never
    called an older hindcast, never migrated into)."""
    tables = _tables(db)
    for table, needed in (("runs", _RUN_COLUMNS), ("forecasts", set(_COLUMNS_1))):
        missing = needed - _columns(db, table) if table in tables else set()
        if missing:
            raise RunStoreError(
                f"run database {where} is not a hindcast run database: its {table} table has no "
                f"column(s) {', '.join(sorted(missing))} (another program's table?); nothing was "
                "changed: point --db at a hindcast run database or a new one"
            )


def refuse_foreign_file(path: Path, where: str) -> None:
    """`refuse_foreign` on an existing SQLite file through a plain connection that only reads:
    run before the run store's first connection, which would switch the file to WAL."""
    if not path.is_file():
        return
    mode = "rw" if os.access(path, os.W_OK) and os.access(path.parent, os.W_OK) else "ro"
    db = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode={mode}", uri=True)
    try:
        if version(db) == 0:
            refuse_foreign(db, where)
    finally:
        db.close()


def _tables(db: Connection) -> set[str]:
    if _is_sqlite(db):
        return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return {
        row[0]
        for row in db.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        )
    }


def _columns(db: Connection, table: str) -> set[str]:
    if _is_sqlite(db):
        return {row[1] for row in db.execute(f'PRAGMA table_info("{table}")')}
    return {
        row[0]
        for row in db.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = %s",
            (table,),
        )
    }
