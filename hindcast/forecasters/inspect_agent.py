"""Inspect AI agents as hindcast forecasters, and the t0-bound tools in Inspect's form.

Spec: `inspect-agent:agent=my_pkg.agents:forecaster,model=openai:gpt-4.1-mini` (the `inspect`
extra). `agent` names a factory `factory(tools) -> inspect_ai.agent.Agent` (default:
`react_forecaster` below, Inspect's `react` agent with the tools); the factory gets the six
t0-bound tools of one (market, t0) (`search`, `read`, `thread`, `price_history`,
`resolved_before`, `question`: closures over the engine's Context, none takes a time) and its
agent is run once per (market, t0) through `inspect_ai.agent.run`, with the question as it
stood at t0 (prompt `inspect_replay`) as input. The model is `hindcast/<model>`: Inspect's
generate goes through the sweep's own Models (response cache, circuit breaker, usage).

The answer is the agent's final output text, parsed like any model answer: no valid
probability is a recorded forecast failure; an outage (the model could not be reached) is
not a forecast and propagates to the engine, which asks again on the next run. Every tool
call is in the Context's retrieval log, so the engine stores it as the forecast's retrievals.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from hindcast.errors import ConfigError, ForecastError
from hindcast.forecasters.base import Context, ModelForecaster
from hindcast.forecasters.tools import Tools, t0_tools
from hindcast.llm import FALLBACK, parse_probability, prompts
from hindcast.llm import client as llm
from hindcast.records import Forecast, Question, Retrieval
from hindcast.timeutil import iso

EXTRA = "Inspect AI support needs the optional extra: pip install 'hindcast-replay[inspect]'"
PROMPT = "inspect_replay"
_DESCRIPTIONS = {  # name → (description, {parameter: description})
    "search": (
        "Search the news archive as it stood before today; best first (id, date, title, text).",
        {
            "query": "what to search for",
            "k": "how many results (1 to 50)",
            "mode": "vector, text or hybrid",
        },
    ),
    "read": (
        "Read one archive document by its id (null if it did not exist before today).",
        {"doc_id": "the document id"},
    ),
    "thread": (
        "A submission and its comments created before today, in time order.",
        {"submission_id": "the submission id"},
    ),
    "price_history": ("This market's YES prices known before today, oldest first.", {}),
    "resolved_before": ("Other markets already resolved before today (id and outcome).", {}),
    "question": ("The question as it stood today, and today's instant.", {}),
}


def require_inspect() -> None:
    """One line naming the extra when Inspect AI is not installed."""
    try:
        importlib.import_module("inspect_ai")
    except ImportError:
        raise ConfigError(EXTRA) from None


def inspect_tools(tools: Tools, after: Callable[[], None] = lambda: None) -> list:
    """The t0-bound tools as Inspect tools (results as JSON text); `after()`
    runs after each call."""
    from inspect_ai.tool import ToolDef

    calls = _calls(tools)
    made = []
    for name, (description, parameters) in _DESCRIPTIONS.items():
        made.append(
            ToolDef(
                _logged(calls[name], after),
                name=name,
                description=description,
                parameters=parameters,
            ).as_tool()
        )
    return made


def _calls(tools: Tools) -> dict[str, Callable]:
    """Explicit signatures (Inspect builds each tool's schema from them); no time argument."""

    async def search(query: str, k: int = 5, mode: str = "hybrid"):
        return tools.search(query, k, mode)

    async def read(doc_id: str):
        return tools.read(doc_id)

    async def thread(submission_id: str):
        return tools.thread(submission_id)

    async def price_history():
        return tools.price_history()

    async def resolved_before():
        return tools.resolved_before()

    async def question():
        return tools.question_at_t0()

    return {f.__name__: f for f in (search, read, thread, price_history, resolved_before, question)}


def _logged(call: Callable, after: Callable[[], None]) -> Callable:
    import functools

    @functools.wraps(call)
    async def run(*args, **kwargs) -> str:
        try:
            return json.dumps(await call(*args, **kwargs), sort_keys=True)
        except (ValueError, ForecastError) as exc:  # a bad k or mode, no archive: the model is told
            return f"error: {exc}"
        finally:
            after()

    return run


def react_forecaster(tools: list):
    """The default agent: Inspect's `react` with the t0-bound tools, answering
    in its final message."""
    from inspect_ai.agent import react

    return react(name="hindcast_forecaster", tools=tools, submit=False)


def question_messages(question: Question) -> list[dict]:
    """The question as it stood at t0, as chat messages (the `inspect_replay` prompt)."""
    return prompts.load(PROMPT).messages(**prompts.question_fields(question))


def evidence_of(retrievals: Iterable[Retrieval]) -> tuple[str, ...]:
    """Every document id the tool calls returned, first seen first."""
    return tuple(dict.fromkeys(i for entry in retrievals for i in entry.ids))


def load_factory(ref: str) -> Callable:
    """`pkg.mod:factory` → the factory (one line naming what is missing otherwise)."""
    module, _, attr = ref.partition(":")
    if not module or not attr:
        raise ValueError(f"agent={ref!r}: expected pkg.module:factory")
    try:
        made = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"agent={ref!r} cannot be loaded ({type(exc).__name__}: {exc})") from None
    if not callable(made):
        raise ValueError(f"agent={ref!r} is not callable")
    return made


