"""Analyses kept in the run database's backend (issue 39 item 3): the `analyses` table on a
SQLite run database and on a real PostgreSQL server (tests/pg.py) — every opener reads what
another kept, a key is kept once (a second write of it changes nothing), more keys than one
chunk, reads create nothing, a read-only store is never written."""

from __future__ import annotations

import pytest

from hindcast.runs.analyses import CHUNK, AnalysisStore
from hindcast.runs.store import RunStore


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path) -> str:
    """A run database: a SQLite file, or a new database on the session's server."""
    if request.param == "sqlite":
        found = f"sqlite:///{tmp_path / 'hindcast.db'}"
    else:
        found = request.getfixturevalue("pg_server").create_database()
    RunStore(found).close()  # the run store's own tables, as a sweep leaves them
    return found


def key(market: str, t0: str = "2025-10-20T00:00:00Z", archive: str = "a1") -> tuple:
    return ("proc-1", archive, market, f"sha-{market}", t0)


def test_every_opener_reads_what_another_kept_and_a_key_is_kept_once(url):
    first, second = AnalysisStore(url), AnalysisStore(url)
    assert second.get_many([key("m1")]) == {}  # no table yet: nothing, and no error
    assert first.put_many([(key("m1"), {"stratum": "present", "n": 1})]) == 1
    assert second.get_many([key("m1"), key("m2")]) == {key("m1"): {"stratum": "present", "n": 1}}
    # the same key again (another analyze of the same run): left as it is, never duplicated
    assert second.put_many([(key("m1"), {"stratum": "absent", "n": 9})]) == 0
    assert first.get_many([key("m1")]) == {key("m1"): {"stratum": "present", "n": 1}}
    # every part of the key matters
    assert first.get_many([key("m1", archive="a2"), key("m1", t0="2025-10-21T00:00:00Z")]) == {}
    first.close(), second.close()


def test_more_keys_than_one_chunk_are_written_and_read_back(url):
    keys = [key(f"m{i:05d}", t0=f"2025-10-{1 + i % 4:02d}T00:00:00Z") for i in range(CHUNK * 2 + 7)]
    with AnalysisStore(url) as store:
        assert store.put_many([(k, {"i": i}) for i, k in enumerate(keys)]) == len(keys)
    with AnalysisStore(url) as store:
        found = store.get_many(keys + [key("absent")])
    assert found == {k: {"i": i} for i, k in enumerate(keys)}


def test_a_read_only_store_is_read_and_never_written(url):
    with AnalysisStore(url) as store:
        store.put_many([(key("m1"), {"x": 1})])
    with AnalysisStore(url, writable=False) as store:
        assert store.put_many([(key("m2"), {"x": 2})]) == 0
        assert store.get_many([key("m1"), key("m2")]) == {key("m1"): {"x": 1}}


def test_reading_a_missing_sqlite_database_creates_nothing(tmp_path):
    path = tmp_path / "nowhere.db"
    with AnalysisStore(f"sqlite:///{path}", writable=False) as store:
        assert store.get_many([key("m1")]) == {}
    assert not path.exists()
