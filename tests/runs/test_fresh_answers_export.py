"""Issue 36, item 11: a run swept by two `--shard I/2` processes asking the model afresh (no
cached answer) exports the same bytes as one process asking afresh: measured wall-clock time
(latency) stays in the run database (`hindcast runs show`) and out of every export. The fake
OpenAI-compatible server answers by each request's bytes and sleeps a varying time, so the
latencies differ from sweep to sweep. On SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from hindcast.llm.fake import FakeChatModel
from tests.helpers import ROOT
from tests.runs.test_shards import ENV, export_of, start, sweep_cmd, varied

SHARDS = 2


def command(url: str, out, db: str, *extra: str) -> list[str]:
    """test_shards' sweep (40 markets × 4 fractions, zero-shot on the fake) with one repeat: no
    two forecasts send the same request, so each process sends every request it needs once
    (identical requests in flight at once would each be sent: see docs/team-postgresql.md)."""
    argv = sweep_cmd(url, out, db, *extra)
    argv[argv.index("--repeats") + 1] = "1"
    return argv


def slow_varied(body: dict):
    time.sleep(0.001 * (hash(json.dumps(body, sort_keys=True)) % 20))
    return varied(body)


def _sharded(url: str, tmp_path, db: str) -> dict:
    outs = [tmp_path / f"shard{i}" for i in range(1, SHARDS + 1)]
    procs = [
        start(command(url, out, db, "--shard", f"{i}/{SHARDS}"))
        for i, out in enumerate(outs, start=1)
    ]
    done = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in done]
    return json.loads(done[-1][0])


def _single(url: str, out, db: str) -> dict:
    proc = subprocess.run(
        command(url, out, db), cwd=ROOT, capture_output=True, text=True, env=ENV, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _board(run_id: str, db: str, out) -> dict[str, bytes]:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "hindcast",
            "leaderboard",
            run_id,
            "--db",
            db,
            "--out",
            str(out / run_id),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=ENV,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return export_of(out, run_id, db)


def test_a_sharded_sweep_with_fresh_answers_exports_the_bytes_of_one_process(tmp_path, new_db_url):
    if new_db_url().startswith("sqlite"):  # each in its own folder: a response cache each
        single_db, sharded_db = (
            f"sqlite:///{tmp_path / name / 'hindcast.db'}" for name in ("single", "sharded")
        )
    else:  # a PostgreSQL database holds its own response cache
        single_db, sharded_db = new_db_url(), new_db_url()
    fake = FakeChatModel(default=slow_varied)
    with fake.serve() as url:
        run_id = _single(url, tmp_path / "single", single_db)["run_id"]
        asked = len(fake.requests)
        _sharded(url, tmp_path, sharded_db)
        assert len(fake.requests) == 2 * asked == 2 * 160  # both asked afresh: no shared cache
    assert _board(run_id, sharded_db, tmp_path / "b2") == _board(run_id, single_db, tmp_path / "b1")
