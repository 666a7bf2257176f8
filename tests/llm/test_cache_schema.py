"""The response cache file carries its schema version like the run database: a cache written
before versioning is read as it is and stamped; a newer one is refused and left untouched."""

from __future__ import annotations

import sqlite3

import pytest

from hindcast.errors import RunStoreError
from hindcast.llm.cache import SCHEMA_VERSION, ResponseCache, canonical

# the table exactly as release 1d68a1e created it (it stamped no version)
PREVIOUS = (
    "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, request TEXT NOT NULL, response "
    "TEXT NOT NULL)"
)


def previous_cache(path) -> None:
    with sqlite3.connect(path) as db:
        db.execute(PREVIOUS)
        db.execute(
            "INSERT INTO responses VALUES ('k1', ?, ?)",
            (canonical({"model": "m"}), canonical({"p": 0.3})),
        )
    db.close()


def header(path) -> tuple[int, list]:
    with sqlite3.connect(path) as db:
        found = (
            db.execute("PRAGMA user_version").fetchone()[0],
            db.execute("SELECT sql FROM sqlite_master").fetchall(),
        )
    db.close()
    return found


def test_a_cache_written_before_versioning_is_read_as_it_is_and_stamped(tmp_path):
    path = tmp_path / "responses.db"
    previous_cache(path)
    cache = ResponseCache(path)
    assert cache.get("k1") == {"p": 0.3} and len(cache) == 1
    cache.close()
    assert header(path) == (SCHEMA_VERSION, [(PREVIOUS.replace(" IF NOT EXISTS", ""),), (None,)])


def test_a_new_cache_is_stamped_with_its_version(tmp_path):
    ResponseCache(tmp_path / "responses.db").close()
    assert header(tmp_path / "responses.db")[0] == SCHEMA_VERSION == 1


def test_a_cache_newer_than_this_code_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "responses.db"
    previous_cache(path)
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    data = path.read_bytes()
    with pytest.raises(
        RunStoreError,
        match=rf"response cache {path} has schema version {SCHEMA_VERSION + 1}, newer",
    ):
        ResponseCache(path)
    assert path.read_bytes() == data
