"""The replay engine end to end through the library API, on the shipped real sample."""

import sqlite3
from dataclasses import dataclass

import pytest

from hindcast import api, replay
from hindcast.errors import HindcastError
from hindcast.forecasters import registry
from hindcast.records import Forecast
from hindcast.replay.spec import ReplaySpec
from hindcast.runs.store import RunStore
from tests.helpers import SAMPLE_MARKETS, at


@dataclass
class Flaky:
    """A user-registered forecaster that fails on every other market (by id parity)."""

    name: str = "flaky"

    async def forecast(self, question, ctx):
        if int(question.market_id[-1], 16) % 2:
            raise TimeoutError("model did not answer in 30 s")
        return Forecast(0.4, rationale="ok")


@dataclass
class Sloppy:
    name: str = "sloppy"

    async def forecast(self, question, ctx):
        return 0.7  # not a Forecast


registry.register("flaky", Flaky)
registry.register("sloppy", Sloppy)


def run(tmp_path, **fields):
    spec = ReplaySpec(store=SAMPLE_MARKETS, **fields)
    store = RunStore(f"sqlite:///{tmp_path / 'h.db'}")
    return api.sweep(spec, runs=store, out=tmp_path, now=at("2026-11-30T00:00:00")), store


def rows(tmp_path, sql):
    with sqlite3.connect(tmp_path / "h.db") as db:
        return db.execute(sql).fetchall()


def test_failures_are_stored_with_their_reason_and_counted(tmp_path):
    result, _ = run(tmp_path, forecasters=("flaky", "sloppy"), limit=6, fractions=(0.5,))
    board = {r.forecaster: r for r in result.board}
    assert board["flaky"].n_failed + board["flaky"].n_forecasts == 6 and board["flaky"].n_failed > 0
    assert board["sloppy"].n_failed == 6 and board["sloppy"].brier is None
    reasons = {r[0] for r in rows(tmp_path, "SELECT error FROM forecasts WHERE error IS NOT NULL")}
    assert reasons == {
        "TimeoutError: model did not answer in 30 s",
        "forecaster returned float, not a Forecast",
    }


def test_max_failures_stops_then_the_same_sweep_resumes_without_duplicates(tmp_path):
    with pytest.raises(HindcastError, match="re-run the same sweep to resume"):
        run(tmp_path, forecasters=("flaky",), max_failures=0, concurrency=1)
    partial = rows(tmp_path, "SELECT count(*) FROM forecasts")[0][0]
    result, _ = run(tmp_path, forecasters=("flaky",), max_failures=None, concurrency=1)
    assert result.resumed and result.executed == result.planned - partial
    keys = rows(
        tmp_path,
        "SELECT forecaster, market_id, t0, repeat, count(*) FROM forecasts GROUP BY 1,2,3,4",
    )
    assert len(keys) == result.planned and all(k[-1] == 1 for k in keys)


def test_subsets_repeats_offsets_and_the_hindcast_rule(tmp_path):
    result, store = run(
        tmp_path,
        forecasters=("market", "constant"),
        subsets=(("constant", 3),),
        repeats=2,
        fractions=(),
        offsets=("7d",),
        hindcast_rule=True,
        limit=5,
        archive=None,
    )
    labels = {r[0] for r in rows(tmp_path, "SELECT DISTINCT label FROM forecasts")}
    assert labels == {"before=7d", "rule=hindcast"}
    per = dict(
        rows(
            tmp_path,
            "SELECT forecaster, count(DISTINCT market_id) FROM forecasts GROUP BY forecaster",
        )
    )
    assert per == {"market": 5, "constant": 3}
    assert rows(tmp_path, "SELECT max(repeat), count(*) FROM forecasts WHERE forecaster='market'")[
        0
    ] == (1, 5 * 2 * 2)
    assert result.planned == (5 + 3) * 2 * 2


def test_selection_filters(tmp_path):
    result, _ = run(
        tmp_path,
        forecasters=("market",),
        topics=("politics",),
        fractions=(1.0,),
        resolved_after=at("2025-11-01T00:00:00"),
        resolved_before=at("2026-01-01T00:00:00"),
    )
    loaded = replay.load_scored(RunStore(f"sqlite:///{tmp_path / 'h.db'}"), result.run_id)
    assert loaded.rows and {r.topic for r in loaded.rows} == {"politics"}
    with pytest.raises(HindcastError, match="not in store"):
        run(tmp_path, ids=("0xnope",))
