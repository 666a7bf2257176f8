"""Issue 39: the default run's baselines finish before the first model forecast returns, also
when the model calls hold every shared worker thread — as the local model's start does: each
forecast in flight waits in `asyncio.to_thread(ensure_started)` while the server loads (minutes
on 2 loaded cores; measured: the default run stored nothing for 6 min, then 684 baselines at
once). Here a model forecaster whose calls block a worker thread each until every baseline is
stored (or a timeout), with more in flight than the shared pool has threads: the baselines
must be stored while those threads are all held."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import ClassVar

from hindcast import api
from hindcast.forecasters import ModelForecaster, registry
from hindcast.records import Forecast
from hindcast.replay.spec import ReplaySpec
from hindcast.runs.store import RunStore
from hindcast.timeutil import parse_utc
from tests.helpers import SAMPLE_MARKETS

NOW = parse_utc("2026-03-01T00:00:00Z")
WAIT = 15.0  # seconds a model call waits for the baselines before giving up
UP = threading.Event()  # "the model server is up": set once every baseline is stored
TIMED_OUT: list[str] = []


@dataclass(frozen=True)
class Starting(ModelForecaster):
    """A model forecaster whose every call holds a shared worker thread until the model is up."""

    name: str = "starting-model"
    cheap: ClassVar[bool] = False

    async def forecast(self, question, ctx):
        if not await asyncio.to_thread(UP.wait, WAIT):
            TIMED_OUT.append(question.market_id)
        return Forecast(0.5, rationale="up")


registry.register("starting-model", Starting)


def test_the_baselines_are_stored_while_model_calls_hold_every_shared_thread(tmp_path):
    UP.clear(), TIMED_OUT.clear()
    baselines = 57 * 4 * 3
    stored = [0]

    def advance() -> None:
        stored[0] += 1
        if stored[0] == baselines:
            UP.set()

    spec = ReplaySpec(
        store=SAMPLE_MARKETS,
        forecasters=("market", "constant", "base-rate", "starting-model"),
        concurrency=40,  # more than asyncio's shared pool ever has threads (at most 32)
    )
    store = RunStore(f"sqlite:///{tmp_path}/h.db")
    result = api.sweep(spec, runs=store, out=tmp_path / "out", now=NOW, advance=advance)
    store.close()
    assert result.planned == baselines + 57 * 4
    assert TIMED_OUT == []  # no model call waited out its timeout: the baselines got stored
