"""The run store: the previous schema is migrated in place, two sweeps of one run started
together both succeed, and a corrupt/truncated database or a read-only folder is one line
naming the path with nothing changed."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from hindcast.errors import RunStoreError
from hindcast.records import Forecast
from hindcast.runs.store import SCHEMA_VERSION, RunStore
from tests.helpers import ROOT, SAMPLE_MARKETS, at, run_cli

PREVIOUS = Path(__file__).with_name("previous_schema.sql")


def previous_database(path: Path) -> None:
    """A database exactly as the previous hindcast wrote it, holding one run and two forecasts."""
    with sqlite3.connect(path) as db:
        db.executescript(PREVIOUS.read_text())
        db.execute("INSERT INTO runs VALUES ('r-old', '2026-01-01T00:00:00Z', '{}', '{}')")
        for market, p, error in (("m1", 0.25, None), ("m2", None, "invalid answer")):
            db.execute(
                "INSERT INTO forecasts (run_id, forecaster, market_id, t0, label, repeat, "
                "probability, error, rationale, evidence_json, usage_json, retrievals_json, raw) "
                "VALUES ('r-old', 'f', ?, '2025-01-01T00:00:00Z', '0.5', 0, ?, ?, '', '[]', "
                "'{}', '[]', '')",
                (market, p, error),
            )


def test_a_database_of_the_previous_schema_opens_and_keeps_its_rows(tmp_path):
    path = tmp_path / "old.db"
    previous_database(path)
    store = RunStore(f"sqlite:///{path}")
    stored = store.forecasts("r-old")
    assert [(s.market_id, s.forecast.probability, s.forecast.error) for s in stored] == [
        ("m1", 0.25, None),
        ("m2", None, "invalid answer"),
    ]
    assert store.retry_attempts("r-old") == {("f", "m2", "2025-01-01T00:00:00Z", 0): 1}
    assert store.add("r-old", "f", "m2", at("2025-01-01T00:00:00"), "0.5", Forecast(0.4), attempt=1)
    assert [s.forecast.probability for s in store.forecasts("r-old")] == [0.25, 0.4]
    assert store.attempts("r-old") == []
    RunStore(f"sqlite:///{path}")  # opening again is a no-op


def test_two_sweeps_of_the_same_run_started_together_both_succeed(tmp_path, db_url):
    """Three processes, one new database (a SQLite file; a database on a real PostgreSQL server)."""
    args = [
        sys.executable,
        "-m",
        "hindcast",
        "sweep",
        "--store",
        str(SAMPLE_MARKETS),
        "--limit",
        "3",
        "--fractions",
        "0.5",
        "-f",
        "constant",
        "-f",
        "market",
        "--out",
        str(tmp_path),
        "--db",
        db_url,
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    assert all(code == 0 for code, _ in results), results
    assert not any(
        "Traceback" in err or "already exists" in err or "UNIQUE" in err for _, err in results
    )
    store = RunStore(db_url, read_only=True)
    assert (
        len(store.runs()) == 1 and len(store.forecasts(store.runs()[0].id, all_attempts=True)) == 6
    )
    store.close()


def _open_and_create(url: str, barrier, results) -> None:
    barrier.wait()  # every process opens the new database at the same moment
    try:
        store = RunStore(url)
        results.put(
            ("ok", store.migrated, store.ensure_run("r-same", {}, {}, at("2026-11-30T00:00:00")))
        )
    except Exception as exc:  # noqa: BLE001 — reported to the test
        results.put(("error", repr(exc), None))


def test_opening_a_new_database_and_creating_one_run_from_many_processes_at_once(new_db_url):
    """On each backend: the schema is built by one process, the run created by one."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    for _ in range(4):
        url, n = new_db_url(), 6
        barrier, results = context.Barrier(n), context.Queue()
        procs = [
            context.Process(target=_open_and_create, args=(url, barrier, results)) for _ in range(n)
        ]
        for proc in procs:
            proc.start()
        outcomes = [results.get(timeout=120) for _ in procs]
        for proc in procs:
            proc.join(timeout=60)
        assert all(kind == "ok" for kind, _, _ in outcomes), outcomes
        assert sorted(m for _, m, _ in outcomes) == [()] * (n - 1) + [
            tuple(range(1, SCHEMA_VERSION + 1))
        ]
        assert sorted(created for _, _, created in outcomes) == [False] * (n - 1) + [True]


def snapshot(folder: Path) -> dict:
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_database_is_one_line_naming_it_and_nothing_changes(tmp_path, damage):
    out = tmp_path / "out"
    assert (
        run_cli(
            "sweep",
            "--store",
            str(SAMPLE_MARKETS),
            "--limit",
            "2",
            "--fractions",
            "0.5",
            "-f",
            "constant",
            "--out",
            str(out),
            "--db",
            str(out / "hindcast.db"),
        ).returncode
        == 0
    )
    db = out / "hindcast.db"
    for extra in (out / "hindcast.db-wal", out / "hindcast.db-shm"):
        extra.unlink(missing_ok=True)
    data = db.read_bytes()
    db.write_bytes(
        b"this is not a database at all\n" * 100 if damage == "garbage" else data[: len(data) // 2]
    )
    before = snapshot(out)
    for command in (
        [
            "sweep",
            "--store",
            str(SAMPLE_MARKETS),
            "--limit",
            "2",
            "--fractions",
            "0.5",
            "-f",
            "constant",
        ],
        ["runs", "list"],
    ):
        proc = run_cli(*command, "--db", str(out / "hindcast.db"))
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        errors = [line for line in proc.stderr.splitlines() if line.startswith("hindcast: error:")]
        assert len(errors) == 1 and str(db) in errors[0], proc.stderr
    assert snapshot(out) == before


def test_a_read_only_output_folder_is_one_line_naming_it(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o555)
    try:
        proc = run_cli(
            "sweep",
            "--store",
            str(SAMPLE_MARKETS),
            "--limit",
            "2",
            "--fractions",
            "0.5",
            "-f",
            "constant",
            "--out",
            str(out),
            "--db",
            str(out / "hindcast.db"),
        )
    finally:
        out.chmod(0o755)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert str(out / "hindcast.db") in proc.stderr and list(out.iterdir()) == []


def test_an_output_folder_that_cannot_be_made_is_one_line_naming_it(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    proc = run_cli(
        "sweep",
        "--store",
        str(SAMPLE_MARKETS),
        "--limit",
        "2",
        "--fractions",
        "0.5",
        "-f",
        "constant",
        "--out",
        str(blocker / "out"),
        "--db",
        str(blocker / "out" / "hindcast.db"),
    )
    assert (
        proc.returncode == 1
        and "Traceback" not in proc.stderr
        and str(blocker / "out") in proc.stderr
    )
    assert blocker.read_text() == "x"


def test_opening_an_unwritable_database_path_raises_run_store_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(RunStoreError, match=str(blocker)):
        RunStore(f"sqlite:///{blocker / 'sub' / 'h.db'}")
