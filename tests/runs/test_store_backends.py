"""The run store on both backends (the `db_url` fixture: a SQLite file, and a database on a
real PostgreSQL server started by tests/pg.py): a new database is built and stamped current
once, inserts are idempotent by constraint, a read-only open cannot write, and what is read
back is ordered by code point whatever the server's collation."""

from __future__ import annotations

import multiprocessing

import pytest
from sqlalchemy import text

from hindcast.errors import RunStoreError
from hindcast.records import Forecast
from hindcast.runs import migrations
from hindcast.runs.store import SCHEMA_VERSION, RunStore
from tests.helpers import at

T0 = at("2025-06-01T12:00:00")


def stamped(url: str) -> int:
    store = RunStore(url, read_only=True)
    try:
        return store.schema_version
    finally:
        store.close()


def test_a_new_database_is_built_current_and_reopening_changes_nothing(db_url):
    first = RunStore(db_url)
    assert first.migrated == tuple(range(1, SCHEMA_VERSION + 1))
    second = RunStore(db_url)
    assert second.migrated == ()
    assert stamped(db_url) == SCHEMA_VERSION
    first.close(), second.close()


def test_inserts_are_idempotent_by_constraint(db_url):
    store = RunStore(db_url)
    assert store.ensure_run("r", {"a": 1}, {}, T0) is True
    assert store.ensure_run("r", {"a": 1}, {}, T0) is False
    assert store.add("r", "f", "m1", T0, "f=0.5", Forecast(0.25)) is True
    assert store.add("r", "f", "m1", T0, "f=0.5", Forecast(0.75)) is False  # the first one stays
    assert store.add("r", "f", "m1", T0, "f=0.5", Forecast(0.75), attempt=1) is True
    assert [s.forecast.probability for s in store.forecasts("r", all_attempts=True)] == [0.25, 0.75]
    store.close()


def test_a_read_only_open_cannot_write_and_a_missing_schema_is_refused(db_url):
    RunStore(db_url).ensure_run("r", {}, {}, T0)
    reader = RunStore(db_url, read_only=True)
    with pytest.raises(Exception) as caught:
        reader.add("r", "f", "m1", T0, "f=0.5", Forecast(0.5))
    assert "read-only" in str(caught.value) or "readonly" in str(caught.value)
    assert RunStore(db_url).forecasts("r") == []
    reader.close()


def test_rows_come_back_in_code_point_order_whatever_the_collation(db_url):
    store = RunStore(db_url)
    store.ensure_run("r", {}, {}, T0)
    markets = ["b", "B", "a", "_z", "é", "Z", "a-1", "a1"]
    for market in markets:
        store.add("r", "f", market, T0, "f", Forecast(0.1 + len(market) / 10))
    assert [s.market_id for s in store.forecasts("r")] == sorted(markets)
    store.close()


def test_floats_round_trip_exactly(db_url):
    store = RunStore(db_url)
    store.ensure_run("r", {}, {}, T0)
    values = [0.1, 1 / 3, 0.30000000000000004, 5e-324, 1 - 2 ** -53]
    for i, p in enumerate(values):
        store.add("r", "f", f"m{i}", T0, "f", Forecast(p))
    assert [repr(s.forecast.probability) for s in store.forecasts("r")] == [repr(v) for v in values]
    store.close()


def _open_and_create(url: str, barrier, results) -> None:
    barrier.wait()  # every process opens the new database at the same moment
    try:
        store = RunStore(url)
        results.put(("ok", store.migrated, store.ensure_run("r-same", {}, {}, T0)))
    except Exception as exc:  # noqa: BLE001 — reported to the test
        results.put(("error", repr(exc), None))


def test_many_processes_opening_a_new_database_build_it_once_and_create_the_run_once(db_url):
    context, n = multiprocessing.get_context("fork"), 6
    barrier, results = context.Barrier(n), context.Queue()
    procs = [context.Process(target=_open_and_create, args=(db_url, barrier, results)) for _ in range(n)]
    for proc in procs:
        proc.start()
    outcomes = [results.get(timeout=120) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
    assert all(kind == "ok" for kind, _, _ in outcomes), outcomes
    assert sorted(m for _, m, _ in outcomes) == [()] * (n - 1) + [tuple(range(1, SCHEMA_VERSION + 1))]
    assert sorted(created for _, _, created in outcomes) == [False] * (n - 1) + [True]


def test_a_database_newer_than_this_code_is_refused(db_url):
    store = RunStore(db_url)
    with store.engine.begin() as conn:
        if store.engine.dialect.name == "sqlite":
            conn.exec_driver_sql(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        else:
            conn.execute(text("UPDATE hindcast_schema SET version = :v"), {"v": SCHEMA_VERSION + 1})
    store.close()
    for read_only in (False, True):
        with pytest.raises(RunStoreError, match=f"schema version {SCHEMA_VERSION + 1}, newer"):
            RunStore(db_url, read_only=read_only)


def test_the_postgresql_steps_are_one_per_version_in_order():
    assert sorted(migrations.PG_STEPS) == sorted(migrations.STEPS) == list(range(1, migrations.CURRENT + 1))
