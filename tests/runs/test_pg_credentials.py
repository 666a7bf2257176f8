"""No password of a PostgreSQL URL given to --db is ever printed or stored: every command that
takes --db is run against a real server (tests/pg.py) once succeeding and once failing (a
database that does not exist), with a planted password in the URL; everything they printed,
every file they wrote, and every row of the run database (pg_dump) are grepped for it. The password
is real: the test server checks it (scram-sha-256) for the role owning the database."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from hindcast.llm.fake import FakeChatModel, answer
from tests.helpers import SAMPLE_MARKETS, run_cli

PASSWORD = "planted-pg-pass-8642"


def commands(db: str, run_id: str, out: Path, fake_url: str) -> dict[str, list[str]]:
    """Every command that takes --db, pointed at `db`."""
    return {
        "sweep": [
            "sweep",
            "--store",
            str(SAMPLE_MARKETS),
            "--limit",
            "2",
            "--fractions",
            "0.5",
            "-f",
            "constant",
            "-f",
            "market",
            "--out",
            str(out / "sweep"),
            "--db",
            db,
        ],
        "runs list": ["runs", "list", "--db", db],
        "runs show": ["runs", "show", run_id, "--db", db, "--json"],
        "rescore": ["rescore", run_id, "--db", db],
        "leaderboard": ["leaderboard", run_id, "--out", str(out / "board"), "--db", db],
        "analyze": ["analyze", run_id, "--db", db],
        "audit": ["audit", run_id, "--db", db],
        "trade": ["trade", run_id, "--db", db, "--trades", str(out / "trades.csv")],
        "probe recall": [
            "probe",
            "recall",
            "-f",
            f"openai-compatible:{fake_url}#m",
            "--store",
            str(SAMPLE_MARKETS),
            "--limit",
            "1",
            "--db",
            db,
            "--recall",
            str(out / "recall.json"),
        ],
    }


def test_a_planted_postgresql_password_is_never_printed_or_stored(tmp_path, pg_server):
    good = pg_server.create_database(password=PASSWORD)
    bad = good.rsplit("/", 1)[0] + "/no_such_database"
    assert PASSWORD in good and PASSWORD in bad
    printed: list[str] = []
    fake = FakeChatModel(default=answer('{"probability": 0.35}'))
    with fake.serve() as url:
        first = run_cli(
            "sweep",
            "--store",
            str(SAMPLE_MARKETS),
            "--limit",
            "2",
            "--fractions",
            "0.5",
            "-f",
            "constant",
            "-f",
            "market",
            "--out",
            str(tmp_path / "first"),
            "--db",
            good,
            "--json",
        )
        assert first.returncode == 0, first.stderr
        printed += [first.stdout, first.stderr]
        run_id = json.loads(first.stdout)["run_id"]
        for name, args in commands(good, run_id, tmp_path / "good", url).items():
            done = run_cli(*args)
            assert done.returncode == 0, (name, done.stdout, done.stderr)
            printed += [done.stdout, done.stderr]
        for name, args in commands(bad, run_id, tmp_path / "bad", url).items():
            if (
                name == "probe recall"
            ):  # --db only locates its cache: it fails on a model that is not one
                args = [
                    a if not a.startswith("openai-compatible:") else "no-such-model" for a in args
                ]
            failed = run_cli(*args)
            assert failed.returncode != 0 and "Traceback" not in failed.stderr, (
                name,
                failed.stderr,
            )
            assert failed.stderr.startswith("hindcast: error:") or "Usage:" in failed.stderr, (
                name,
                failed.stderr,
            )
            printed += [failed.stdout, failed.stderr]
    assert any(
        "no_such_database" in text and "***@127.0.0.1" in text for text in printed
    )  # the URL was named
    for text in printed:
        assert PASSWORD not in text
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".html" for p in written)
    for path in written:
        assert PASSWORD.encode() not in path.read_bytes(), path
    from tests import pg

    dumped = subprocess.run(
        [
            str(pg.pg_bin() / "pg_dump"),
            "-h",
            "127.0.0.1",
            "-p",
            str(pg_server.port),
            "-U",
            "postgres",
            good.rsplit("/", 1)[1],
        ],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PGPASSWORD": pg.PASSWORD},
    ).stdout
    assert (
        run_id in dumped and "hindcast_cache_schema" in dumped and PASSWORD not in dumped
    )  # runs, cache: all
