"""`command:` — a forecaster that is any program: started once per (market,
t0), judged like a built-in.

Spec: `command:cmd=./my_bot.sh,timeout=120` (`cmd` is split like a shell would, no shell is run;
`model=openai:gpt-4.1-mini` names the model it reports tokens for, so `--max-cost` can price it;
`pass_env=MY_KEY+MY_SETTING` hands it those variables of the sweep's environment).

The program runs with an environment built from an allow-list (`forecasters.bot_env`: PATH,
HOME, locale …), never the sweep's whole environment; everything it hands back (answer,
stderr, usage, tool arguments) is scrubbed of every value that could be a credential.

The program receives on stdin one JSON object, the question as it stood at t0 (`market_id`,
`question`, `description`, `t0`, `url`, `topic`, `scheduled_close` — never the outcome), and
in its environment the t0-bound tools of that (market, t0) over MCP:
`HINDCAST_MCP_URL` (streamable HTTP on a free loopback port, served by this process) and
`HINDCAST_MCP_COMMAND` (a stdio MCP server command line relaying to it). It answers one JSON
object on stdout: `{"probability": 0.62, "rationale": "…", "usage": {"prompt_tokens": …,
"completion_tokens": …, "model": "…"}}` (`rationale` and `usage` optional; log to stderr).
Every tool call lands in the forecast's retrievals, so `hindcast audit` and the leaderboard
treat it as a built-in agent.

What an answer is worth (the taxonomy):
- an OUTAGE (InfrastructureError: never stored as a forecast, asked again next run): the
  program cannot be started (missing, not executable), runs past `timeout` seconds (its whole
  process group, and any process still holding its output, is killed: `bot_process`), is
  killed by a signal, or exits with 75 (EX_TEMPFAIL, "try again later": the program's own
  model was unreachable);
- a FORECAST FAILURE (stored with its reason, counted): any other non-zero exit (exit 1
  included: the program ran and said it could not answer; asking again would repeat it), or
  exit 0 with stdout that is not one JSON object holding a probability in [0, 1].
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shlex
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hindcast.errors import InfrastructureError, LeakageError
from hindcast.forecasters.base import Context, ModelForecaster
from hindcast.forecasters.bot_env import Scrubber, bot_environment, passed_names, sweep_environment
from hindcast.forecasters.bot_process import run_program
from hindcast.forecasters.tool_server import http_served, mcp_server
from hindcast.forecasters.tools import question_view, t0_tools
from hindcast.llm import check
from hindcast.records import Forecast, Question, Usage

if TYPE_CHECKING:
    from hindcast.llm import Models

TEMPFAIL = 75  # sysexits.h EX_TEMPFAIL: the program asks to be asked again
SHOWN = 2000  # characters of stdout kept as `raw`, of stderr quoted in a reason
URL_VARIABLE, COMMAND_VARIABLE = "HINDCAST_MCP_URL", "HINDCAST_MCP_COMMAND"


def stdin_payload(question: Question) -> bytes:
    """What the program reads on stdin: the question at t0 as one JSON line (no outcome)."""
    return (json.dumps(question_view(question), sort_keys=True) + "\n").encode()


@dataclass(frozen=True)
class CommandForecaster(ModelForecaster):
    """Any program: question JSON on stdin, the t0-bound tools over MCP, one
    JSON answer on stdout."""

    name: str = "command"
    cmd: str = ""
    timeout: float = 120.0
    model: str = ""
    pass_env: str = ""
    environment: Mapping[str, str] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not shlex.split(self.cmd):
            raise ValueError(
                "command: needs cmd=PROGRAM (e.g. command:cmd=./my_bot.sh,timeout=120)"
            )
        if not float(self.timeout) > 0:
            raise ValueError(f"timeout must be above 0 seconds, got {self.timeout!r}")

    def bind(self, models: Models) -> CommandForecaster:
        """In a sweep: the program gets the environment the sweep's Models was given (the CLI's)."""
        return dataclasses.replace(self, environment=dict(models.env))

    def model_name(self) -> str | None:
        return self.model or None

    def provenance(self) -> dict:
        """The command, its timeout, and the content hash of the program file it
        names (when it is one)."""
        argv = shlex.split(self.cmd)
        files = [Path(a) for a in argv if Path(a).is_file()]
        return {
            "class": type(self).__name__,
            "cmd": self.cmd,
            "timeout": float(self.timeout),
            "model": self.model,
            **({"pass_env": list(passed_names(self.pass_env))} if self.pass_env else {}),
            "files": {str(f): hashlib.sha256(f.read_bytes()).hexdigest() for f in files},
        }

    async def forecast(self, question: Question, ctx: Context) -> Forecast:
        leaks: list[Exception] = []
        scrubber = self._scrubber()
        tools = scrubber.tools(t0_tools(question, ctx))
        server = mcp_server(tools, on_leak=leaks.append)
        started = time.monotonic()
        async with http_served(server) as url:
            try:
                code, out, err = await self._run(stdin_payload(question), self._environment(url))
            except InfrastructureError as exc:  # logged as an attempt: no secret in it either
                raise InfrastructureError(scrubber.scrub(str(exc)), exc.endpoint) from None
        if leaks:
            raise LeakageError(f"{self.name}: the harness refused a tool answer: {leaks[0]}")
        ran = {
            "endpoint": f"command:{self.cmd}",
            "requests": 1,
            "latency_s": round(time.monotonic() - started, 3),
        }
        return scrubber.forecast(self._judged(code, out, err, ctx, ran))

    def _environment(self, url: str) -> dict:
        """The allow-listed environment, what `pass_env` names, and where the tools are."""
        relay = shlex.join([sys.executable, "-m", "hindcast.forecasters.mcp_relay", url])
        where = {URL_VARIABLE: url, COMMAND_VARIABLE: relay}
        return bot_environment(self.environment, self.pass_env, where)

    def _scrubber(self) -> Scrubber:
        env = sweep_environment(self.environment)
        return Scrubber.of(env, {n: env[n] for n in passed_names(self.pass_env) if n in env})

    async def _run(self, payload: bytes, env: dict) -> tuple[int, bytes, bytes]:
        """(exit code, stdout, stderr) of one run; an outage raises InfrastructureError."""
        argv = shlex.split(self.cmd)
        try:
            code, out, err = await run_program(argv, payload, env, float(self.timeout))
        except OSError as exc:
            raise self._outage(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from exc
        if code is None:
            raise self._outage(
                f"no answer within its timeout of {float(self.timeout):g} s (killed)"
            )
        if code < 0:
            raise self._outage(f"killed by signal {_signal_name(-code)}{_tail(err)}")
        if code == TEMPFAIL:
            raise self._outage(f"exited {TEMPFAIL} (EX_TEMPFAIL: try again later){_tail(err)}")
        return code, out, err

    def _outage(self, what: str) -> InfrastructureError:
        return InfrastructureError(f"{self.name}: {what}", endpoint=f"command:{self.cmd}")

    def _judged(self, code: int, out: bytes, err: bytes, ctx: Context, ran: dict) -> Forecast:
        text = out.decode("utf-8", "replace")
        if code != 0:
            return Forecast.failure(
                f"program exited {code}{_tail(err)}", raw=text[:SHOWN], usage=ran
            )
        return answered(text, "stdout", ctx, ran, self.model, _tail(err))


def answered(
    text: str, where: str, ctx: Context, ran: dict, model: str, note: str = ""
) -> Forecast:
    """The forecast one JSON answer `text` (read from `where`) holds, or the failure it is."""
    raw = text[:SHOWN]
    try:
        answer = json.loads(text)
    except ValueError:
        return Forecast.failure(f"{where} is not one JSON object{note}", raw=raw, usage=ran)
    if not isinstance(answer, dict) or "probability" not in answer:
        return Forecast.failure(f'{where} JSON has no "probability"', raw=raw, usage=ran)
    usage = ran | _usage(answer.get("usage"), model)
    parsed = check(answer["probability"], "command")
    if parsed.probability is None:
        return Forecast.failure(parsed.reason, raw=raw, usage=usage)
    return Forecast(
        parsed.probability,
        rationale=str(answer.get("rationale") or "")[: SHOWN * 5],
        evidence=_read_ids(ctx),
        usage=Usage.of(usage),
        raw=raw,
    )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _tail(err: bytes) -> str:
    text = " ".join(err.decode("utf-8", "replace").split())
    return f"; stderr: {text[-SHOWN // 4 :]}" if text else ""


def _usage(reported: object, model: str) -> dict:
    """Token counts the program reports, in the run's usage fields (what budgets count)."""
    if not isinstance(reported, dict):
        return {}

    def count(key: str) -> int:
        value = reported.get(key)
        return (
            int(value)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
            else 0
        )

    prompt, completion = count("prompt_tokens"), count("completion_tokens")
    said = str(reported.get("model") or "")
    name = (
        model or said
    )  # the spec's model= (priced before the run) wins; what the program said is kept
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "fresh_prompt_tokens": prompt,
        "fresh_completion_tokens": completion,
        "tokens_reported_by": "program",
    }
    return (
        usage | ({"model_name": name} if name else {}) | ({"reported_model": said} if said else {})
    )


def _read_ids(ctx: Context) -> tuple[str, ...]:
    """The documents the program read (read and thread calls), in order, once each."""
    seen: dict[str, None] = {}
    for call in ctx.retrievals:
        if call.op in ("read", "thread"):
            seen.update((i, None) for i in call.ids)
    return tuple(seen)
