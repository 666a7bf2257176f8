"""The run store on both backends (the `db_url` fixture: a SQLite file, and a database on a
real PostgreSQL server started by tests/pg.py): a new database is built and stamped current
once, inserts are idempotent by constraint, a read-only open cannot write, and what is read
back is ordered by code point whatever the server's collation."""

from __future__ import annotations

import os
import subprocess

import pytest
from sqlalchemy import text
from sqlmodel import SQLModel, create_engine

from hindcast.errors import RunStoreError
from hindcast.records import Forecast
from hindcast.runs import migrations
from hindcast.runs.store import SCHEMA_VERSION, RunStore
from hindcast.schedule.state import State
from tests.helpers import ROOT, at
from tests.runs.test_schema_upgrade import EXPECTED, forecast_rows
from tests.runs.test_store_robustness import PREVIOUS

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
    if (
        store.engine.dialect.name == "postgresql"
    ):  # the server's own order differs (this test could fail)
        with store.engine.connect() as conn:
            assert list(
                conn.execute(text("SELECT market_id FROM forecasts ORDER BY market_id")).scalars()
            ) != sorted(markets)
    store.close()


def test_floats_round_trip_exactly(db_url):
    store = RunStore(db_url)
    store.ensure_run("r", {}, {}, T0)
    values = [0.1, 1 / 3, 0.30000000000000004, 5e-324, 1 - 2**-53]
    for i, p in enumerate(values):
        store.add("r", "f", f"m{i}", T0, "f", Forecast(p))
    assert [repr(s.forecast.probability) for s in store.forecasts("r")] == [repr(v) for v in values]
    store.close()


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
    assert (
        sorted(migrations.PG_STEPS)
        == sorted(migrations.STEPS)
        == list(range(1, migrations.CURRENT + 1))
    )


# ---- a PostgreSQL database written by the release before versioning (1d68a1e) ----------------
PG_RELEASE = ROOT / "tests" / "fixtures" / "runs" / "release_1d68a1e.pg.sql"


def restored_release(pg_server) -> str:
    """A new database holding exactly what release 1d68a1e wrote (its pg_dump, restored by psql)."""
    from tests import pg

    url = pg_server.create_database()
    subprocess.run(
        [
            str(pg.pg_bin() / "psql"),
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            "127.0.0.1",
            "-p",
            str(pg_server.port),
            "-U",
            "postgres",
            "-d",
            url.rsplit("/", 1)[1],
            "-f",
            str(PG_RELEASE),
        ],
        check=True,
        capture_output=True,
        env={**os.environ, "PGPASSWORD": pg.PASSWORD},
    )
    return url


def pg_contents(url: str) -> dict:
    """Every table's columns and rows, and every constraint, straight from the server."""
    engine = create_engine(url)
    with engine.connect() as conn:
        tables = sorted(
            conn.execute(
                text(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
                )
            ).scalars()
        )
        out = {
            t: (
                conn.execute(
                    text(
                        "SELECT column_name, data_type, is_nullable FROM "
                        "information_schema.columns WHERE table_name = :t ORDER BY "
                        "ordinal_position"
                    ),
                    {"t": t},
                ).all(),
                sorted(conn.execute(text(f'SELECT * FROM "{t}"')).all(), key=repr),
            )
            for t in tables
        }
        out["constraints"] = sorted(
            conn.execute(
                text(
                    "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
                    "WHERE connamespace = 'public'::regnamespace"
                )
            ).all()
        )
        out["indexes"] = sorted(
            conn.execute(
                text("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'")
            ).all()
        )
    engine.dispose()
    return out


def test_a_postgresql_database_of_the_release_before_versioning_upgrades_keeping_every_row(
    pg_server,
):
    url = restored_release(pg_server)
    before = pg_contents(url)
    reader = RunStore(
        url, read_only=True
    )  # readable as it is, and a read-only open changes nothing
    assert (
        reader.schema_version == migrations.READABLE
        and len(reader.forecasts("r-one", all_attempts=True)) == 4
    )
    reader.close()
    assert pg_contents(url) == before
    store = RunStore(url)
    assert store.migrated == (1, 2, 3)
    after = pg_contents(url)
    added = {"claims", "hindcast_schema"}
    assert {k: v for k, v in after.items() if k not in added | {"constraints", "indexes"}} == {
        k: v for k, v in before.items() if k not in {"constraints", "indexes"}
    }
    assert after["claims"][1] == [] and after["hindcast_schema"][1] == [(SCHEMA_VERSION,)]
    assert set(before["constraints"]) <= set(after["constraints"]) and set(
        before["indexes"]
    ) <= set(after["indexes"])
    assert forecast_rows(store, "r-one") == [row[:5] + row[6:] for row in EXPECTED]
    assert [(s.forecaster, s.forecast.probability) for s in store.forecasts("r-one")] == [
        ("constant", 0.5),
        ("llm", 0.7),
        ("llm", 0.1),
    ]
    assert [(a.market_id, a.reason) for a in store.attempts("r-one")] == [
        ("m2", "connection refused")
    ]
    assert store.coverage("r-one") == {("m1", T0): "covered", ("m2", T0): "uncovered"}
    state = State(store.engine)  # the service's tables in the same database
    assert [(j.job, j.status, j.detail) for j in state.job_runs()] == [
        ("pull", "ok", {"markets": 3})
    ]
    assert (
        store.add("r-one", "llm", "m2", T0, "0.25", Forecast(0.3), repeat=2) is True
    )  # ids continue
    store.close()
    assert RunStore(url).migrated == ()


