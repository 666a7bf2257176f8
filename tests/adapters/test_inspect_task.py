"""`inspect eval hindcast/replay` offline: a real Inspect AI run (subprocess, from a folder that is
not the checkout, the task found through the entry point pyproject.toml declares) with the
`hindcast/<model>` provider in front of the shipped fake chat model served on 127.0.0.1.

The expected numbers are computed here from what the fake model answered (a hash of the question
message) and from the market store's outcomes and prices, not by the code under test."""

from __future__ import annotations

import importlib.util
import json
import math
import sqlite3

import pytest

from hindcast.markets.prices import price_at
from hindcast.markets.store import open_version
from hindcast.replay.plan import prepare, question_at
from hindcast.replay.spec import ReplaySpec
from hindcast.timeutil import parse_utc
from tests.adapters.inspect_support import (
    fake_model,
    inspect_eval,
    probability_of,
    small_archive,
)
from tests.helpers import SAMPLE_MARKETS, run_cli

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("inspect_ai") is None, reason="needs the inspect extra"
)
OUTCOME_KEYS = {"outcome", "status", "resolution", "resolved_at", "known_at", "resolved"}


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    return small_archive(tmp_path_factory.mktemp("inspect-archive"))


def planned(limit: int = 6):
    plan = prepare(
        ReplaySpec(store=SAMPLE_MARKETS, limit=limit, fractions=(0.5,), forecasters=("market",))
    )
    return plan.cutoffs, {c.market_id: question_at(plan.bundle, c).question for c in plan.cutoffs}


def user_text(sample) -> str:
    return next(m.text for m in sample.input if m.role == "user")


def test_eval_offline_scores_like_hindcast_and_import_reproduces_the_leaderboard(tmp_path, archive):
    from inspect_ai.log import read_eval_log

    cutoffs, questions = planned()
    garbage, outage = cutoffs[1].market_id, cutoffs[2].market_id
    fake = fake_model(garbage={questions[garbage]}, outage={questions[outage]})
    cache = tmp_path / "responses.db"
    with fake.serve() as url:
        args = (
            "-T",
            "limit=6",
            "-T",
            "fractions=0.5",
            "-T",
            f"archive={archive.archive}",
            "-T",
            f"snapshot={archive.id}",
            "-M",
            f"cache={cache}",
            "--no-fail-on-error",
        )
        log_path = inspect_eval(tmp_path, f"hindcast/openai-compatible:{url}#fake", *args)
        asked = len(fake.requests)
        inspect_eval(
            tmp_path, f"hindcast/openai-compatible:{url}#fake", *args
        )  # the same again: from the cache
        again = fake.requests[asked:]
    assert again and all(
        questions[outage] in json.dumps(b) for b in again
    )  # only the outage is asked again

    log = read_eval_log(str(log_path))
    bundle = open_version(SAMPLE_MARKETS).bundle
    outcomes = {r.market_id: r.outcome for r in bundle.resolutions}
    assert log.eval.task == "hindcast/replay" and len(log.samples) == 6
    expected, market = {}, {}
    for sample in log.samples:
        m = sample.metadata["market_id"]
        assert sample.target == "" and not OUTCOME_KEYS & set(
            sample.metadata
        )  # nothing a solver may read
        if m == outage:
            assert sample.error is not None and "401" in sample.error.message and not sample.scores
            continue
        (score,) = sample.scores.values()
        price = price_at(bundle.prices.get(m, ()), parse_utc(sample.metadata["t0"]))
        market[m] = (price.p - outcomes[m]) ** 2
        assert score.value["market_brier"] == pytest.approx(market[m], abs=1e-12)
        if m == garbage:
            assert score.value["failed"] == 1 and math.isnan(score.value["brier"])
            assert "no probability" in score.explanation
            continue
        expected[m] = (probability_of(user_text(sample)) - outcomes[m]) ** 2
        assert score.value["failed"] == 0 and score.value["brier"] == pytest.approx(
            expected[m], abs=1e-12
        )
    metrics = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    assert metrics["forecasts"] == 4 and metrics["failures"] == 1
    assert metrics["brier"] == pytest.approx(sum(expected.values()) / 4, abs=1e-12)
    assert metrics["market_brier"] == pytest.approx(sum(market[m] for m in expected) / 4, abs=1e-12)

    db = tmp_path / "runs.db"
    imported = json.loads(
        run_cli("import-inspect", str(log_path), "--db", str(db), "--json", check=True).stdout
    )
    assert (imported["stored"], imported["failures"], imported["outages"]) == (5, 1, 1)
    again = json.loads(
        run_cli("import-inspect", str(log_path), "--db", str(db), "--json", check=True).stdout
    )
    assert again["run_id"] == imported["run_id"] and again["stored"] == 0  # nothing stored twice
    board = json.loads(
        run_cli(
            "leaderboard",
            imported["run_id"],
            "--db",
            str(db),
            "--out",
            str(tmp_path / "lb"),
            "--json",
            check=True,
        ).stdout
    )
    (row,) = [r for r in board["rows"] if r["slice"] == "all"]
    assert (row["n_forecasts"], row["n_failed"]) == (4, 1)
    assert row["brier"] == pytest.approx(metrics["brier"], abs=1e-12)
    assert row["market_brier"] == pytest.approx(metrics["market_brier"], abs=1e-12)

    with sqlite3.connect(db) as con:
        rows = con.execute(
            "SELECT market_id, probability, error, retrievals_json FROM forecasts"
        ).fetchall()
        attempts = con.execute("SELECT market_id, kind FROM attempts").fetchall()
    assert attempts == [(outage, "infrastructure")]
    for m, p, err, retrievals in rows:
        assert (p is None) == (m == garbage) and (err is not None) == (m == garbage)
        if p is not None:
            assert (p - outcomes[m]) ** 2 == pytest.approx(expected[m], abs=1e-12)
        ops = [r["op"] for r in json.loads(retrievals)]
        assert ops == [
            "search",
            "read",
            "thread",
            "price_history",
            "resolved_before",
            "question",  # logged like any other call (issue 36, item 14)
        ]  # the tool calls, stored