@dataclass(frozen=True)
class InspectAgent(ModelForecaster):
    """An Inspect AI agent (`agent=pkg.mod:factory`, factory(tools) → Agent)
    run per (market, t0)."""

    name: str = "inspect-agent"
    agent: str = "hindcast.forecasters.inspect_agent:react_forecaster"
    model: str = "local"
    key_env: str | None = None
    temperature: float = 0.0
    max_tokens: int = 512
    messages: int = 30  # the agent's message limit per forecast
    models: object = field(default=None, compare=False, repr=False)  # an llm.models.Models
    attempt: int = field(
        default=0, compare=False, repr=False
    )  # set by the engine for a retried failure

    def __post_init__(self) -> None:
        require_inspect()
        load_factory(self.agent)
        llm.parse_model(self.model, self.key_env)
        if int(self.messages) < 2:
            raise ValueError("messages must be at least 2")

    def bind(self, models) -> InspectAgent:
        return dataclasses.replace(self, models=models)

    def for_attempt(self, attempt: int) -> InspectAgent:
        """This forecaster asking anew (not from the cache) for attempt
        `attempt` of a stored failure."""
        return dataclasses.replace(self, attempt=int(attempt))

    def model_name(self) -> str:
        return llm.parse_model(self.model, self.key_env).model

    def provenance(self) -> dict:
        spec = llm.parse_model(self.model, self.key_env)
        from importlib import metadata

        return {
            "class": type(self).__name__,
            "agent": self.agent,
            "model": self.model,
            "endpoint": spec.endpoint,
            "temperature": float(self.temperature),
            "max_tokens": int(self.max_tokens),
            "messages": int(self.messages),
            "prompts": {PROMPT: prompts.load(PROMPT).sha256},
            "packages": {"inspect-ai": metadata.version("inspect-ai")},
        }

    async def forecast(self, question: Question, ctx: Context) -> Forecast:
        from hindcast.forecasters import inspect_provider as provider

        model = self._model()
        sample = int(getattr(ctx, "repeat", 0)) if float(self.temperature) > 0 else 0
        usage = llm.UsageTally(
            model.api.client(), temperature=float(self.temperature), sample=sample
        )
        usage.totals.update(prompts.load(PROMPT).record, agent=self.agent)
        tokens = (
            provider.USAGE.set(usage),
            provider.SAMPLE.set({"repeat": sample, "attempt": int(self.attempt)}),
        )
        try:
            text = await self._run(question, ctx, model)
        except ForecastError as exc:
            return Forecast.failure(f"{type(exc).__name__}: {exc}", usage=usage.record())
        finally:
            provider.USAGE.reset(tokens[0])
            provider.SAMPLE.reset(tokens[1])
        parsed = parse_probability(text)
        evidence = evidence_of(ctx.retrievals)
        if parsed.probability is None:
            return Forecast.failure(
                f"invalid answer: {parsed.reason}", raw=text, usage=usage.record()
            )
        return Forecast(
            parsed.probability, rationale=text, evidence=evidence, usage=usage.record(), raw=text
        )

    async def _run(self, question: Question, ctx: Context, model) -> str:
        from inspect_ai.agent import run
        from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser
        from inspect_ai.util import message_limit

        agent = load_factory(self.agent)(inspect_tools(t0_tools(question, ctx)))
        system, user = question_messages(question)
        messages: list[ChatMessage] = [
            ChatMessageSystem(content=system["content"]),
            ChatMessageUser(content=user["content"]),
        ]
        async with _sample_scope(question, model):
            state, limited = await run(agent, messages, limits=[message_limit(int(self.messages))])
        text = state.output.completion if state.output is not None else ""
        if limited is not None and not text:
            raise ForecastError(f"no answer within the agent's limit ({limited})")
        return text

    def _model(self):
        from inspect_ai.model import GenerateConfig, get_model

        from hindcast.forecasters import inspect_provider

        config = GenerateConfig(
            temperature=float(self.temperature), max_tokens=int(self.max_tokens)
        )
        return get_model(
            f"{inspect_provider.API}/{self.model}",
            config=config,
            memoize=False,
            models=self.models or FALLBACK.get(),
            key_env=self.key_env,
        )


@contextlib.asynccontextmanager
async def _sample_scope(question: Question, model):
    """What Inspect's harness gives a running sample, for one forecast: a fresh transcript, an
    active sample (agents such as `react` need one) and `model` as the active model. Uses
    Inspect internals of the pinned version (inspect-ai==0.3.285)."""
    import uuid

    from inspect_ai.dataset import Sample
    from inspect_ai.log._samples import active_sample
    from inspect_ai.log._transcript import Transcript, init_transcript
    from inspect_ai.model._model import active_model_context_var

    token = active_model_context_var.set(model)
    init_transcript(Transcript())
    sample_id = f"{question.market_id}@{iso(question.t0)}"
    try:
        async with active_sample(
            task="hindcast/inspect-agent",
            log_location="",
            model=str(model),
            sample=Sample(id=sample_id, input=question.question),
            epoch=1,
            message_limit=None,
            token_limit=None,
            cost_limit=None,
            time_limit=None,
            working_limit=None,
            fails_on_error=True,
            transcript=Transcript(),
            eval_id=sample_id,
            sample_uuid=uuid.uuid4().hex,
        ):
            yield
    finally:
        active_model_context_var.reset(token)
