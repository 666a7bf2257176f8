"""What a `command:`/`http:` bot is given and what it hands back (issue 36, items 1, 2, 9, 14):
an allow-listed environment plus `pass_env=`; everything it hands back scrubbed as model
endpoints' text is; spec fields that can carry a URL or a command checked for credentials;
a bot's leftover children never turn an answer into a timeout nor keep the sweep waiting; a
terminated sweep terminates its bots and says so."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from hindcast import adapters
from hindcast.errors import ConfigError, InfrastructureError
from hindcast.forecasters import registry
from hindcast.forecasters.bot_env import ALLOWED
from hindcast.runs import retrievals_form
from tests.adapters.support import FRACTION, build_archive, sample_market, sample_t0
from tests.forecasters.command_bots import write_bot
from tests.helpers import ROOT, SAMPLE_MARKETS, run_cli

pytest.importorskip("mcp")

SECRET = "planted-9f8e7d6c5b4a"
PLANTED = {
    "HINDCAST_DB": f"postgresql://runs:{SECRET}-db@127.0.0.1:5432/runs",
    "DATABASE_URL": f"postgresql://u:{SECRET}-url@h/db",
    "MY_AUTH": f"{SECRET}-auth",
    "OPENAI_API_KEY": f"sk-{SECRET}-openai",
}
TOOLS = {"HINDCAST_MCP_URL", "HINDCAST_MCP_COMMAND"}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    folder = tmp_path_factory.mktemp("isolation")
    t0 = sample_t0()
    return SimpleNamespace(
        market=sample_market(),
        bot=write_bot(folder),
        archive=build_archive(folder / "base", t0),
    )


def ask(world, spec: str):
    bound = adapters.bind(SAMPLE_MARKETS, world.market, fraction=FRACTION, archive=world.archive)
    forecaster = registry.create(spec)
    return asyncio.run(forecaster.forecast(bound.question, bound.ctx)), bound


def stored(forecast, bound) -> str:
    """Everything of one forecast that the run database keeps."""
    return repr(forecast) + json.dumps(retrievals_form(bound.ctx.retrievals))


def test_a_bot_gets_an_allow_listed_environment_and_what_it_is_passed(world, tmp_path, monkeypatch):
    for name, value in {**PLANTED, "MY_SETTING": "handed-on-purpose"}.items():
        monkeypatch.setenv(name, value)
    seen = tmp_path / "env.json"
    forecast, bound = ask(world, f"command:cmd={world.bot} env {seen},pass_env=MY_SETTING")
    given = json.loads(seen.read_text())
    assert set(given) - TOOLS - {"MY_SETTING"} <= set(ALLOWED) | {
        k for k in given if k.startswith("LC_")
    }, sorted(given)
    assert given["MY_SETTING"] == "handed-on-purpose" and given["PATH"] == os.environ["PATH"]
    assert forecast.probability == 0.5
    assert SECRET not in stored(forecast, bound)


def test_everything_a_bot_hands_back_is_scrubbed(world, monkeypatch):
    """A value handed through pass_env comes back in the answer, stderr, usage and the arguments
    of its tool calls (one refused): none of it is stored; the refused call is logged."""
    monkeypatch.setenv("MY_BOT_API_KEY", f"{SECRET}-passed")
    forecast, bound = ask(
        world, f"command:cmd={world.bot} echo-secret,timeout=60,pass_env=MY_BOT_API_KEY"
    )
    assert forecast.probability == 0.5 and forecast.rationale == "rationale ***"
    assert SECRET not in stored(forecast, bound), stored(forecast, bound)
    ops = [(e["op"], e.get("tool")) for e in retrievals_form(bound.ctx.retrievals)]
    assert ops == [("search", None), ("read", None), ("refused", "search")], ops
    refused = retrievals_form(bound.ctx.retrievals)[-1]
    assert refused["arguments"] == {"query": "***", "k": True}
    assert "valid integer" in refused["reason"], refused


@pytest.mark.parametrize(
    "spec",
    [
        f"http:url=http://127.0.0.1:9/forecast?api_key={SECRET}",
        f"http:url=http://127.0.0.1:9/forecast?x=1&token={SECRET}",
        f"http:url=http://127.0.0.1:9/forecast,key_env=sk-{SECRET}",
        f"command:cmd=./bot --api-key sk-{SECRET}",
        f"command:cmd=./bot --token={SECRET}",
        f"command:cmd=env OPENAI_API_KEY=sk-{SECRET} ./bot",
        f"command:cmd=./bot --endpoint https://h/v1?access_token={SECRET}",
        f"command:cmd=./bot,pass_env=MY_KEY+sk-{SECRET}",
        f"zero-shot:model=openai-compatible:http://127.0.0.1:9/v1?api_key={SECRET}#m",
        f"constant:p=0.5,api_key={SECRET}",  # a parameter named like a key (a plugin's)
    ],
)
def test_a_credential_in_any_spec_field_is_refused_without_echo(spec):
    with pytest.raises(ConfigError) as caught:
        registry.create(spec)
    assert SECRET not in str(caught.value) and "key_env" in str(caught.value)


@pytest.mark.parametrize(
    "spec",
    [
        "command:cmd=./bot --api-key $MY_KEY --max-tokens 500,pass_env=MY_KEY+BOT_LOG",
        "http:url=http://127.0.0.1:9/forecast?limit=5,key_env=MY_KEY",
    ],
)
def test_a_spec_without_a_credential_is_accepted(spec):
    registry.create(spec)


def test_a_refused_spec_on_the_command_line_is_one_line_and_writes_nothing(tmp_path):
    db = tmp_path / "h.db"
    spec = f"command:cmd=./bot --api-key sk-{SECRET},timeout=5"
    done = run_cli("sweep", "-f", spec, "--limit", "1", "--out", str(tmp_path), "--db", str(db))
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1, done.stderr
    assert SECRET not in done.stdout + done.stderr and "refused" in done.stderr
    assert list(tmp_path.iterdir()) == []


def gone(pid: int) -> bool:
    """Whether a process no longer runs (gone, or a zombie waiting for its reaper)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def wait_gone(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while not gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return gone(pid)


def test_an_answer_is_kept_when_a_child_of_the_bot_holds_its_stdout(world, tmp_path):
    child = tmp_path / "child.pid"
    started = time.monotonic()
    forecast, _ = ask(world, f"command:cmd={world.bot} orphan {child},timeout=20")
    assert forecast.probability == 0.7, forecast  # not a timeout after 20 s
    assert time.monotonic() - started < 15
    assert wait_gone(int(child.read_text()))  # the leftover child was killed


def test_a_grandchild_in_its_own_session_does_not_keep_the_sweep_waiting(world, tmp_path):
    grandchild = tmp_path / "grandchild.pid"
    started = time.monotonic()
    with pytest.raises(InfrastructureError, match="timeout of 2 s"):
        ask(world, f"command:cmd={world.bot} setsid {grandchild},timeout=2")
    assert time.monotonic() - started < 15  # it sleeps 60 s holding stdout
    assert wait_gone(int(grandchild.read_text()))


def test_a_terminated_sweep_terminates_its_bots_and_says_so(tmp_path):
    bot, pid = write_bot(tmp_path), tmp_path / "bot.pid"
    command = [sys.executable, "-m", "hindcast", "sweep", "--limit", "1", "--fractions", "0.5"]
    command += ["-f", f"command:cmd={bot} pid {pid},timeout=120", "--out", str(tmp_path)]
    command += ["--db", str(tmp_path / "h.db")]
    sweep = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not (pid.exists() and pid.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        sweep.send_signal(signal.SIGTERM)
        _, err = sweep.communicate(timeout=30)
    finally:
        sweep.kill()
    assert sweep.returncode != 0 and "SIGTERM" in err.decode(), err
    assert wait_gone(int(pid.read_text()))