def test_a_postgresql_database_at_schema_2_gains_claims_keeping_every_row(pg_server):
    """The release's database brought to schema 2 by the version-2 steps and stamped 2 (the
    schema before claims; no release wrote PostgreSQL at 2, d77f3c9 read `PRAGMA user_version`
    on every backend): a write open runs step 3 only, every row kept."""
    import psycopg

    url = restored_release(pg_server)
    with psycopg.connect(url.replace("+psycopg", "")) as db:
        db.execute("CREATE TABLE hindcast_schema (version INTEGER NOT NULL)")
        migrations.PG_STEPS[1](db, "test")
        migrations.PG_STEPS[2](db, "test")
        db.execute("INSERT INTO hindcast_schema (version) VALUES (2)")
    before = pg_contents(url)
    assert "claims" not in before
    reader = RunStore(url, read_only=True)
    assert reader.schema_version == 2 and len(reader.forecasts("r-one", all_attempts=True)) == 4
    reader.close()
    assert pg_contents(url) == before
    store = RunStore(url)
    assert store.migrated == (3,)
    after = pg_contents(url)
    assert {
        k: v
        for k, v in after.items()
        if k not in {"claims", "hindcast_schema", "constraints", "indexes"}
    } == {k: v for k, v in before.items() if k not in {"hindcast_schema", "constraints", "indexes"}}
    assert after["claims"][1] == [] and after["hindcast_schema"][1] == [(SCHEMA_VERSION,)]
    assert forecast_rows(store, "r-one") == [row[:5] + row[6:] for row in EXPECTED]
    store.close()
    assert RunStore(url).migrated == ()


def test_an_older_postgresql_database_is_migrated_in_place(pg_server):
    """The shape before 1d68a1e (no attempt column, one_forecast unique) gains attempts in place."""
    url = pg_server.create_database()
    engine = create_engine(url)
    with engine.begin() as conn:
        for statement in (
            PREVIOUS.read_text().replace("id INTEGER NOT NULL,", "id SERIAL NOT NULL,").split(";")
        ):
            if statement.strip():
                conn.execute(text(statement))
        conn.execute(text("INSERT INTO runs VALUES ('r-old', '2026-01-01T00:00:00Z', '{}', '{}')"))
        conn.execute(
            text(
                "INSERT INTO forecasts (run_id, forecaster, market_id, t0, label, repeat, "
                "probability, error, rationale, evidence_json, usage_json, retrievals_json, raw) "
                "VALUES ('r-old', 'f', 'm2', '2025-01-01T00:00:00Z', '0.5', 0, NULL, 'invalid "
                "answer', '', '[]', '{}', '[]', '')"
            )
        )
    engine.dispose()
    with pytest.raises(RunStoreError, match="older hindcast"):
        RunStore(url, read_only=True)
    store = RunStore(url)
    assert store.migrated == (1, 2, 3)
    assert store.retry_attempts("r-old") == {("f", "m2", "2025-01-01T00:00:00Z", 0): 1}
    assert store.add("r-old", "f", "m2", at("2025-01-01T00:00:00"), "0.5", Forecast(0.4), attempt=1)
    assert [s.forecast.probability for s in store.forecasts("r-old")] == [0.4]
    store.close()


def test_a_new_postgresql_database_built_by_the_steps_has_the_tables_the_models_declare(pg_server):
    stepped, declared = pg_server.create_database(), pg_server.create_database()
    RunStore(stepped).close()
    engine = create_engine(declared)
    SQLModel.metadata.create_all(
        engine,
        tables=[
            SQLModel.metadata.tables[name]
            for name in ("runs", "forecasts", "attempts", "coverage", "claims")
        ],
    )
    engine.dispose()
    a, b = pg_contents(stepped), pg_contents(declared)
    assert a.pop("hindcast_schema")[1] == [(SCHEMA_VERSION,)]
    assert a == b
