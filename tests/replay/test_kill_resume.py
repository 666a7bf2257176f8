"""kill -9 a sweep at random points, several times; re-running completes it exactly.

A real `hindcast sweep` subprocess forecasts with the zero-shot forecaster against the
shipped fake OpenAI-compatible server on 127.0.0.1 (real sockets, fixed latency).
"""

import difflib
import json
import random
import signal
import sqlite3
import subprocess
import sys
import time

from hindcast.llm.cache import canonical
from hindcast.llm.fake import FakeChatModel, answer
from tests.helpers import ROOT, SAMPLE_MARKETS

KILLS = 4
CONCURRENCY = 4
MARKETS = 20
PLANNED = MARKETS * 4


def sweep_cmd(url: str, out) -> list[str]:
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
        f"zero-shot:model=openai-compatible:{url}#fake-model",
        "--concurrency",
        str(CONCURRENCY),
        "--out",
        str(out),
        "--db",
        str(out / "hindcast.db"),
    ]


def stored(out) -> list[tuple]:
    with sqlite3.connect(out / "hindcast.db") as db:
        return db.execute(
            "SELECT forecaster, market_id, t0, repeat, probability, error FROM forecasts"
        ).fetchall()


def _until_more_than(rows: int, out, timeout: float = 120.0) -> None:
    """Wait until the run database holds more than `rows` forecasts (or `timeout` seconds)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if (out / "hindcast.db").exists() and len(stored(out)) > rows:
                return
        except sqlite3.Error:  # being created or migrated this instant
            pass
        time.sleep(0.05)


def _near_twins(bodies: set[str]) -> str:
    """For a failure message: request bodies that ask the same question on the same day (the
    first two lines of the last message) yet differ, as a diff of the first such pair."""
    groups: dict[str, list[dict]] = {}
    for text in sorted(bodies):
        body = json.loads(text)
        asked = str((body.get("messages") or [{}])[-1].get("content", text)).split("\n")
        groups.setdefault("\n".join(asked[:3]), []).append(body)
    for same in groups.values():
        if len(same) > 1:
            a, b = (json.dumps(x, sort_keys=True, indent=1).splitlines() for x in same[:2])
            return (
                f"{len(bodies)} distinct bodies; two ask the same question on the same day:\n"
                + ("\n".join(difflib.unified_diff(a, b, lineterm="", n=1)))
            )
    return f"{len(bodies)} distinct bodies, {len(groups)} (question, day) pairs"


def test_sweep_killed_at_random_points_completes_with_no_loss_duplicate_or_repeated_call(tmp_path):
    fake = FakeChatModel(default=answer('{"probability": 0.42}', delay=0.3))
    rnd, progress = random.Random(11), []
    with fake.serve() as url:
        for _ in range(KILLS):
            before = progress[-1] if progress else 0
            proc = subprocess.Popen(
                sweep_cmd(url, tmp_path),
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            _until_more_than(
                before, tmp_path
            )  # a loaded machine starts slowly: kill once it is storing
            time.sleep(rnd.uniform(0.1, 1.0))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            progress.append(len(stored(tmp_path)) if (tmp_path / "hindcast.db").exists() else 0)
        done = subprocess.run(
            sweep_cmd(url, tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr
        rows = stored(tmp_path)
        requests_after_complete = len(fake.requests)
        again = subprocess.run(
            sweep_cmd(url, tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=600
        )
        assert again.returncode == 0 and "0 made now" in again.stdout

    print("stored after each kill:", progress, "requests:", len(fake.requests))
    assert progress == sorted(progress) and any(0 < n < PLANNED for n in progress), (
        f"kills landed at {progress}"
    )
    assert len(rows) == PLANNED and len({r[:4] for r in rows}) == len(rows)
    assert all(r[4] == 0.42 and r[5] is None for r in rows)
    distinct = {canonical(body) for body in fake.requests}
    assert len(distinct) == PLANNED, _near_twins(distinct)
    # only a call in flight at a kill (its answer never stored) may be sent again
    assert len(fake.requests) - len(distinct) <= KILLS * CONCURRENCY
    assert len(fake.requests) == requests_after_complete, "a completed run repeated a model call"
