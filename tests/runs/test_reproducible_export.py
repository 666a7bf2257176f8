"""A sweep's export is the same to the byte from the same spec and the same forecasts, whenever
and into whichever run database it was swept, once the run's creation instant (the only wall
clock the export shows, in report.html) is pinned with HINDCAST_CREATED_AT; without it, the
wall clock is recorded. A value that is not an ISO 8601 instant with a zone is refused in one
line before anything is written.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from hindcast.runs.store import RunStore
from tests.helpers import SAMPLE_MARKETS, run_cli

PINNED = "2026-03-04T05:06:07Z"
BASELINES = ("-f", "market", "-f", "constant", "-f", "base-rate")


def sweep_args(out: Path, db: str, limit: int, *forecasters: str) -> list[str]:
    store = ["--store", str(SAMPLE_MARKETS), "--limit", str(limit)]
    return ["sweep", *store, *forecasters, "--out", str(out), "--db", db]


def sweep(out: Path, db: str, env: dict) -> dict:
    proc = run_cli(*sweep_args(out, db, 12, *BASELINES), "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def exported(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_two_sweeps_into_two_databases_at_two_instants_export_the_same_bytes(tmp_path, new_db_url):
    env = {"HINDCAST_CREATED_AT": PINNED}
    first = sweep(tmp_path / "a", new_db_url(), env)
    time.sleep(1.1)  # the wall clock has moved on by a second at least
    second_db = new_db_url()
    second = sweep(tmp_path / "b", second_db, env)
    assert first["run_id"] == second["run_id"]
    a, b = exported(tmp_path / "a" / first["run_id"]), exported(tmp_path / "b" / second["run_id"])
    assert "report.html" in a and len(a) >= 3
    assert a == b
    assert a["report.html"].count(PINNED.encode()) == 2  # the inputs table's cell: value and text
    store = RunStore(second_db, read_only=True)
    assert store.run(second["run_id"]).created_at == PINNED
    store.close()


def test_without_the_variable_the_wall_clock_is_recorded(tmp_path, new_db_url):
    db = new_db_url()
    before = datetime.now(timezone.utc).replace(microsecond=0)  # noqa: TID251 - the test checks the wall clock
    done = sweep(tmp_path / "out", db, {"HINDCAST_CREATED_AT": None})
    after = datetime.now(timezone.utc)  # noqa: TID251 - the test checks the wall clock
    store = RunStore(db, read_only=True)
    created = datetime.fromisoformat(store.run(done["run_id"]).created_at.replace("Z", "+00:00"))
    store.close()
    assert before <= created <= after


@pytest.mark.parametrize(
    "value", ["bogus", "2026-03-04T05:06:07", "2026-13-01T00:00:00Z", "yesterday", "2026-01-01"]
)
def test_a_value_that_is_not_an_instant_with_a_zone_is_refused_before_writing(tmp_path, value):
    out, db = tmp_path / "out", tmp_path / "db" / "hindcast.db"
    proc = run_cli(
        *sweep_args(out, str(db), 2, "-f", "constant"), env={"HINDCAST_CREATED_AT": value}
    )
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hindcast: error: HINDCAST_CREATED_AT=")
    assert repr(value) in lines[0] and "Traceback" not in proc.stderr
    assert not out.exists() and not db.parent.exists()
