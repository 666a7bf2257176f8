"""Issue 36, item 4: a tick killed (SIGKILL, a real subprocess) at each point of writing a live
forecast — half-way through appending its log line, after the append before the store write,
after the store write before the head — is settled by the next tick by itself (or by `hindcast
live repair`): nothing verified is lost, no record the chain and the run store do not prove is
kept, and the log verifies against the recorded head and the stored forecasts again. On SQLite
and on PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from datetime import timedelta

import pytest
from typer.testing import CliRunner

from hindcast.cli.live import app
from hindcast.schedule import live, livelog, load
from tests.helpers import ROOT
from tests.schedule.conftest import T0, query, tick, write_config

LIVE = '\n[live]\nsweep = "baselines"\nevery = "1d"\n'

# the child ticks once at T0 and kills itself (SIGKILL) while writing the second live forecast
CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from datetime import datetime
    from pathlib import Path
    from hindcast.schedule import live, livelog
    from hindcast.schedule.state import State
    from tests.schedule.conftest import tick

    point, config, now = sys.argv[1], Path(sys.argv[2]), datetime.fromisoformat(sys.argv[3])
    import hindcast.replay.sweep as sweep

    die = lambda: os.kill(os.getpid(), signal.SIGKILL)
    append, add_many = livelog.append, sweep.add_many

    def half_append(path, head, body):
        if head.seq < 0:
            return append(path, head, body)
        whole = Path(str(path) + ".whole")
        append(whole, head, body)
        line = whole.read_bytes()
        with open(path, "ab") as f:
            f.write(line[: len(line) // 2])
            f.flush()
            os.fsync(f.fileno())
        die()

    def add_then(store, rows, *args, **kwargs):  # the live arm's store step (one row at a time)
        live_run = rows[0]["run_id"].startswith("live-")
        if live_run and live.head_of(State(store.engine)).seq >= 0:
            if point == "appended":
                die()
            add_many(store, rows, *args, **kwargs)
            die()
        return add_many(store, rows, *args, **kwargs)

    if point == "appending":
        livelog.append = half_append
    else:
        sweep.add_many = add_then
    tick(config, now)
    """
)


def _killed(config, point: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, point, str(config), T0.isoformat()],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == -9, proc.stderr


def _live_rows(folder) -> set[tuple]:
    rows = query(
        folder,
        "SELECT forecaster, market_id, t0, probability FROM forecasts WHERE run_id = :r",
        r=live.run_id("baselines"),
    )
    return set(rows)


@pytest.mark.parametrize("point", ["appending", "appended", "stored"])
def test_a_tick_killed_at_each_point_is_settled_by_the_next_tick(
    tmp_path, server, clock, service_db, point
):
    config = write_config(tmp_path, server.url, LIVE)
    cfg = load(config)
    _killed(config, point)
    log = cfg.live.log
    lines = log.read_bytes().splitlines(keepends=True)
    kept = [json.loads(x) for x in lines if x.endswith(b"\n")]
    assert len(kept) == (1 if point == "appending" else 2)
    assert not live.verify(log, cfg).ok  # what the crash left fails verification …
    later = T0 + timedelta(hours=1)
    clock.now = later
    statuses, text = tick(config, later)
    assert statuses["live"] == "ok", statuses  # … and the next tick settles it by itself
    assert "live.recovered" in text
    verified = live.verify(log, cfg)
    assert verified.ok, verified.bad
    rows = _live_rows(tmp_path)
    logged = {
        (r["forecaster"], r["market_id"], r["t0"], r["probability"]) for r in verified.records
    }
    assert logged == rows  # every stored forecast is logged and every logged one stored
    second = (kept[1]["forecaster"], kept[1]["market_id"], kept[1]["t0"]) if len(kept) > 1 else None
    if point == "stored":  # proven by the chain and the store: kept, now under the head
        assert verified.records[1] == kept[1] and not log.with_name(log.name + ".dropped").exists()
    else:  # never stored: cut from the log, kept aside, its market asked again at `later`
        dropped = log.with_name(log.name + ".dropped").read_text().splitlines()
        assert len(dropped) == 1 and verified.records[0] == kept[0]
        if second is not None:
            assert json.loads(dropped[0]) == kept[1] and second not in {r[:3] for r in rows}


def test_live_repair_settles_a_stored_record_past_the_head_and_then_has_nothing_to_do(
    tmp_path, server, clock
):
    config = write_config(tmp_path, server.url, LIVE)
    _killed(config, "stored")
    log = load(config).live.log
    before = log.read_bytes()
    first = CliRunner().invoke(app, ["repair", "--config", str(config)])
    assert first.exit_code == 0 and "record 2 of" in first.stdout and "now the head" in first.stdout
    assert log.read_bytes() == before
    assert live.verify(log, load(config)).ok
    again = CliRunner().invoke(app, ["repair", "--config", str(config)])
    assert again.exit_code == 0 and again.stdout.strip() == "live log: nothing to repair"


def test_a_record_past_the_head_that_the_store_holds_differently_is_never_accepted(
    tmp_path, server, clock
):
    """Not a crash state (the log or the store was changed): nothing is changed, refused."""
    config = write_config(tmp_path, server.url, LIVE)
    _killed(config, "stored")
    cfg = load(config)
    from sqlalchemy import create_engine, text

    record = json.loads(cfg.live.log.read_text().splitlines()[1])
    engine = create_engine(cfg.db_url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "UPDATE forecasts SET probability = 0.123 WHERE market_id = :m AND forecaster = :f"
            ),
            {"m": record["market_id"], "f": record["forecaster"]},
        )
    engine.dispose()
    before = cfg.live.log.read_bytes()
    statuses, _ = tick(config, T0 + timedelta(hours=1))
    assert statuses["live"] == "failed" and cfg.live.log.read_bytes() == before
    assert livelog.verify(cfg.live.log, live.head_of(live.State(create_engine(cfg.db_url)))).bad
