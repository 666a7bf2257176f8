"""Cheap forecasts (the baselines) are claimed, computed and stored a batch at a time, beside the
model forecasts, never behind them; a batch is one transaction, so a sweep killed (kill -9, a
real subprocess) in the middle of one loses nothing and duplicates nothing, on SQLite and on
PostgreSQL (a real server, tests/pg.py)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

from sqlalchemy import create_engine, text

from hindcast import api
from hindcast.llm import Models, ResponseCache
from hindcast.llm.fake import FakeChatModel, answer
from hindcast.replay.spec import ReplaySpec
from hindcast.runs.store import RunStore
from hindcast.timeutil import parse_utc
from tests.helpers import ROOT, SAMPLE_MARKETS

NOW = parse_utc("2026-03-01T00:00:00Z")
DELAY = 3.0  # seconds the fake model takes to answer
MARKETS = 30
PLANNED = MARKETS * 4 * 2  # four fractions, two forecasters: one batch (runner.BATCH = 500)

# A cheap forecaster that takes 30 ms a forecast (a sleep in the event loop, as a real cheap
# forecaster's arithmetic would block it): a batch of 240 takes over seven seconds, so a kill
# lands inside it. Registered as a plugin would be, then the real CLI runs.
DRIVER = """
import sys, time
from dataclasses import dataclass
from typing import ClassVar
from hindcast.forecasters import ModelForecaster, registry
from hindcast.records import Forecast

@dataclass(frozen=True)
class Slow(ModelForecaster):
    name: str = "slow-cheap"
    cheap: ClassVar[bool] = True

    async def forecast(self, question, ctx):
        time.sleep(0.03)
        n, yes = ctx.resolved_counts()
        return Forecast((yes + 1.0) / (n + 2.0), rationale=f"{n}")

registry.register("slow-cheap", Slow)
from hindcast.cli import run
sys.argv = ["hindcast", *sys.argv[1:]]
run()
"""


def sweep_cmd(db: str, out) -> list[str]:
    return [
        sys.executable,
        "-c",
        DRIVER,
        "sweep",
        "--store",
        str(SAMPLE_MARKETS),
        "--limit",
        str(MARKETS),
        "-f",
        "slow-cheap",
        "-f",
        "base-rate",
        "--out",
        str(out),
        "--db",
        db,
    ]


def rows(db: str, table: str, columns: str) -> list[tuple]:
    engine = create_engine(db)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text(f"SELECT {columns} FROM {table}"))]
    except Exception:  # the database or table is being created this instant
        return []
    finally:
        engine.dispose()


STORED = "forecaster, market_id, t0, repeat, attempt, probability, error, rationale, evidence_json"


def _until(found, timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end and not found():
        time.sleep(0.02)


def test_a_kill_9_in_the_middle_of_a_batch_loses_nothing_and_duplicates_nothing(
    new_db_url, tmp_path
):
    reference, killed = new_db_url(), new_db_url()
    done = subprocess.run(
        sweep_cmd(reference, tmp_path / "ref"), cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    expected = sorted(rows(reference, "forecasts", STORED))
    assert len(expected) == PLANNED

    proc = subprocess.Popen(
        sweep_cmd(killed, tmp_path / "out"),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ},
    )
    _until(lambda: rows(killed, "claims", "owner"))  # the batch is claimed: being computed
    time.sleep(random.Random(3).uniform(0.2, 1.0))
    claims_at_kill = rows(killed, "claims", "owner")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert len(claims_at_kill) == PLANNED  # every claim of the one batch was held at the kill
    assert rows(killed, "forecasts", STORED) == []  # the batch in flight: nothing of it stored

    again = subprocess.run(
        sweep_cmd(killed, tmp_path / "out"), cwd=ROOT, capture_output=True, text=True
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert sorted(rows(killed, "forecasts", STORED)) == expected  # nothing lost, none twice
    assert rows(killed, "claims", "owner") == []  # the dead owner's claims were taken over


def test_the_baselines_are_stored_before_the_first_model_answer(tmp_path):
    """Baselines and a model forecaster in one sweep: every baseline row is committed before the
    first model row (row ids are in commit order), and progress counted all of them first."""
    fake = FakeChatModel(default=answer('{"probability": 0.42}', delay=DELAY))
    store = RunStore(f"sqlite:///{tmp_path}/h.db")
    advanced: list[float] = []
    with (
        fake.serve() as url,
        Models(cache=ResponseCache(tmp_path / "responses.db"), concurrency=4) as models,
    ):
        zero_shot = f"zero-shot:model=openai-compatible:{url}#fake-model"
        spec = ReplaySpec(
            store=SAMPLE_MARKETS,
            forecasters=("market", "constant", "base-rate", zero_shot),
            subsets=((zero_shot, 1),),
            concurrency=4,
        )
        planned: list[float] = []  # when the plan was known: forecasting starts
        result = api.sweep(
            spec,
            runs=store,
            out=tmp_path / "out",
            now=NOW,
            models=models,
            on_plan=lambda n: planned.append(time.monotonic()),
            advance=lambda: advanced.append(time.monotonic() - planned[0]),
        )
    stored = rows(store.url, "forecasts", "id, forecaster")
    baseline_ids = [i for i, name in stored if name != zero_shot]
    model_ids = [i for i, name in stored if name == zero_shot]
    assert len(model_ids) == 4 and len(baseline_ids) == result.planned - 4 == 57 * 4 * 3
    assert max(baseline_ids) < min(model_ids)
    # progress counted every baseline before the first model answer could have come back
    assert len(advanced) == result.planned and advanced[len(baseline_ids) - 1] < DELAY
