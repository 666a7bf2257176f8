"""`inspect-agent:` forecasters in a real sweep: Inspect agents (the default `react` one and a
user's own factory) run through `inspect_ai.agent.run` with the t0-bound tools, their model calls
through the sweep's Models (hindcast's fake chat model served on 127.0.0.1). Expected numbers come
from the fake's answers and the market store, not from the code under test."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from hindcast import api, replay
from hindcast.errors import StoppedError
from hindcast.llm.cache import ResponseCache
from hindcast.llm.models import Models
from hindcast.markets.store import open_version
from hindcast.replay.plan import prepare, question_at
from hindcast.replay.spec import ReplaySpec
from hindcast.runs.store import RunStore
from tests.adapters.inspect_support import fake_model, probability_of, small_archive
from tests.helpers import SAMPLE_MARKETS

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("inspect_ai") is None, reason="needs the inspect extra"
)
NOW = datetime(2026, 12, 1, tzinfo=UTC)
AGENT = """
from inspect_ai.agent import AgentState, agent
from inspect_ai.model import execute_tools, get_model


@agent
def tool_loop(tools):
    async def execute(state: AgentState) -> AgentState:
        while True:
            output = await get_model().generate(state.messages, tools)
            state.messages.append(output.message)
            state.output = output
            if not output.message.tool_calls:
                return state
            result = await execute_tools(state.messages, tools)
            state.messages.extend(result.messages)

    return execute


def forecaster(tools):
    return tool_loop(tools)
"""


def sweep(spec, db) -> str:
    """The sweep; it stops (exit 4 on the command line) because an outage left forecasts unmade."""
    models = Models(cache=ResponseCache(str(db.parent / "responses.db")))
    try:
        with pytest.raises(StoppedError, match="could not be reached"):
            api.sweep(
                spec,
                runs=RunStore(f"sqlite:///{db}"),
                out=db.parent / "out",
                now=NOW,
                models=models,
            )
    finally:
        models.close()
    return prepare(spec).run_id


def test_inspect_agents_in_a_sweep_score_like_their_answers(
    tmp_path, tmp_path_factory, monkeypatch
):
    archive = small_archive(tmp_path_factory.mktemp("agent-archive"))
    (tmp_path / "my_agents.py").write_text(AGENT)
    monkeypatch.syspath_prepend(str(tmp_path))
    plan = prepare(
        ReplaySpec(store=SAMPLE_MARKETS, limit=6, fractions=(0.5,), forecasters=("market",))
    )
    questions = {c.market_id: question_at(plan.bundle, c) for c in plan.cutoffs}
    garbage, outage = plan.cutoffs[1].market_id, plan.cutoffs[2].market_id
    fake = fake_model(garbage={questions[garbage].question}, outage={questions[outage].question})
    db = tmp_path / "runs" / "hindcast.db"
    db.parent.mkdir()
    with fake.serve() as url:
        model = f"model=openai-compatible:{url}#fake"
        names = (f"inspect-agent:{model}", f"inspect-agent:agent=my_agents:forecaster,{model}")
        spec = ReplaySpec(
            store=SAMPLE_MARKETS,
            limit=6,
            fractions=(0.5,),
            forecasters=("market", *names),
            archive=archive.archive,
            snapshot=archive.id,
            concurrency=2,
        )
        run_id = sweep(spec, db)
        asked = len(fake.requests)
        sweep(spec, db)  # a re-run asks the outages again, nothing else
        second = fake.requests[asked:]
    assert len(second) == 2 and all(questions[outage].question in json.dumps(b) for b in second)

    outcomes = {r.market_id: r.outcome for r in open_version(SAMPLE_MARKETS).bundle.resolutions}
    from hindcast.forecasters.inspect_agent import question_messages

    expected = {
        m: (probability_of(question_messages(q)[1]["content"]) - outcomes[m]) ** 2
        for m, q in questions.items()
        if m not in (garbage, outage)
    }
    scored = replay.load_scored(RunStore(f"sqlite:///{db}"), run_id)
    rows, board_rows = scored.rows, replay.leaderboard_of(scored)
    for name in names:
        mine = {r.market_id: r for r in rows if r.forecaster == name}
        assert set(mine) == set(questions) - {outage}  # an outage is not a forecast
        assert mine[garbage].probability is None and "invalid answer" in mine[garbage].error
        assert {m: mine[m].brier for m in expected} == pytest.approx(expected, abs=1e-12)
        (board,) = [b for b in board_rows if b.forecaster == name and b.slice == "all"]
        assert (board.n_forecasts, board.n_failed) == (4, 1)
        assert board.brier == pytest.approx(sum(expected.values()) / 4, abs=1e-12)
    with sqlite3.connect(db) as con:
        stored = con.execute(
            "SELECT forecaster, retrievals_json, usage_json FROM forecasts "
            "WHERE forecaster LIKE 'inspect-agent:%' AND probability IS NOT NULL"
        ).fetchall()
        attempts = con.execute("SELECT forecaster, market_id, kind FROM attempts").fetchall()
    assert sorted(attempts) == sorted(
        [(n, outage, "infrastructure") for n in names] * 2
    )  # asked twice, two runs
    for _, retrievals, usage in stored:
        assert [r["op"] for r in json.loads(retrievals)] == [
            "search",
            "read",
            "thread",
            "price_history",
            "resolved_before",
            "question",  # logged like any other call (issue 36, item 14)
        ]
        assert (
            json.loads(usage)["requests"] + json.loads(usage)["cache_hits"] == 7
        )  # six tool turns, one answer


def test_without_the_extra_the_commands_name_it(tmp_path):
    """inspect_ai made unimportable: `import-inspect` and an `inspect-agent:`
    sweep stop with one line."""
    block = (
        "import sys; sys.modules['inspect_ai'] = None; from hindcast.cli.main import run; "
        "sys.argv = ['hindcast'] + sys.argv[1:]; run()"
    )
    for args in (
        ["import-inspect", str(tmp_path / "x.eval"), "--db", str(tmp_path / "r.db")],
        [
            "sweep",
            "-f",
            "inspect-agent:model=local",
            "--limit",
            "1",
            "--out",
            str(tmp_path / "runs"),
        ],
    ):
        done = subprocess.run(
            [sys.executable, "-c", block, *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 1, done.stderr
        assert (
            "pip install 'hindcast-replay[inspect]'" in done.stderr and done.stderr.count("\n") == 1
        )
    assert not (tmp_path / "r.db").exists()
