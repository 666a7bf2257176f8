"""The team setup of docs/team-postgresql.md, as written there: the service (`hindcast schedule
once`) and two `hindcast sweep --shard I/2` processes on one PostgreSQL database (a real server,
tests/pg.py). The service's tables and the runs share the database; every process succeeds; the
run the shards made is whole; `runs list` and `schedule status` read it."""

from __future__ import annotations

import json
import subprocess
import sys

import psycopg

from tests.helpers import ROOT, SAMPLE_MARKETS, run_cli

CONFIG = """
[service]
db = "{db}"
lock = "service.lock"
log = "schedule.log"
runs_out = "exports"

[[sweeps]]
name = "baselines"
[sweeps.markets]
store = "{store}"
[sweeps.cutoffs]
fractions = [0.5]
[[sweeps.forecasters]]
spec = "market"
[[sweeps.forecasters]]
spec = "constant"
"""


def test_the_service_and_two_shards_share_one_postgresql_database(tmp_path, pg_server):
    db = pg_server.create_database()
    config = tmp_path / "hindcast.toml"
    config.write_text(CONFIG.format(db=db, store=SAMPLE_MARKETS))
    once = run_cli("schedule", "once", "--config", str(config), "--now", "2026-11-30T00:00:00Z")
    assert once.returncode == 0, once.stdout + once.stderr
    sweep = [
        sys.executable,
        "-m",
        "hindcast",
        "sweep",
        "--store",
        str(SAMPLE_MARKETS),
        "--limit",
        "10",
        "--fractions",
        "0.25,0.75",
        "-f",
        "market",
        "-f",
        "constant",
        "--db",
        db,
        "--json",
    ]
    procs = [
        subprocess.Popen(
            [*sweep, "--shard", f"{i}/2", "--out", str(tmp_path / f"m{i}")],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in (1, 2)
    ]
    outputs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    results = [json.loads(out) for out, _ in outputs]
    assert results[0]["run_id"] == results[1]["run_id"] and results[0]["planned"] == 10 * 2 * 2
    with psycopg.connect(db.replace("+psycopg", "")) as conn:
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            )
        }
        stored = conn.execute(
            "SELECT count(*), count(DISTINCT (forecaster, market_id, t0, repeat)) FROM forecasts "
            "WHERE run_id = %s",
            (results[0]["run_id"],),
        ).fetchone()
    assert {"runs", "forecasts", "claims", "hindcast_schema"} <= tables and any(
        t.startswith("schedule_") for t in tables
    )
    assert stored == (40, 40)
    listed = run_cli("runs", "list", "--db", db, "--json")
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == 2, (
        listed.stderr
    )  # the service's and the shards'
    status = run_cli("schedule", "status", "--config", str(config), "--json")
    assert status.returncode == 0, status.stderr
