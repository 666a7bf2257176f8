"""The run database's schema version: a database written by the release before versioning
(tests/fixtures/runs/release_1d68a1e.db, written by that release's own code) opens with every
row as it was and is stamped current, once; older databases are migrated atomically and by
one process only; a read-only open migrates nothing; a newer database is refused untouched."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from sqlmodel import SQLModel, create_engine

from hindcast.errors import RunStoreError
from hindcast.runs import migrations
from hindcast.runs.store import SCHEMA_VERSION, RunStore
from hindcast.schedule.state import State
from tests.helpers import ROOT, at
from tests.runs.test_store_robustness import PREVIOUS, previous_database

RELEASE = ROOT / "tests" / "fixtures" / "runs" / "release_1d68a1e.db"
T0 = at("2025-06-01T12:00:00")
EXPECTED = [  # (run, forecaster, market, t0, repeat, attempt, probability, error, rationale, evidence, usage, raw)
    ("r-one", "constant", "m1", T0, 0, 0, 0.5, None, "always ½", (), {}, ""),
    ("r-one", "llm", "m1", T0, 0, 0, None, "invalid answer", "", (), {}, "maybe?"),
    (
        "r-one",
        "llm",
        "m1",
        T0,
        0,
        1,
        0.7,
        None,
        "ré-essai",
        ("d1", "d2"),
        {"prompt_tokens": 12},
        "",
    ),
    ("r-one", "llm", "m2", T0, 1, 0, 0.1, None, "", (), {}, ""),
]


def copy_of_release(tmp_path: Path) -> Path:
    path = tmp_path / "hindcast.db"
    shutil.copyfile(RELEASE, path)
    return path


def contents(path: Path) -> dict:
    """Every table's definition and rows, straight from SQLite."""
    with sqlite3.connect(path) as db:
        schema = sorted(db.execute("SELECT type, name, sql FROM sqlite_master"), key=str)
        rows = {
            name: sorted(db.execute(f'SELECT * FROM "{name}"'), key=repr)
            for kind, name, _ in schema
            if kind == "table"
        }
    db.close()
    return {"schema": schema, "rows": rows}


def user_version(path: Path) -> int:
    with sqlite3.connect(path) as db:
        found = db.execute("PRAGMA user_version").fetchone()[0]
    db.close()
    return found


def forecast_rows(store: RunStore, run_id: str) -> list[tuple]:
    out = []
    for s in store.forecasts(run_id, all_attempts=True):
        f = s.forecast
        out.append(
            (
                s.run_id,
                s.forecaster,
                s.market_id,
                s.t0,
                s.repeat,
                f.probability,
                f.error,
                f.rationale,
                f.evidence,
                f.usage,
                f.raw,
            )
        )
    return out


def test_a_database_written_by_the_release_before_versioning_opens_unchanged_and_current(tmp_path):
    path = copy_of_release(tmp_path)
    assert user_version(path) == 0  # that release did not stamp a version
    before = contents(path)
    store = RunStore(f"sqlite:///{path}")
    assert store.migrated == (1, 2, 3) and user_version(path) == SCHEMA_VERSION == 3
    after = contents(
        path
    )  # every table, index and row as the release wrote it, plus the (empty) claims table
    assert [
        e for e in after["schema"] if e[1] not in ("claims", "sqlite_autoindex_claims_1")
    ] == before["schema"]
    assert {k: v for k, v in after["rows"].items() if k != "claims"} == before["rows"] and after[
        "rows"
    ]["claims"] == []
    assert [r.id for r in store.runs()] == ["r-one", "r-two"]
    assert store.run("r-one").spec_json == '{"forecasters": ["constant", "llm"]}'
    assert forecast_rows(store, "r-one") == [row[:5] + row[6:] for row in EXPECTED]
    assert [(s.forecaster, s.forecast.probability) for s in store.forecasts("r-one")] == [
        ("constant", 0.5),
        ("llm", 0.7),
        ("llm", 0.1),
    ]  # the newest attempt of each key
    assert store.latest("r-one")[("llm", "m1", "2025-06-01T12:00:00Z", 0)] == (1, True)
    assert [(a.market_id, a.kind, a.reason, a.at) for a in store.attempts("r-one")] == [
        ("m2", "infrastructure", "connection refused", "2026-11-01T00:05:00Z")
    ]
    assert store.coverage("r-one") == {("m1", T0): "covered", ("m2", T0): "uncovered"}
    state = State(store.engine)  # the service's tables in the same file
    assert [(j.job, j.status, j.detail) for j in state.job_runs()] == [
        ("pull", "ok", {"markets": 3})
    ]
    assert (
        state.get("markets:watermark") == "2026-11-01T00:00:00Z"
        and state.get("archive:indexed") == "snap-1"
    )
    assert [(b.sweep, b.status, b.run_id, b.forecasters) for b in state.batches()] == [
        ("daily", "done", "r-one", ("llm",))
    ]
    store.close()
    again = RunStore(f"sqlite:///{path}")
    assert again.migrated == () and again.schema_version == SCHEMA_VERSION
    again.close()
    assert contents(path) == after and user_version(path) == SCHEMA_VERSION


