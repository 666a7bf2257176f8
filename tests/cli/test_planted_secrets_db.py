"""No credential is printed or written by any command that takes a run database (issue 24).

A password is planted in PostgreSQL `--db` URLs (and in $HINDCAST_DB and a service config):
an unreachable server, a driver that is not installed, a real throwaway PostgreSQL server
started for this module (a wrong password, a database that is not a run database, and the
success paths: a sweep stored there, `runs list`'s title, `schedule status` text and
--json). Keys are planted where a variable name belongs (`key_env=sk-…`) and in an endpoint
URL's query (`?api_key=…`). Every command runs as a user types it; its stdout, its stderr and
every file under the test's folder are searched for each planted value.

The real server is the session's (tests/pg.py: Debian's initdb/pg_ctl, apt-get install postgresql);
without them the real-server tests are skipped and say so.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tests.helpers import SAMPLE_MARKETS, run_cli

PASSWORD = "planted-db-pass-8311"
KEY = "sk-planted-key-value-5521"
QUERY_KEY = "planted-query-key-6607"
PLANTED = (PASSWORD, KEY, QUERY_KEY)
NO_DB_ENV = {"HINDCAST_DB": None}
UNREACHABLE = f"postgresql+psycopg://hindcast:{PASSWORD}@127.0.0.1:{{port}}/runs"
NO_DRIVER = (
    f"postgresql+pg8000://hindcast:{PASSWORD}@127.0.0.1:5432/runs"  # pg8000 is not installed
)
BASELINES = (
    "--store",
    str(SAMPLE_MARKETS),
    "--limit",
    "2",
    "--fractions",
    "0.5",
    "-f",
    "market",
    "-f",
    "constant:p=0.3",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def reading_commands(db: str, out: Path, run: str = "r-000000000000") -> list[tuple[str, ...]]:
    """Every command that takes --db, each with that database."""
    return [
        ("runs", "list", "--db", db),
        ("runs", "list", "--json", "--db", db),
        ("runs", "show", run, "--db", db),
        ("rescore", run, "--db", db),
        ("analyze", run, "--db", db),
        ("trade", run, "--db", db),
        ("audit", run, "--db", db),
        ("leaderboard", run, "--out", str(out / "board"), "--db", db),
        ("sweep", *BASELINES, "--out", str(out / "sweep"), "--db", db),
    ]


def assert_nothing_planted(tmp_path: Path, procs) -> None:
    """No planted value in any output, nor in any file under tmp_path (names included) but the
    service config the test wrote it into."""
    for proc in procs:
        for secret in PLANTED:
            assert secret not in proc.stdout and secret not in proc.stderr, (
                proc.args,
                proc.stdout,
                proc.stderr,
            )
    for path in tmp_path.rglob("*"):
        if path.name == CONFIG:
            continue
        for secret in PLANTED:
            assert secret not in str(path)
            assert not path.is_file() or secret.encode() not in path.read_bytes(), path


def one_line_error(proc) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode != 0 and len(lines) == 1 and lines[0].startswith("hindcast: error: "), (
        proc.stderr
    )
    return lines[0]


CONFIG = "hindcast.toml"


def service_config(folder: Path, db: str) -> Path:
    config = folder / CONFIG
    config.write_text(
        f'[service]\ndb = "{db}"\nlock = "service.lock"\nlog = "service.log"\n', encoding="utf-8"
    )
    return config


# ---- no server: unreachable, no driver -------------------------------------------------------
@pytest.mark.parametrize(
    "url", [UNREACHABLE.format(port=free_port()), NO_DRIVER], ids=["unreachable", "no-driver"]
)
def test_a_database_error_never_prints_the_password(tmp_path, url):
    procs = [
        run_cli(*argv, cwd=tmp_path, env=NO_DB_ENV) for argv in reading_commands(url, tmp_path)
    ]
    procs += [
        run_cli("runs", "list", cwd=tmp_path, env={"HINDCAST_DB": url}),
        run_cli("rescore", "r-1", cwd=tmp_path, env={"HINDCAST_DB": url}),
    ]
    for proc in procs:
        assert "***@127.0.0.1" in one_line_error(proc)
    config = service_config(tmp_path, url)
    service = [
        run_cli("schedule", command, "--config", str(config), cwd=tmp_path, env=NO_DB_ENV)
        for command in ("status", "once")
    ]
    service.append(
        run_cli(
            "schedule", "status", "--json", "--config", str(config), cwd=tmp_path, env=NO_DB_ENV
        )
    )
    for proc in service:
        one_line_error(proc)
    assert_nothing_planted(tmp_path, procs + service)


# ---- keys where they do not belong ------------------------------------------------------------
@pytest.mark.parametrize(
    "spec",
    [
        f"zero-shot:model=openai:gpt-4.1-mini,key_env={KEY}",
        "zero-shot:model=openai-compatible:http://127.0.0.1:9/v1#m,key_env=AKIA7PLANTED5521KEYX",
        f"zero-shot:model=openai-compatible:http://127.0.0.1:9/v1?api_key={QUERY_KEY}#m",
        f"zero-shot:model=openai-compatible:http://127.0.0.1:9/v1?x=1&access_token={QUERY_KEY}#m",
        f"retrieval-agent:model=openai-compatible:http://127.0.0.1:9/v1?token={QUERY_KEY}#m",
    ],
)
def test_a_key_in_a_spec_is_refused_in_one_line_without_echoing_it(tmp_path, spec):
    db = tmp_path / "runs" / "hindcast.db"
    procs = [
        run_cli(
            "sweep",
            "--store",
            str(SAMPLE_MARKETS),
            "--limit",
            "1",
            "--fractions",
            "0.5",
            "-f",
            spec,
            "--out",
            str(tmp_path / "runs"),
            "--db",
            str(db),
            cwd=tmp_path,
            env=NO_DB_ENV,
        ),
        run_cli("probe", "recall", "-f", spec, "--db", str(db), cwd=tmp_path, env=NO_DB_ENV),
    ]
    for proc in procs:
        line = one_line_error(proc)
        assert proc.returncode == 1 and ("key_env" in line or "credential" in line), line
    assert "AKIA7PLANTED5521KEYX" not in "".join(p.stderr + p.stdout for p in procs)
    assert_nothing_planted(tmp_path, procs)
    assert list(tmp_path.iterdir()) == []  # refused before the run database or responses.db exist


def test_a_judge_key_pasted_as_key_env_is_refused_without_echo(tmp_path):
    db = str(tmp_path / "runs" / "hindcast.db")
    swept = run_cli(
        "-q",
        "sweep",
        *BASELINES,
        "--out",
        str(tmp_path / "runs"),
        "--db",
        db,
        "--json",
        cwd=tmp_path,
        env=NO_DB_ENV,
        check=True,
    )
    before = sorted(p.name for p in (tmp_path / "runs").iterdir())
    proc = run_cli(
        "audit",
        json.loads(swept.stdout)["run_id"],
        "--detector",
        f"judge:model=openai:gpt-4o-mini,key_env={KEY}",
        "--db",
        db,
        cwd=tmp_path,
        env=NO_DB_ENV,
    )
    assert "key_env" in one_line_error(proc) and proc.returncode == 1
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == before  # no audits.db
    assert_nothing_planted(tmp_path, [swept, proc])


# ---- a real PostgreSQL server -------------------------------------------------------------------
@pytest.fixture(scope="module")
def postgres(pg_server):
    """The session's throwaway PostgreSQL (tests/pg.py) with a login role `hindcast` whose
    password is PASSWORD (checked by the server, scram) and that may create databases: its URL
    without a database."""
    with pg_server.admin() as conn:
        conn.execute(f"CREATE ROLE hindcast LOGIN CREATEDB PASSWORD '{PASSWORD}'")
    return f"postgresql+psycopg://hindcast:{PASSWORD}@127.0.0.1:{pg_server.port}"


def test_a_wrong_password_and_a_database_that_is_not_ours_are_one_line_without_it(
    tmp_path, postgres
):
    wrong = postgres.replace(PASSWORD, PASSWORD + "-wrong") + "/postgres"
    procs = [
        run_cli(*argv, cwd=tmp_path, env=NO_DB_ENV) for argv in reading_commands(wrong, tmp_path)
    ]
    for proc in procs:
        assert "password authentication failed" in one_line_error(proc), proc.stderr
    foreign = postgres + "/template1"  # a database without hindcast's tables: read, never written
    reads = [
        run_cli(*argv, cwd=tmp_path, env=NO_DB_ENV)
        for argv in reading_commands(foreign, tmp_path)[:-1]
    ]
    for proc in reads:
        assert "not a hindcast run database" in one_line_error(proc), proc.stderr
    assert_nothing_planted(tmp_path, procs + reads)


def test_the_success_paths_never_print_the_password(tmp_path, postgres):
    import psycopg

    with psycopg.connect(postgres.replace("+psycopg", "") + "/postgres", autocommit=True) as conn:
        conn.execute("CREATE DATABASE runs")
    db = postgres + "/runs"
    swept = run_cli(
        "sweep",
        *BASELINES,
        "--out",
        str(tmp_path / "out"),
        "--db",
        db,
        "--json",
        cwd=tmp_path,
        env=NO_DB_ENV,
        check=True,
    )
    run = json.loads(swept.stdout)["run_id"]
    procs = [swept] + [
        run_cli(*argv, cwd=tmp_path, env=NO_DB_ENV, check=True)
        for argv in reading_commands(db, tmp_path, run)[:-1]
    ]
    listed = run_cli("runs", "list", cwd=tmp_path, env={"HINDCAST_DB": db}, check=True)
    assert (
        "***@127.0.0.1" in listed.stdout and run in listed.stdout
    )  # the table's title names the database
    config = service_config(tmp_path, db)
    status = [
        run_cli(
            "schedule",
            "status",
            *flag,
            "--config",
            str(config),
            cwd=tmp_path,
            env=NO_DB_ENV,
            check=True,
        )
        for flag in ((), ("--json",))
    ]
    assert "***@127.0.0.1" in status[0].stdout and json.loads(status[1].stdout)["db"].startswith(
        "postgresql+psycopg://***@127.0.0.1"
    )
    assert_nothing_planted(tmp_path, procs + [listed] + status)


def test_a_read_only_open_of_postgresql_cannot_write(postgres):
    import psycopg
    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    from hindcast.runs.store import RunStore

    with psycopg.connect(postgres.replace("+psycopg", "") + "/postgres", autocommit=True) as conn:
        conn.execute("CREATE DATABASE readonly")
    RunStore(postgres + "/readonly").close()  # a write open creates the tables
    store = RunStore(postgres + "/readonly", read_only=True)
    try:
        assert store.runs() == []
        with pytest.raises(DBAPIError, match="read-only transaction"), store.engine.begin() as conn:
            conn.execute(text("CREATE TABLE planted (i int)"))
    finally:
        store.close()
