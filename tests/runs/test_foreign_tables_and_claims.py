"""Issue 36, item 10: another program's runs/forecasts tables are refused in one line and left
as they were (no WAL switch, no responses.db; on PostgreSQL no UndefinedColumn); the previous
release's fixture gives one line, not a KeyError; a PostgreSQL permission error is one line; a
sweep killed (SIGKILL) right after storing a forecast leaves no claim on it; `probe recall
--recall <a cut file>` is refused before a response cache is created. Both backends."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import psycopg
import pytest

from hindcast.runs.store import RunStore
from tests.helpers import ROOT, SAMPLE_MARKETS, run_cli

NO_DB_ENV = {"HINDCAST_DB": None, "HINDCAST_DEBUG": None}
FOREIGN = (
    "CREATE TABLE runs (id INTEGER PRIMARY KEY, name TEXT)",
    "CREATE TABLE forecasts (id INTEGER PRIMARY KEY, run_id INTEGER, who TEXT, p REAL)",
    "INSERT INTO runs VALUES (1, 'keep me')",
)
SWEEP = ("sweep", "--store", str(SAMPLE_MARKETS), "--limit", "1", "-f", "market", "--out", "out")


def tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def one_line(proc) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1, proc.stderr
    return lines[0]


def pg_connect(url: str):
    return psycopg.connect(url.replace("postgresql+psycopg", "postgresql"), autocommit=True)


def pg_tables(url: str) -> list:
    with pg_connect(url) as db:
        return db.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() ORDER BY 1, 2"
        ).fetchall()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_another_programs_runs_and_forecasts_tables_are_refused_and_left_as_they_were(
    tmp_path, backend, request
):
    if backend == "sqlite":
        url = str(tmp_path / "other.db")
        with sqlite3.connect(url) as db:
            for sql in FOREIGN:
                db.execute(sql)
        db.close()
    else:
        url = request.getfixturevalue("pg_server").create_database()
        with pg_connect(url) as db:
            for sql in FOREIGN:
                db.execute(sql)
    before = tree(tmp_path), pg_tables(url) if backend == "postgresql" else None
    for argv in (SWEEP, ("leaderboard", "1", "--out", "board"), ("analyze", "1")):
        line = one_line(run_cli(*argv, "--db", url, cwd=tmp_path, env=NO_DB_ENV))
        assert "is not a hindcast run database: its runs table has no column(s)" in line, argv
        assert "older hindcast" not in line and "Undefined" not in line
        after = tree(tmp_path), pg_tables(url) if backend == "postgresql" else None
        assert after == before, argv  # no WAL switch, no responses.db, no table, no folder


def test_the_previous_release_fixture_is_one_line_for_analyze_and_leaderboard(tmp_path):
    path = tmp_path / "release.db"
    shutil.copy(ROOT / "tests" / "fixtures" / "runs" / "release_1d68a1e.db", path)
    before = tree(tmp_path)
    for argv in (("leaderboard", "r-one", "--out", "board"), ("analyze", "r-one")):
        line = one_line(run_cli(*argv, "--db", str(path), cwd=tmp_path, env=NO_DB_ENV))
        assert "run r-one records no market store" in line and "KeyError" not in line
        assert tree(tmp_path) == before


def test_a_postgresql_permission_error_is_one_line(tmp_path, pg_server):
    name = f"perm_{tmp_path.name[-8:].lower().replace('-', '_')}"
    with pg_server.admin() as c:
        c.execute(f"CREATE ROLE {name} LOGIN PASSWORD 'weak-{name}'")
        c.execute(f"CREATE DATABASE {name} OWNER postgres")  # the role may not CREATE in public
    url = f"postgresql+psycopg://{name}:weak-{name}@127.0.0.1:{pg_server.port}/{name}"
    line = one_line(run_cli(*SWEEP, "--db", url, cwd=tmp_path, env=NO_DB_ENV))
    assert "permission denied for schema public" in line and f"weak-{name}" not in line


KILLED_AFTER_STORE = textwrap.dedent(
    """
    import os, signal, sys
    from hindcast.runs.store import RunStore

    def release(*args, **kwargs):  # the moment right after a forecast (or a batch) was stored
        os.kill(os.getpid(), signal.SIGKILL)

    import hindcast.replay.claims as claims

    RunStore.release = release  # one forecast at a time (model forecasts)
    claims.release_many = release  # a batch of cheap forecasts (the market baseline here)
    from hindcast.cli.main import run
    sys.argv = ["hindcast", *sys.argv[1:]]
    run()
    """
)


def test_a_sweep_killed_between_storing_a_forecast_and_releasing_its_claim_leaves_no_claim(
    tmp_path, db_url
):
    script = tmp_path / "killed.py"
    script.write_text(KILLED_AFTER_STORE)
    proc = subprocess.run(
        [sys.executable, str(script), *SWEEP, "--concurrency", "1", "--db", db_url],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == -9, proc.stderr
    store = RunStore(db_url)
    with store.engine.connect() as conn:
        claims = conn.exec_driver_sql("SELECT count(*) FROM claims").scalar()
        stored = conn.exec_driver_sql("SELECT count(*) FROM forecasts").scalar()
    store.close()
    assert stored >= 1 and claims == 0  # the batch in flight was stored, its claims went with it


def test_probe_recall_with_an_unreadable_results_file_creates_no_response_cache(tmp_path):
    (tmp_path / "cut.json").write_text('{"format": "hindcast-recall", "answ', encoding="utf-8")
    before = tree(tmp_path)
    argv = ("probe", "recall", "-f", "zero-shot:model=local", "--recall", "cut.json")
    line = one_line(run_cli(*argv, "--db", "p.db", "--limit", "1", cwd=tmp_path, env=NO_DB_ENV))
    assert "probe results cut.json: cannot be read" in line
    assert tree(tmp_path) == before and not (tmp_path / "responses.db").exists()