def test_a_read_only_open_of_the_release_database_reads_it_and_writes_nothing(tmp_path):
    path = copy_of_release(tmp_path)
    data = path.read_bytes()
    store = RunStore(f"sqlite:///{path}", read_only=True)
    assert (
        store.schema_version == migrations.READABLE
        and len(store.forecasts("r-one", all_attempts=True)) == 4
    )
    store.close()
    assert path.read_bytes() == data and user_version(path) == 0


def test_a_read_only_open_of_an_older_database_refuses_with_what_to_run(tmp_path):
    path = tmp_path / "old.db"
    previous_database(path)
    data = path.read_bytes()
    with pytest.raises(
        RunStoreError, match=r"older hindcast \(schema version 0.*run a write command"
    ) as caught:
        RunStore(f"sqlite:///{path}", read_only=True)
    assert str(path) in str(caught.value) and path.read_bytes() == data


@pytest.mark.parametrize("read_only", [False, True])
def test_a_database_newer_than_this_code_is_refused_and_left_untouched(tmp_path, read_only):
    path = copy_of_release(tmp_path)
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    before = contents(path)
    with pytest.raises(
        RunStoreError, match=rf"schema version {SCHEMA_VERSION + 1}, newer than this hindcast"
    ):
        RunStore(f"sqlite:///{path}", read_only=read_only)
    assert contents(path) == before and user_version(path) == SCHEMA_VERSION + 1


def test_a_migration_that_fails_midway_changes_nothing(tmp_path):
    path = tmp_path / "odd.db"
    with sqlite3.connect(
        path
    ) as db:  # the previous forecasts table without its `raw` column, no coverage
        db.executescript(
            PREVIOUS.read_text()
            .replace("\traw VARCHAR NOT NULL, \n", "")
            .split("CREATE TABLE coverage")[0]
        )
    db.close()
    before = contents(path)
    with pytest.raises(RunStoreError, match="no column\\(s\\) raw"):
        RunStore(f"sqlite:///{path}")
    assert (
        contents(path) == before and user_version(path) == 0
    )  # step 1 had created coverage: rolled back


def test_a_new_database_built_by_the_steps_has_exactly_the_tables_the_models_declare(tmp_path):
    RunStore(f"sqlite:///{tmp_path / 'stepped.db'}").close()
    declared = create_engine(f"sqlite:///{tmp_path / 'declared.db'}")
    SQLModel.metadata.create_all(
        declared,
        tables=[
            SQLModel.metadata.tables[name]
            for name in ("runs", "forecasts", "attempts", "coverage", "claims")
        ],
    )
    declared.dispose()
    assert shape(tmp_path / "stepped.db") == shape(tmp_path / "declared.db")
    assert user_version(tmp_path / "stepped.db") == SCHEMA_VERSION


