"""SQLite response cache for chat calls, keyed by the sha256 of the full request.

The key covers everything that can change an answer: endpoint, model, every body
parameter (messages, tools, response_format, temperature, max_tokens, seed …) and a
repeat index, so `temperature > 0` with `repeat=i` caches each sample separately and a
re-run of the same spec replays them all without a request. Credentials are never part
of a request body, so none reach the cache.

Modes: `use` (read and write, the default), `refresh` (write, never read: `--no-cache`
that still records), `off` (neither).

Versioned like the run database (`PRAGMA user_version`, 1 = this one table; a file written
before versioning reads as 0 and is stamped; a newer one is refused, never used), but raw
`sqlite3`, not the run store's sqlmodel, for stated reasons: it is on the path of every
model call (a re-run replays every answer from here) and a Session costs 15-30x a plain
get (measured: 8-20 µs raw, 230-330 µs through a Session; puts 120-180 µs vs 0.8-1.1 ms);
it is one content-addressed key → text table, read only by key, so an ORM adds nothing;
and it sits below the run store (forecasters, layer 2), so it cannot share its opener.
The file format is unchanged: the previous release reads it as it is.

On PostgreSQL (`path` a `postgresql…://` URL: the run database's, when it is one) the same
table lives in that database, so every machine sweeping a run shares every cached answer:
one psycopg connection in autocommit (no ORM, for the same reason), the table created under
an advisory lock, its version in the one-row table `hindcast_cache_schema`. The URL is held
in memory only; a message naming it shows it without its password.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import psycopg

from hindcast.errors import RunStoreError
from hindcast.http import redact

CacheMode = Literal["use", "refresh", "off"]
MODES = ("use", "refresh", "off")
SCHEMA_VERSION = 1
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, request TEXT NOT NULL, response "
    "TEXT NOT NULL)"
)


def canonical(value: object) -> str:
    """The one JSON text of a value: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def request_key(endpoint: str, body: Mapping, repeat: int = 0, attempt: int = 0) -> str:
    """sha256 of endpoint + full request body (model, parameters, messages, tools) + repeat index
    (+ the attempt number of a retried failure, when not 0: a retry is asked anew, then cached)."""
    key = {"endpoint": endpoint.rstrip("/"), "body": body, "repeat": int(repeat)}
    if attempt:
        key["attempt"] = int(attempt)
    text = canonical(key)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """Request key → response JSON, in one SQLite file (or `:memory:`), or in a PostgreSQL
    database (`path` a postgresql URL). Safe across threads."""

    def __init__(self, path: str | Path = ":memory:", mode: CacheMode = "use") -> None:
        if mode not in MODES:
            raise ValueError(f"cache mode {mode!r}: use {', '.join(MODES)}")
        self.path, self.mode = str(path), mode
        self._lock = threading.Lock()
        self._pg = is_postgresql(self.path)
        self._db = _open_pg(self.path) if self._pg else _open_sqlite(self.path)
        self._get, self._put = (_PG_GET, _PG_PUT) if self._pg else (_GET, _PUT)

    def get(self, key: str) -> dict | None:
        if self.mode != "use":
            return None
        with self._lock:
            row = self._db.execute(self._get, (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, request: Mapping, response: Mapping) -> None:
        if self.mode == "off":
            return
        with self._lock:
            self._db.execute(self._put, (key, canonical(request), canonical(response)))

    def __len__(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()
            return int(row[0]) if row is not None else 0  # COUNT(*) answers one row

    def close(self) -> None:
        with self._lock:
            self._db.close()


_GET, _PUT = (
    "SELECT response FROM responses WHERE key = ?",
    "INSERT OR REPLACE INTO responses (key, request, response) VALUES (?, ?, ?)",
)
_PG_GET = "SELECT response FROM responses WHERE key = %s"
_PG_PUT = (
    "INSERT INTO responses (key, request, response) VALUES (%s, %s, %s) ON CONFLICT (key) DO "
    "UPDATE SET request = EXCLUDED.request, response = EXCLUDED.response"
)
_PG_LOCK = 0x68696E6463616368  # pg_advisory_xact_lock key of the cache's table ("hindcach")


def is_postgresql(location: str) -> bool:
    return location.startswith(("postgresql://", "postgresql+", "postgres://"))


def _open_sqlite(path: str) -> sqlite3.Connection:
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    _refuse_newer(db, path)
    if path != ":memory:":
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # each write survives a killed process
    _create(db)
    return db


def _open_pg(url: str) -> psycopg.Connection:
    """One autocommit psycopg connection to the database of `url` (a SQLAlchemy or libpq URL);
    the table and its version made once, under an advisory lock (many processes may open it)."""
    import psycopg

    db = psycopg.connect("postgresql://" + url.split("://", 1)[1], autocommit=True)
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_LOCK,))
        db.execute("CREATE TABLE IF NOT EXISTS hindcast_cache_schema (version INTEGER NOT NULL)")
        row = db.execute("SELECT max(version) FROM hindcast_cache_schema").fetchone()
        found = (row[0] if row is not None else None) or 0  # max() of no rows: one NULL
        if found > SCHEMA_VERSION:
            db.close()
            raise RunStoreError(
                f"response cache in {redact(url)} has schema version {found}, newer than this "
                f"hindcast reads ({SCHEMA_VERSION}); nothing was changed: upgrade hindcast"
            )
        db.execute(_SCHEMA)
        if found < SCHEMA_VERSION:
            db.execute("DELETE FROM hindcast_cache_schema")
            db.execute("INSERT INTO hindcast_cache_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
    return db


def _refuse_newer(db: sqlite3.Connection, where: str) -> None:
    """Before anything is written: a cache of a newer schema is never used or changed."""
    found = db.execute("PRAGMA user_version").fetchone()[0]
    if found > SCHEMA_VERSION:
        db.close()
        raise RunStoreError(
            f"response cache {where} has schema version {found}, newer than this hindcast reads "
            f"({SCHEMA_VERSION}); nothing was changed: upgrade hindcast (pip install -U "
            "hindcast-replay) or point --db at another folder"
        )


def _create(db: sqlite3.Connection) -> None:
    """The table, and the file stamped with its version (both idempotent: many
    processes may open it)."""
    db.execute(_SCHEMA)
    if db.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
