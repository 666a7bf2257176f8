"""Run integrity through the library: a sweep from a running event loop with keys from the
environment, --retry-failed keeping old attempts, outages never stored, the circuit breaker
leaving other forecasters alone, and a forecaster with no valid forecast failing the command."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass

import pytest

from hindcast import api
from hindcast.errors import InfrastructureError, StoppedError
from hindcast.forecasters import registry
from hindcast.llm.fake import FakeChatModel, answer
from hindcast.llm.models import Models
from hindcast.records import Forecast
from hindcast.replay.spec import ReplaySpec
from hindcast.runs.store import RunStore
from tests.helpers import SAMPLE_MARKETS, at, run_cli

NOW = at("2026-11-30T00:00:00")


@dataclass
class Moody:
    """Fails every market on its first try, answers on the next (a user forecaster)."""

    name: str = "moody"
    calls: int = 0

    async def forecast(self, question, ctx):
        Moody.calls += 1
        return (
            Forecast.failure("no answer yet") if Moody.calls <= 4 else Forecast(0.6, rationale="ok")
        )


@dataclass
class Down:
    """A user forecaster whose service is down: an outage, not an answer."""

    name: str = "down"

    async def forecast(self, question, ctx):
        raise InfrastructureError("service unavailable", "https://down.example/v1")


registry.register("moody", Moody)
registry.register("down", Down)


def store_at(tmp_path) -> RunStore:
    return RunStore(f"sqlite:///{tmp_path / 'h.db'}")


def rows(tmp_path, sql: str) -> list[tuple]:
    with sqlite3.connect(tmp_path / "h.db") as db:
        return db.execute(sql).fetchall()


def test_a_sweep_inside_a_running_event_loop_with_keys_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOP_KEY", "sk-from-environment")
    fake = FakeChatModel(default=answer('{"probability": 0.2}'), require_key="sk-from-environment")

    async def notebook_cell(url):  # what a Jupyter cell does: await, inside the kernel's loop
        spec = ReplaySpec(
            store=SAMPLE_MARKETS,
            limit=2,
            fractions=(0.5,),
            forecasters=(f"zero-shot:model=openai-compatible:{url}#m,key_env=LOOP_KEY",),
        )
        return await api.sweep_async(spec, runs=store_at(tmp_path), out=tmp_path, now=NOW)

    with fake.serve() as url:
        result = asyncio.run(notebook_cell(url))
    assert result.executed == 2 and [r.n_forecasts for r in result.board] == [2]
    assert (tmp_path / "responses.db").is_file()  # the default cache sits beside the run database
    assert all(h["authorization"] == "Bearer sk-from-environment" for h in fake.headers)


def test_retry_failed_asks_again_keeps_the_old_attempt_and_scores_the_newest(tmp_path):
    Moody.calls = 0
    spec = ReplaySpec(store=SAMPLE_MARKETS, limit=4, fractions=(0.5,), forecasters=("moody",))
    first = api.sweep(spec, runs=store_at(tmp_path), out=tmp_path, now=NOW)
    assert first.board[0].n_failed == 4 and first.empty == ("moody",)
    again = api.sweep(spec, runs=store_at(tmp_path), out=tmp_path, now=NOW)
    assert again.executed == 0  # without --retry-failed a stored failure is final
    retried = api.sweep(
        ReplaySpec(**{**spec.__dict__, "retry_failed": True}),
        runs=store_at(tmp_path),
        out=tmp_path,
        now=NOW,
    )
    assert retried.run_id == first.run_id and retried.executed == 4 and retried.empty == ()
    assert retried.board[0].n_forecasts == 4 and retried.board[0].n_failed == 0
    assert (
        sorted(rows(tmp_path, "SELECT attempt, probability IS NULL FROM forecasts"))
        == [(0, 1)] * 4 + [(1, 0)] * 4
    )
    store = store_at(tmp_path)
    assert (
        len(store.forecasts(first.run_id)) == 4
        and len(store.forecasts(first.run_id, all_attempts=True)) == 8
    )
    assert (
        api.sweep(
            ReplaySpec(**{**spec.__dict__, "retry_failed": True}),
            runs=store,
            out=tmp_path,
            now=NOW,
        ).executed
        == 0
    )


def test_a_retried_chat_failure_is_asked_anew_not_replayed_from_the_cache(tmp_path):
    answers = iter(["no idea", "still no idea", '{"probability": 0.45}'])
    fake = FakeChatModel(default=lambda body: next(answers))
    with fake.serve() as url:
        spec = ReplaySpec(
            store=SAMPLE_MARKETS,
            limit=1,
            fractions=(0.5,),
            forecasters=(f"zero-shot:model=openai-compatible:{url}#m,repairs=0",),
        )
        models = Models()
        first = api.sweep(spec, runs=store_at(tmp_path), out=tmp_path, now=NOW, models=models)
        retry = ReplaySpec(**{**spec.__dict__, "retry_failed": True})
        second = api.sweep(retry, runs=store_at(tmp_path), out=tmp_path, now=NOW, models=models)
        third = api.sweep(retry, runs=store_at(tmp_path), out=tmp_path, now=NOW, models=models)
    assert (first.empty, second.empty, third.empty) == (
        ("zero-shot:model=openai-compatible:" + url + "#m,repairs=0",),
    ) * 2 + ((),)
    assert len(fake.requests) == 3 and [r.n_forecasts for r in third.board] == [1]
    assert rows(tmp_path, "SELECT attempt, probability FROM forecasts ORDER BY attempt") == [
        (0, None),
        (1, None),
        (2, 0.45),
    ]


def test_an_outage_is_an_attempt_never_a_forecast_and_other_forecasters_go_on(tmp_path):
    spec = ReplaySpec(
        store=SAMPLE_MARKETS,
        limit=6,
        fractions=(0.5,),
        forecasters=("down", "constant"),
        breaker_threshold=2,
        concurrency=1,
    )
    with pytest.raises(
        StoppedError, match=r"circuit breaker open .*https://down.example/v1: service unavailable"
    ):
        api.sweep(spec, runs=store_at(tmp_path), out=tmp_path, now=NOW)
    assert rows(tmp_path, "SELECT forecaster, COUNT(*) FROM forecasts GROUP BY forecaster") == [
        ("constant", 6)
    ]
    assert rows(tmp_path, "SELECT forecaster, kind, COUNT(*) FROM attempts GROUP BY 1, 2") == [
        ("down", "infrastructure", 2)
    ]  # then no more calls to that endpoint
    assert any(
        p.name == "leaderboard.csv" for p in tmp_path.rglob("*.csv")
    )  # what was answered is exported


def test_the_breaker_counts_consecutive_outages_per_endpoint(tmp_path):
    from hindcast.llm.client import Breakers

    b = Breakers(2)
    b.failure("a", "x")
    b.success("a")
    b.failure("a", "y")
    b.failure("b", "z")
    assert b.opened() == {}
    b.failure("a", "w")
    assert b.opened() == {"a": "w"}


def test_a_forecaster_without_any_valid_forecast_fails_the_command_but_is_stored(tmp_path):
    fake = FakeChatModel(default=answer("I would rather not say."))  # never a probability
    with fake.serve() as url:
        proc = run_cli(
            "sweep",
            "--store",
            str(SAMPLE_MARKETS),
            "--limit",
            "2",
            "--fractions",
            "0.5",
            "-f",
            "constant",
            "-f",
            f"zero-shot:model=openai-compatible:{url}#m,repairs=0",
            "--out",
            str(tmp_path),
            "--db",
            str(tmp_path / "hindcast.db"),
        )
    assert proc.returncode == 1, proc.stderr
    assert "no valid forecast at all from zero-shot:model=openai-compatible" in proc.stderr
    assert "constant" not in proc.stderr and "leaderboard.csv" in proc.stdout.replace("\n", "")
    with sqlite3.connect(tmp_path / "hindcast.db") as db:
        assert db.execute(
            "SELECT forecaster, COUNT(*) FROM forecasts WHERE error IS NOT NULL GROUP BY 1"
        ).fetchall() == [(f"zero-shot:model=openai-compatible:{url}#m,repairs=0", 2)]


def test_two_models_values_do_not_share_keys_or_clients():
    one, two = Models({"K": "1"}), Models({"K": "2"})
    spec = "openai-compatible:http://127.0.0.1:9/v1#m"
    assert one.client(spec, "K") is not two.client(spec, "K")
