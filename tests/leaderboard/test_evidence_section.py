"""Evidence strata end to end: a sweep of two real sample markets over a crafted archive (one
headline settling the first question the day before its t0, a neutral one for the second, the
settling headlines of the second at and after t0). The sweep does not compute them (its report
says how to); `hindcast analyze` computes them, shows the split and keeps them in the run
database's `analyses` table (its forecasts untouched); the next sweep's report shows them."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from datetime import timedelta

import pytest

from hindcast import api, replay
from hindcast.replay.spec import ReplaySpec
from hindcast.runs.store import RunStore
from tests.helpers import SAMPLE_MARKETS, at, run_cli
from tests.integration.archive_support import build_archive, write_headlines

MAMDANI, THUNBERG = "0xebddfcf7b4", "0x319825b442"


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    folder = tmp_path_factory.mktemp("evidence")
    spec = ReplaySpec(store=SAMPLE_MARKETS, forecasters=("market", "constant"), fractions=(0.5,))
    plan = replay.prepare(spec)
    t0 = {c.market_id[:12]: c.t0 for c in plan.cutoffs}
    ids = tuple(c.market_id for c in plan.cutoffs if c.market_id[:12] in (MAMDANI, THUNBERG))
    docs = [
        ("settles", t0[MAMDANI] - timedelta(days=1), "Zohran Mamdani wins NYC mayoral election"),
        ("neutral", t0[THUNBERG] - timedelta(days=1), "Greta Thunberg joins a Gaza aid flotilla"),
        ("at-t0", t0[THUNBERG], "Greta Thunberg wins the Nobel Peace Prize"),
        ("later", t0[THUNBERG] + timedelta(days=2), "Greta Thunberg awarded Nobel Peace Prize"),
    ]
    archive = folder / "archive"
    snapshot = build_archive(archive, [write_headlines(folder / "h.jsonl", docs)])
    full = ReplaySpec(**{**spec.__dict__, "ids": ids, "archive": archive, "snapshot": snapshot.id})
    return folder, folder / "h.db", full


def _sweep(folder, db, spec) -> str:
    store = RunStore(f"sqlite:///{db}")
    result = api.sweep(spec, runs=store, out=folder, now=at("2026-11-30T00:00:00"))
    store.close()
    return result.run_id


def _forecasts(db) -> list:
    with closing(sqlite3.connect(db)) as conn:
        return conn.execute("SELECT * FROM forecasts ORDER BY id").fetchall()


def _kept(db) -> int | None:
    """Rows of the run database's `analyses` table (None: no such table)."""
    with closing(sqlite3.connect(db)) as conn:
        try:
            return conn.execute("SELECT count(*) FROM analyses").fetchone()[0]
        except sqlite3.OperationalError:
            return None


def test_the_sweep_leaves_them_to_analyze_which_keeps_them_for_the_next_report(swept):
    folder, db, spec = swept
    run_id = _sweep(folder, db, spec)
    html = (folder / run_id / "report.html").read_text("utf-8")
    assert "evidence strata: not computed" in html and "hindcast analyze" in html
    assert not (folder / "evidence.db").exists()

    before = _forecasts(db)
    assert _kept(db) is None
    proc = run_cli("analyze", run_id, "--db", str(db), "--json", check=True)
    assert _forecasts(db) == before and _kept(db) == 2  # the run's two (market, t0) pairs
    assert not (folder / "evidence.db").exists()
    run_cli("analyze", run_id, "--db", str(db), check=True)
    assert _kept(db) == 2  # computed once: a second analyze adds nothing
    found = {f["key"]: f for f in json.loads(proc.stdout)["findings"]}
    cells = {(r["forecaster"], r["evidence"]): r for r in found["evidence"]["rows"]}
    assert {k: r["n_rows"] for k, r in cells.items()} == {
        (f, s): 1 if s != "all" else 2
        for f in ("constant", "market")
        for s in ("present", "absent", "all")
    }
    assert cells[("constant", "present")]["brier"] == pytest.approx(0.25)
    table = run_cli("analyze", run_id, "--db", str(db), check=True).stdout
    assert "decisive evidence in the archive before t0" in table

    assert _sweep(folder, db, spec) == run_id
    html = (folder / run_id / "report.html").read_text("utf-8")
    assert "decisive evidence in the archive before t0" in html
    assert "1 of 2 (market, t0) labelled present" in html


def test_an_export_reads_only_what_analyze_kept_and_never_computes_them(swept, tmp_path):
    """Issue 39 item 3: `hindcast leaderboard` of a stored run computed the strata it lacked
    (185 s on the default run); it now shows only what `hindcast analyze` kept."""
    _, _, spec = swept
    db = tmp_path / "fresh.db"  # nothing kept in it yet
    run_id = _sweep(tmp_path, db, spec)
    args = ("leaderboard", run_id, "--db", str(db), "--format", "html,csv")
    run_cli(*args, "--out", str(tmp_path / "before"), check=True)
    html = (tmp_path / "before" / "report.html").read_text("utf-8")
    assert "evidence strata: not computed" in html and "labelled present" not in html
    assert _kept(db) is None

    run_cli("analyze", run_id, "--db", str(db), check=True)
    run_cli(*args, "--out", str(tmp_path / "after"), check=True)
    html = (tmp_path / "after" / "report.html").read_text("utf-8")
    assert "1 of 2 (market, t0) labelled present" in html
