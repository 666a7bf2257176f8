"""One run swept by 4 `hindcast sweep --shard I/4` processes into one PostgreSQL database (a
real server, tests/pg.py), one of them kill -9'd mid-run: every planned (forecaster, market,
t0, repeat) is stored exactly once, the dead worker's share is finished by the others, and the
export equals, byte for byte, that of a single-process sweep of the same spec replaying the
same cached answers — into PostgreSQL and into SQLite. Every sweep pins the run's creation
instant (HINDCAST_CREATED_AT, the one wall-clock instant an export shows), so the exports are
compared whole, to the byte.

The answers come from the shipped fake OpenAI-compatible server on 127.0.0.1 (a probability
derived from each request's bytes, so every forecast differs); a first sweep records them in
a SQLite response cache, copied to the compared SQLite sweep's folder and into each PostgreSQL
database's cache table, and every sweep compared here replays them (no request reaches the fake).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psycopg

from hindcast.llm.cache import ResponseCache, canonical
from hindcast.llm.fake import FakeChatModel, Reply
from hindcast.runs.store import RunStore
from tests.helpers import ROOT, SAMPLE_MARKETS

MARKETS, REPEATS = 40, 3
PLANNED = MARKETS * 4 * REPEATS  # four lifetime fractions
WORKERS = 4
CREATED = "2026-01-02T03:04:05Z"
ENV = {**os.environ, "HINDCAST_CREATED_AT": CREATED}  # every sweep's: the run's creation instant


def varied(body: dict) -> Reply:
    """A valid answer whose probability depends on the request (its canonical bytes)."""
    digest = int(hashlib.sha256(canonical(body).encode()).hexdigest(), 16)
    return Reply(content=json.dumps({"probability": round(0.01 + (digest % 9800) / 10000, 4)}))


def sweep_cmd(fake_url: str, out: Path, db: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "hindcast",
        "sweep",
        "--store",
        str(SAMPLE_MARKETS),
        "--limit",
        str(MARKETS),
        "-f",
        f"zero-shot:model=openai-compatible:{fake_url}#fake-model",
        "--concurrency",
        "2",
        "--repeats",
        str(REPEATS),
        "--out",
        str(out),
        "--db",
        db,
        "--json",
        *extra,
    ]


def run(cmd: list[str]) -> dict:
    proc = subprocess.run(
        cmd, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False, env=ENV
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def start(cmd: list[str]) -> subprocess.Popen:
    """A sweep process started in the background, its output kept."""
    return subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV
    )


def with_cache(folder: Path, cache: Path) -> Path:
    """A new output folder whose response cache (a SQLite run database's) is a copy of `cache`."""
    folder.mkdir(parents=True)
    shutil.copyfile(cache, folder / "responses.db")
    return folder


def seeded(url: str, cache: Path) -> str:
    """A PostgreSQL run database whose response cache (a table of it) holds
    every answer of `cache`."""
    with sqlite3.connect(cache) as source:
        rows = source.execute("SELECT key, request, response FROM responses").fetchall()
    source.close()
    target = ResponseCache(url)
    for key, request, response in rows:
        target.put(key, json.loads(request), json.loads(response))
    assert len(target) == len(rows)
    target.close()
    return url


def export_of(out: Path, run_id: str, db: str) -> dict[str, bytes]:
    """Every exported file's bytes, whole; the run's creation instant (pinned, whichever
    process created the run) is shown once, in the report."""
    store = RunStore(db, read_only=True)
    created = store.run(run_id).created_at.encode()
    store.close()
    assert created == CREATED.encode()
    folder, out_files = out / run_id, {}
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            data = p.read_bytes()
            assert data.count(created) == (2 if p.name == "report.html" else 0), (
                p
            )  # its cell: value + text
            out_files[str(p.relative_to(folder))] = data
    return out_files


def keys(url: str) -> list[tuple]:
    with psycopg.connect(url.replace("+psycopg", "")) as db:
        return db.execute(
            "SELECT forecaster, market_id, t0, repeat, attempt FROM forecasts"
        ).fetchall()


def count(url: str) -> int:
    with psycopg.connect(url.replace("+psycopg", "")) as db:
        return db.execute("SELECT count(*) FROM forecasts").fetchone()[0]


def claims_of(url: str, pid: int) -> list[tuple]:
    """The keys process `pid` holds claims on now (its owner id is host/pid/token)."""
    try:
        with psycopg.connect(url.replace("+psycopg", "")) as db:
            rows = db.execute(
                "SELECT forecaster, market_id, t0, repeat, attempt, owner FROM claims"
            ).fetchall()
    except psycopg.Error:  # the tables are being created this instant
        return []
    return [r[:5] for r in rows if r[5].split("/")[1] == str(pid)]


def kill_while_asking(
    proc: subprocess.Popen, url: str, timeout: float = 300
) -> tuple[list[tuple], int]:
    """kill -9 `proc` while it holds a claim on a forecast not stored yet (it is frozen with
    SIGSTOP to look, and let go again when it is not); what it held then, and how many
    forecasts were stored."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        if claims_of(url, proc.pid):
            proc.send_signal(
                signal.SIGSTOP
            )  # frozen: what it holds now is what it holds if it dies now
            held, stored = claims_of(url, proc.pid), set(keys(url))
            if set(held) - stored:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                return held, len(stored)
            proc.send_signal(signal.SIGCONT)
        time.sleep(0.01)
    raise AssertionError(
        "worker 1 never held a forecast that was not stored yet (it started after the others ended)"
    )


def test_four_shards_one_killed_store_the_plan_once_and_export_what_one_process_exports(
    tmp_path, pg_server
):
    fake = FakeChatModel(default=varied)
    with fake.serve() as url:
        warm = run(sweep_cmd(url, tmp_path / "warm", str(tmp_path / "warm" / "hindcast.db")))
        cache, asked = tmp_path / "warm" / "responses.db", len(fake.requests)
        assert warm["planned"] == warm["executed"] == PLANNED

        single_pg = seeded(pg_server.create_database(), cache)
        single = run(sweep_cmd(url, tmp_path / "single", single_pg))
        lite = run(
            sweep_cmd(
                url, with_cache(tmp_path / "lite", cache), str(tmp_path / "lite" / "hindcast.db")
            )
        )

        sharded = seeded(pg_server.create_database(), cache)
        outs = [tmp_path / f"shard{i}" for i in range(1, WORKERS + 1)]
        procs = [
            start(sweep_cmd(url, out, sharded, "--shard", f"{i}/{WORKERS}"))
            for i, out in enumerate(outs, start=1)
        ]
        held, at_kill = kill_while_asking(procs[0], sharded)
        results = [p.communicate(timeout=600) for p in procs[1:]]
        assert len(fake.requests) == asked  # every sweep above replayed the cached answers
    print(
        "stored when worker 1 was killed:", at_kill, "of", PLANNED, "; its claims left:", len(held)
    )
    assert at_kill < PLANNED
    for proc, (out, err) in zip(procs[1:], results):
        assert proc.returncode == 0, err
    made = [json.loads(out)["executed"] for out, _ in results]
    print("made by the surviving shards:", made)
    stored = keys(sharded)
    assert len(stored) == len(set(stored)) == PLANNED  # planned = stored, no duplicate
    assert set(held) <= set(stored)  # the dead worker's claims were taken again and made
    assert sum(made) <= PLANNED and sum(made) >= PLANNED - at_kill
    with psycopg.connect(sharded.replace("+psycopg", "")) as db:
        assert db.execute("SELECT count(*) FROM claims").fetchone()[0] == 0
    run_id = single["run_id"]
    assert run_id == lite["run_id"] == json.loads(results[0][0])["run_id"]
    expected = export_of(tmp_path / "single", run_id, single_pg)
    assert len(expected) >= 3  # leaderboard tables and the report
    assert (
        export_of(tmp_path / "lite", run_id, f"sqlite:///{tmp_path / 'lite' / 'hindcast.db'}")
        == expected
    )  # either backend
    for out in outs[1:]:
        assert export_of(out, run_id, sharded) == expected
