"""Two identical sweeps of one run started together pay for each forecast once.

Real `hindcast sweep` processes against the shipped fake OpenAI-compatible server on
127.0.0.1 (requests counted at the transport), one run database (a SQLite file, and a database
on a real PostgreSQL server, tests/conftest.py): the claims in it
(`RunStore.claim`) let exactly one process ask each (forecaster, market, t0, repeat); each
process reports what it made itself, and both end with the whole run stored.
"""

from __future__ import annotations

import re
import subprocess
import threading
from datetime import datetime, timezone

from sqlalchemy import create_engine, text

from hindcast.llm.cache import canonical
from hindcast.llm.fake import FakeChatModel, answer
from hindcast.runs.store import DONE, HELD, TAKEN, RunStore
from tests.helpers import ROOT
from tests.replay.test_kill_resume import sweep_cmd

MARKETS = 20
PLANNED = MARKETS * 4


def test_two_sweeps_of_one_run_started_together_send_each_request_once(tmp_path, db_url):
    fake = FakeChatModel(default=answer('{"probability": 0.42}', delay=0.1))
    with fake.serve() as url:
        procs = [
            subprocess.Popen(
                [*sweep_cmd(url, tmp_path)[:-1], db_url],  # --db: this backend's database
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        outputs = [proc.communicate(timeout=600) for proc in procs]
    for proc, (out, err) in zip(procs, outputs):
        assert proc.returncode == 0, err
    made = [int(re.search(r"(\d+) made now", out).group(1)) for out, _ in outputs]
    print("made by each:", made, "requests:", len(fake.requests))
    assert sum(made) == PLANNED and all(m > 0 for m in made), (
        made
    )  # both worked, neither paid twice
    assert len(fake.requests) == len({canonical(body) for body in fake.requests}) == PLANNED
    for (out, _), mine, theirs in zip(outputs, made, made[::-1]):
        # what the other made is reported as made by a concurrent sweep, or as already stored
        # when it was stored before this one planned (a process can start seconds later)
        counts = re.search(
            r"(\d+) made now, (\d+) by a concurrent sweep, (\d+) already stored", out
        )
        assert counts, out
        now, concurrent, already = map(int, counts.groups())
        assert now == mine and concurrent + already == theirs, out
    engine = create_engine(db_url)
    with engine.connect() as db:
        rows = db.execute(text("SELECT forecaster, market_id, t0, repeat FROM forecasts")).all()
        claims = db.execute(text("SELECT COUNT(*) FROM claims")).scalar_one()
    engine.dispose()
    assert len(rows) == len(set(rows)) == PLANNED and claims == 0


KEY = ("f", "m1", "2025-06-01T12:00:00Z", 0)


def test_a_claim_is_taken_by_one_of_many_held_until_it_expires_or_its_owner_is_gone(db_url):
    from hindcast.records import Forecast

    url = db_url  # a SQLite file, and a database on a real PostgreSQL server (tests/conftest.py)
    store = RunStore(url)
    store.ensure_run("r", {}, {}, datetime(2026, 1, 1, tzinfo=timezone.utc))
    stores = [RunStore(url) for _ in range(6)]  # separate connections, one per thread
    results: dict[int, str] = {}
    barrier = threading.Barrier(len(stores))

    def race(i: int) -> None:
        barrier.wait()
        results[i] = stores[i].claim("r", KEY, 0, f"owner{i}", 100.0, 60.0)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results.values()) == [HELD] * 5 + [TAKEN]
    winner = f"owner{next(i for i, r in results.items() if r == TAKEN)}"
    assert store.claim("r", KEY, 0, "late", 159.0, 60.0) == HELD  # not expired yet
    assert (
        store.claim("r", KEY, 0, "late", 159.0, 60.0, gone=lambda owner: owner == winner) == TAKEN
    )
    store.renew("r", "late", 500.0)
    assert store.claim("r", KEY, 0, "third", 400.0, 60.0) == HELD  # renewed: still held
    assert store.claim("r", KEY, 0, "third", 501.0, 60.0) == TAKEN  # expired: taken over
    store.add(
        "r",
        "f",
        "m1",
        datetime(2025, 6, 1, 12, tzinfo=timezone.utc),
        "f=0.5",
        Forecast(0.3),
        (),
        0,
        0,
    )
    store.release("r", KEY, 0, "third")
    assert store.claim("r", KEY, 0, "fourth", 600.0, 60.0) == DONE  # stored: nothing to ask
    assert store.claim("r", KEY, 1, "fourth", 600.0, 60.0) == TAKEN  # a retry is another attempt
    for s in stores + [store]:
        s.close()