def shape(path: Path) -> dict:
    """Tables, columns (name, type, not null, pk), indexes (columns, unique) and foreign keys."""
    with sqlite3.connect(path) as db:
        tables = [
            r[0]
            for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        ]
        out = {
            t: (
                db.execute(
                    f'SELECT name, type, "notnull", pk FROM pragma_table_info("{t}")'
                ).fetchall(),
                sorted(
                    (
                        u,
                        tuple(
                            c for (c,) in db.execute(f'SELECT name FROM pragma_index_info("{i}")')
                        ),
                    )
                    for i, u in db.execute(f'SELECT name, "unique" FROM pragma_index_list("{t}")')
                ),
                db.execute(
                    f'SELECT "table", "from", "to" FROM pragma_foreign_key_list("{t}")'
                ).fetchall(),
            )
            for t in tables
        }
    db.close()
    return out


def test_the_steps_are_one_per_version_in_order():
    assert sorted(migrations.STEPS) == list(range(1, migrations.CURRENT + 1))


def _open(url: str, barrier, results) -> None:
    barrier.wait()  # every process opens the old database at the same moment
    try:
        store = RunStore(url)
        results.put(("ok", store.migrated, len(store.forecasts("r-old", all_attempts=True))))
    except Exception as exc:  # noqa: BLE001 — reported to the test
        results.put(("error", repr(exc), 0))


def test_many_processes_opening_an_older_database_at_once_migrate_it_once(tmp_path):
    import multiprocessing

    context = multiprocessing.get_context("fork")
    for round_ in range(3):
        path, n = tmp_path / f"old{round_}.db", 5
        previous_database(path)
        barrier, results = context.Barrier(n), context.Queue()
        procs = [
            context.Process(target=_open, args=(f"sqlite:///{path}", barrier, results))
            for _ in range(n)
        ]
        for proc in procs:
            proc.start()
        outcomes = [results.get(timeout=120) for _ in procs]
        for proc in procs:
            proc.join(timeout=60)
        assert all(kind == "ok" and count == 2 for kind, _, count in outcomes), outcomes
        assert sorted(migrated for _, migrated, _ in outcomes) == [()] * (n - 1) + [(1, 2, 3)]


PREVIOUS_RELEASE = ROOT / "tests" / "fixtures" / "runs" / "release_d77f3c9.db"


def test_a_database_written_by_the_previous_release_at_schema_2_gains_claims_keeping_every_row(
    tmp_path,
):
    """release_d77f3c9.db: written by the release that stamped schema 2 (no claims table), with
    the rows of EXPECTED; readable as it is, and one write open adds the claims table only."""
    path = tmp_path / "hindcast.db"
    shutil.copyfile(PREVIOUS_RELEASE, path)
    assert user_version(path) == 2 == migrations.READABLE
    before = contents(path)
    assert "claims" not in before["rows"]
    reader = RunStore(f"sqlite:///{path}", read_only=True)
    assert reader.schema_version == 2 and forecast_rows(reader, "r-one") == [
        row[:5] + row[6:] for row in EXPECTED
    ]
    reader.close()
    assert contents(path) == before and user_version(path) == 2  # a reader wrote nothing
    store = RunStore(f"sqlite:///{path}")
    assert store.migrated == (3,) and user_version(path) == SCHEMA_VERSION == 3
    after = contents(path)
    assert [
        e for e in after["schema"] if e[1] not in ("claims", "sqlite_autoindex_claims_1")
    ] == before["schema"]
    assert {k: v for k, v in after["rows"].items() if k != "claims"} == before["rows"]
    assert after["rows"]["claims"] == []
    assert forecast_rows(store, "r-one") == [row[:5] + row[6:] for row in EXPECTED]
    assert [(b.sweep, b.status, b.run_id) for b in State(store.engine).batches()] == [
        ("daily", "done", "r-one")
    ]
    store.close()
    again = RunStore(f"sqlite:///{path}")
    assert again.migrated == ()
    again.close()
    assert contents(path) == after
