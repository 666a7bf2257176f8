"""The response cache on PostgreSQL: with a PostgreSQL run database the cache is a table of that
database (a real server, tests/pg.py), so a sweep on another machine (another --out, nothing
shared on disk) replays every answer a first one paid for; the cache is versioned there too."""

from __future__ import annotations

import json

import psycopg
import pytest

from hindcast.errors import RunStoreError
from hindcast.llm.cache import SCHEMA_VERSION, ResponseCache
from hindcast.llm.fake import FakeChatModel, answer
from hindcast.llm.models import open_cache
from tests.helpers import SAMPLE_MARKETS, run_cli


def test_one_cache_table_shared_by_every_opener_of_the_database(pg_server):
    url = pg_server.create_database()
    first, second = ResponseCache(url), ResponseCache(url)
    first.put("k1", {"q": 1}, {"a": "é"})
    assert second.get("k1") == {"a": "é"} and len(second) == 1
    second.put("k1", {"q": 1}, {"a": 2})  # replaced, as on SQLite
    assert first.get("k1") == {"a": 2} and first.get("missing") is None
    assert ResponseCache(url, mode="refresh").get("k1") is None
    first.close(), second.close()


def test_a_newer_cache_schema_is_refused_and_a_bad_url_names_it_without_its_password(pg_server):
    url = pg_server.create_database(password="planted-cache-pass-1357")
    ResponseCache(url).close()
    with psycopg.connect(url.replace("+psycopg", "")) as db:
        db.execute("UPDATE hindcast_cache_schema SET version = %s", (SCHEMA_VERSION + 1,))
    with pytest.raises(RunStoreError, match="newer than this hindcast") as newer:
        ResponseCache(url)
    with pytest.raises(RunStoreError, match="no_such_db") as missing:
        open_cache(url.rsplit("/", 1)[0] + "/no_such_db")
    for caught in (newer, missing):
        assert "planted-cache-pass-1357" not in str(caught.value) and "***@127.0.0.1" in str(
            caught.value
        )


def test_a_second_machine_replays_the_answers_a_first_one_paid_for(tmp_path, pg_server):
    db = pg_server.create_database()
    fake = FakeChatModel(default=answer('{"probability": 0.42}'))
    with fake.serve() as url:
        spec = f"zero-shot:model=openai-compatible:{url}#fake-model"
        args = [
            "sweep",
            "--store",
            str(SAMPLE_MARKETS),
            "--limit",
            "3",
            "--fractions",
            "0.5",
            "--db",
            db,
            "--json",
        ]
        first = run_cli(*args, "-f", spec, "--out", str(tmp_path / "machine1"))
        asked = len(fake.requests)
        second = run_cli(
            *args, "-f", spec, "-f", "constant", "--out", str(tmp_path / "machine2")
        )  # another run
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert asked == 3 and len(fake.requests) == asked  # every answer replayed from the database
    assert json.loads(first.stdout)["run_id"] != json.loads(second.stdout)["run_id"]
    assert not list(tmp_path.rglob("responses.db"))
    with psycopg.connect(db.replace("+psycopg", "")) as conn:
        assert conn.execute("SELECT count(*) FROM responses").fetchone()[0] == 3