def test_task_runs_from_any_folder_without_an_archive(tmp_path):
    """No -T store: the shipped sample; no archive: search says so, the other tools answer."""
    from inspect_ai.log import read_eval_log

    fake = fake_model()
    with fake.serve() as url:
        log = read_eval_log(
            str(
                inspect_eval(
                    tmp_path,
                    f"hindcast/openai-compatible:{url}#fake",
                    "-T",
                    "limit=2",
                    "-T",
                    "fractions=[0.25, 0.75]",
                    "-M",
                    "cache=none",
                )
            )
        )
    assert log.status == "success" and len(log.samples) == 4
    tool_results = [
        m["content"] for body in fake.requests for m in body["messages"] if m["role"] == "tool"
    ]
    assert any("no archive snapshot" in t for t in tool_results)
    assert {s.metadata["label"] for s in log.samples} == {"f=0.25", "f=0.75"}


def test_import_refuses_what_is_not_a_hindcast_log_and_writes_nothing(tmp_path):
    bad = tmp_path / "not-a-log.eval"
    bad.write_bytes(b"not a zip")
    db = tmp_path / "runs.db"
    for path in (bad, tmp_path / "missing.eval"):
        done = run_cli("import-inspect", str(path), "--db", str(db))
        assert (
            done.returncode == 1 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        )
        assert str(path) in done.stderr
    assert not db.exists()


SOLVER = '''
from inspect_ai.agent import as_solver, react
from inspect_ai.solver import solver


@solver
def react_with_tools():
    """A solver of the user's own: Inspect's react agent over the tools the task gave the sample."""
    async def solve(state, generate):
        return await as_solver(react(tools=state.tools, submit=False))(state, generate)

    return solve
'''


def test_a_solver_of_your_own_gets_the_t0_bound_tools_and_is_named_on_import(tmp_path):
    from inspect_ai.log import read_eval_log

    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "my_solver.py").write_text(SOLVER)
    fake = fake_model()
    with fake.serve() as url:
        log_path = inspect_eval(
            tmp_path,
            f"hindcast/openai-compatible:{url}#fake",
            "-T",
            "limit=2",
            "--solver",
            "my_solver.py@react_with_tools",
            "-M",
            "cache=none",
        )
    log = read_eval_log(str(log_path))
    assert [s.solver for s in log.plan.steps] == ["t0_bound", "react_with_tools"]
    for sample in log.samples:
        (score,) = sample.scores.values()
        assert [r["op"] for r in score.metadata["hindcast"]["retrievals"]] == [
            "price_history",
            "resolved_before",
            "question",  # logged like any other call (issue 36, item 14)
        ]
        assert score.value["failed"] == 0
    db = tmp_path / "runs.db"
    imported = json.loads(
        run_cli("import-inspect", str(log_path), "--db", str(db), "--json", check=True).stdout
    )
    assert (
        imported["forecaster"]
        == f"inspect:model=openai-compatible:{url}#fake,solver=react_with_tools"
    )
    assert imported["stored"] == 2
