"""The `command:` forecaster (issue 27, item 2), one (market, t0) at a time with real programs:
each kind of answer lands in the right kind of failure; the program gets the question as at t0
on stdin (no outcome) and the t0-bound tools over MCP (HTTP URL and stdio relay), whose calls
become the forecast's retrievals; post-t0 data changes neither its stdin nor its tool answers."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from datetime import timedelta
from types import SimpleNamespace

import pytest

from hindcast import adapters
from hindcast.errors import InfrastructureError
from hindcast.forecasters import registry
from hindcast.forecasters.command import stdin_payload
from hindcast.markets.bundle import DescriptionVersion
from hindcast.replay.plan import question_at
from hindcast.runs import retrievals_form
from tests.adapters.support import (
    FRACTION,
    build_archive,
    sample_market,
    sample_t0,
    with_post_t0_market_data,
)
from tests.forecasters.command_bots import PASSED, write_bot
from tests.helpers import SAMPLE_MARKETS

pytest.importorskip("mcp")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    folder = tmp_path_factory.mktemp("command")
    t0 = sample_t0()
    return SimpleNamespace(
        market=sample_market(),
        t0=t0,
        bot=write_bot(folder),
        folder=folder,
        archive=build_archive(folder / "base", t0),
        later=build_archive(folder / "later", t0, extra=True),
    )


def bind(world, archive=None):
    return adapters.bind(
        SAMPLE_MARKETS, world.market, fraction=FRACTION, archive=archive or world.archive
    )


def ask(world, mode: str, timeout: float = 60, bound=None):
    bound = bound or bind(world)
    forecaster = registry.create(f"command:cmd={world.bot} {mode},timeout={timeout:g},{PASSED}")
    return asyncio.run(forecaster.forecast(bound.question, bound.ctx)), bound


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("exit1", "program exited 1; stderr: my model said no"),
        ("garbage", "stdout is not one JSON object"),
        ("outside 1.5", "probability 1.5 is outside [0, 1]"),
    ],
)
def test_an_answer_with_no_valid_probability_is_a_forecast_failure(world, mode, reason):
    forecast, _ = ask(world, mode)
    assert forecast.probability is None and forecast.error.startswith(reason), forecast.error


@pytest.mark.parametrize(
    ("mode", "timeout", "reason"),
    [
        ("sleep 30", 1, "no answer within its timeout of 1 s (killed)"),
        ("sigkill", 60, "killed by signal SIGKILL"),
        ("tempfail", 60, "exited 75 (EX_TEMPFAIL: try again later)"),
    ],
)
def test_a_program_that_times_out_is_killed_or_asks_again_is_an_outage(
    world, mode, timeout, reason
):
    with pytest.raises(
        InfrastructureError, match=reason.replace("(", r"\(").replace(")", r"\)")
    ) as caught:
        ask(world, mode, timeout)
    assert caught.value.endpoint.startswith("command:")


def test_a_program_that_cannot_start_is_an_outage(world, tmp_path):
    bound = bind(world)
    for cmd in (str(tmp_path / "no-such-bot"), str(tmp_path)):  # missing; a folder (not executable)
        with pytest.raises(InfrastructureError, match="cannot start"):
            asyncio.run(registry.create(f"command:cmd={cmd}").forecast(bound.question, bound.ctx))


def test_a_valid_answer_with_reported_tokens(world):
    forecast, _ = ask(world, "tokens")
    assert forecast.probability == 0.6 and forecast.error is None
    assert (
        forecast.usage["fresh_prompt_tokens"] == 1000
        and forecast.usage["model_name"] == "bot-model"
    )
    assert forecast.usage["endpoint"].startswith("command:") and forecast.usage["requests"] == 1


def test_stdin_is_the_question_at_t0_and_nothing_else(world, tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_LOG", str(tmp_path / "stdin.jsonl"))
    forecast, bound = ask(world, "answer 0.25")
    assert forecast.probability == 0.25
    (line,) = (tmp_path / "stdin.jsonl").read_text().splitlines()
    assert json.loads(line) == dict(adapters.question_view(bound.question))
    assert line.encode() + b"\n" == stdin_payload(bound.question)
    assert not {"outcome", "status", "resolved_at", "resolution"} & set(json.loads(line))


@pytest.mark.parametrize("mode", ["tools", "stdio-tools"])
def test_the_programs_tool_calls_are_its_retrievals(world, mode):
    forecast, bound = ask(world, mode)
    answers = {name: (error, content) for name, error, content in json.loads(forecast.rationale)}
    assert answers["question"] == (False, dict(adapters.question_view(bound.question)))
    assert {h["id"] for h in answers["search"][1]["hits"]} <= {"pre-1", "pre-2", "pre-3"}
    assert answers["read"] == (
        False,
        {"document": None},
    )  # the last read asked for the at-t0 document
    assert all(not error for error, _ in answers.values())
    ops = [e["op"] for e in retrievals_form(bound.ctx.retrievals)]
    assert ops == [
        "question",  # the question tool is a call like any other (issue 36, item 14)
        "price_history",
        "resolved_before",
        "search",
        "read",
        "read",
        "thread",
    ]  # t0/until: dropped
    assert forecast.evidence == ("pre-1",)


def test_post_t0_data_changes_neither_stdin_nor_tool_answers(world, tmp_path, monkeypatch):
    """Property: documents after t0 in the archive, prices and resolutions at/after t0 and a
    description edited after t0 added to the market data: the same stdin, the same tool answers."""
    monkeypatch.setenv("BOT_LOG", str(tmp_path / "stdin.jsonl"))
    base, _ = ask(world, "tools")
    later = with_post_t0_market_data(bind(world, world.later))
    bundle = later.plan.bundle
    edited = {
        **bundle.descriptions,
        world.market: (
            DescriptionVersion(later.question.description),
            DescriptionVersion("EDITED after t0: resolved YES", world.t0 + timedelta(hours=1)),
        ),
    }
    question = question_at(replace(bundle, descriptions=edited), later.cutoff)
    assert question == later.question
    moved, _ = ask(world, "tools", bound=replace(later, question=question))
    assert moved.rationale == base.rationale
    first, second = (tmp_path / "stdin.jsonl").read_text().splitlines()
    assert first == second


def test_a_document_the_harness_refuses_stops_the_sweep_not_just_the_program(world):
    """Defence in depth: a retriever that hands over a document created at t0 is stopped by the
    Context; the program sees a tool error, and the forecast raises LeakageError (a harness
    defect stops the sweep) instead of being stored."""
    from hindcast.errors import LeakageError
    from hindcast.forecasters.base import Context
    from tests.forecasters.test_context_documents import LeakyRetriever

    bound = bind(world)
    ctx = Context(world.t0, world.market, (), (), LeakyRetriever(world.t0, world.t0))
    forecaster = registry.create(f"command:cmd={world.bot} tools,timeout=60")
    with pytest.raises(LeakageError, match="refused a tool answer"):
        asyncio.run(forecaster.forecast(bound.question, ctx))


def test_a_key_the_program_echoes_is_not_stored(world, monkeypatch):
    key = "sk-bot-secret-5f4e3d2c1b"
    monkeypatch.setenv("MY_BOT_API_KEY", key)
    forecast, _ = ask(world, "leaky-key")
    assert (
        forecast.error == "program exited 1; stderr: using key ***" and forecast.raw == "key ***\n"
    )
    assert key not in repr(forecast)

    with pytest.raises(InfrastructureError) as caught:
        ask(world, "tempfail")
    assert str(caught.value).endswith("stderr: upstream model unreachable with key ***")
