"""Reading commands never write the run database (issue 24): every command that only reads a
run database opens it read-only and refuses, in one line with a non-zero exit, what it cannot
read as is — a file that is not SQLite, an empty file, a SQLite file of someone else's tables,
and the previous release's database (tests/runs/previous_schema.sql: it would need a
migration). Each file, and the folder around it, is byte-identical afterwards."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from tests.helpers import ROOT, run_cli

NO_DB_ENV = {"HINDCAST_DB": None, "HINDCAST_DEBUG": None}
RUN = "r-000000000000"


def reading_commands(db: str) -> list[tuple[str, ...]]:
    return [
        ("runs", "list", "--db", db),
        ("runs", "list", "--json", "--db", db),
        ("runs", "show", RUN, "--db", db),
        ("rescore", RUN, "--db", db),
        ("analyze", RUN, "--db", db),
        ("analyze", RUN, "--json", "--db", db),
        ("trade", RUN, "--db", db),
        ("audit", RUN, "--db", db),
        ("leaderboard", RUN, "--out", "board", "--db", db),
    ]


def _foreign(path: Path) -> None:
    path.write_text("forecaster,market\nnot,a database\n", encoding="utf-8")


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _someone_elses(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        db.execute("INSERT INTO notes (text) VALUES ('keep me')")
    db.close()


def _previous_release(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.executescript((ROOT / "tests" / "runs" / "previous_schema.sql").read_text())
        db.execute("INSERT INTO runs VALUES ('r-000000000000', '2025-01-01T00:00:00Z', '{}', '{}')")
    db.close()


def tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        if p.is_file()
        else "dir"
        for p in sorted(folder.rglob("*"))
    }


@pytest.mark.parametrize(
    "make, says",
    [
        (_foreign, "not a readable SQLite database"),
        (_empty, "not a hindcast run database"),
        (_someone_elses, "not a hindcast run database"),
        (_previous_release, "written by an older hindcast"),
    ],
    ids=["foreign", "empty", "someone-elses-sqlite", "previous-release"],
)
def test_every_reading_command_refuses_and_leaves_the_file_byte_identical(tmp_path, make, says):
    path = tmp_path / "runs.db"
    make(path)
    before = tree(tmp_path)
    for argv in reading_commands(str(path)):
        proc = run_cli(*argv, cwd=tmp_path, env=NO_DB_ENV)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 1 and len(lines) == 1 and says in lines[0], (argv, proc.stderr)
        assert proc.stdout == "" and "runs.db" in lines[0]
        assert tree(tmp_path) == before, (
            argv
        )  # no table added, no migration, no -wal, no audits.db, no board/
