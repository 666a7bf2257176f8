"""Opening a run database: the URL a --db names (db_url, db_file), its SQLAlchemy engine
(SQLite pragmas; a read-only open that never creates the file; PostgreSQL), and the one-line
reason an open failed."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import Engine, event
from sqlmodel import SQLModel, create_engine

from hindcast import environment
from hindcast.errors import NoRunDatabase, RunStoreError
from hindcast.http import redact

DB_ENV = "HINDCAST_DB"


DEFAULT_DB = Path("runs") / "hindcast.db"


def db_url(value: str | Path | None, env: Mapping[str, str] | None = None) -> str:
    """The run database a `--db` names: a URL (`scheme://…`) as is, a plain path a SQLite
    file; none given: the environment's HINDCAST_DB, else runs/hindcast.db."""
    text = (
        str(value)
        if value not in (None, "")
        else (environment.value(DB_ENV, env) or str(DEFAULT_DB))
    )
    return text if "://" in text else f"sqlite:///{Path(text)}"


def db_file(url: str) -> Path | None:
    """The SQLite file of a URL (None for a database that is not a SQLite file)."""
    if not url.startswith("sqlite:///"):
        return None
    path = url.removeprefix("sqlite:///").partition("?")[0]
    return None if path in ("", ":memory:") else Path(path)


def open_engine(url: str) -> Engine:
    if url.startswith("sqlite:///"):
        folder = Path(url.removeprefix("sqlite:///")).parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RunStoreError(
                f"run database {shown(url)}: cannot create folder {folder}: {exc.strerror or exc}"
            ) from None
    return _connect(url, _sqlite_pragmas)


def open_readonly_engine(url: str) -> Engine:
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


def _connect(url: str, sqlite_pragmas: Callable[[object, object], None]) -> Engine:
    """An engine for `url`; a SQLite connection gets `sqlite_pragmas` as it opens."""
    try:
        engine = create_engine(url)
    except Exception as exc:  # SQLAlchemy raises several types for a bad URL
        raise RunStoreError(f"cannot open run database {redact(url)!r}: {redact(exc)}") from None
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", sqlite_pragmas)
    return engine


def prepare_other(engine: Engine, url: str, read_only: bool) -> None:
    """A database that is not SQLite: the current tables as they are, never migrated."""
    from sqlalchemy import inspect

    if not read_only:
        SQLModel.metadata.create_all(engine)
    tables = set(inspect(engine).get_table_names())
    if not {"runs", "forecasts"} <= tables:
        raise RunStoreError(
            f"run database {shown(url)} is not a hindcast run database (it has no runs/forecasts "
            "tables); point --db at one"
        )
    columns = {c["name"] for c in inspect(engine).get_columns("forecasts")}
    if "attempt" not in columns or not {"attempts", "coverage"} <= tables:
        raise RunStoreError(
            f"run database {shown(url)} was written by an older hindcast; only a SQLite run "
            "database is migrated: point --db at a new database"
        )


@contextmanager
def raw_connection(engine: Engine, read_only: bool) -> Iterator[object]:
    """The DB-API connection of one pooled connection, as the migrations want it: SQLite's in
    autocommit mode (they issue their own BEGIN IMMEDIATE), psycopg's in a transaction (they
    commit it), read-only when `read_only` (the server refuses any write). Its modes are
    restored, and any transaction left rolled back, before it goes back to the pool."""
    with engine.connect() as conn:  # (not raw_connection(): a failed connect is then a DBAPIError)
        db: Any = conn.connection.driver_connection
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


def check_readable(engine: Engine, url: str) -> None:
    """An existing SQLite file must be a whole database: refuse a corrupt or truncated one."""
    path = db_file(url)
    if engine.dialect.name != "sqlite" or path is None or not path.is_file():
        return
    with engine.connect() as conn:
        result = conn.exec_driver_sql("PRAGMA quick_check(1)").scalar()
    if result != "ok":
        raise RunStoreError(
            f"run database {shown(url)} is damaged ({result}); restore it or point --db elsewhere"
        )


def racing(exc: BaseException) -> bool:
    """An error another process opening the same SQLite database can cause at the same moment:
    SQLite refusing a read-then-write upgrade while it wrote. (Creating tables never races: the
    migrations hold the one write lock, BEGIN IMMEDIATE or PostgreSQL's advisory lock.)"""
    return "database is locked" in str(exc)


def shown(url: str) -> str:
    """The database as messages name it: a SQLite file's path, else the URL without credentials."""
    return url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else redact(url)


def open_reason(exc: Exception) -> str:
    orig = getattr(exc, "orig", None) or exc
    text = redact(str(orig).splitlines()[0]) if str(orig) else type(orig).__name__
    if "not a database" in text or "malformed" in text:
        return f"not a readable SQLite database ({text}); restore it or point --db elsewhere"
    if "unable to open" in text or "readonly" in text or "read-only" in text:
        return f"cannot be opened for writing ({text}); is the folder writable?"
    if "permission denied" in text:
        return f"{text} (the database role lacks a privilege hindcast needs on it)"
    return text


def _sqlite_read_pragmas(connection: Any, _record: object) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA query_only=ON")
    cursor.close()


def _sqlite_pragmas(connection: Any, _record: object) -> None:
    cursor = connection.cursor()
    cursor.execute(
        "PRAGMA busy_timeout=30000"
    )  # first: switching to WAL waits for other openers too
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(
        "PRAGMA synchronous=NORMAL"
    )  # WAL + NORMAL: every commit survives a killed process
    cursor.close()
