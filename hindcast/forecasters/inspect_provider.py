"""An Inspect AI model provider that calls models through hindcast's own chat client.

`inspect eval … --model hindcast/<model spec>` (e.g. `hindcast/openai:gpt-4.1-mini`,
`hindcast/openai-compatible:http://127.0.0.1:8000/v1#my-model`, `hindcast/local`): every
`generate` of Inspect goes through a `hindcast.llm.client.ChatClient` made by a
`Models` value — the response cache (a re-run asks nothing twice), the per-endpoint circuit
breaker, retries and the usage record of hindcast. Model arguments (`-M key=value`):
`cache=PATH` (default `runs/responses.db` under the working folder; `none`: no cache),
`key_env=VARIABLE` (the key's environment variable, as in a forecaster spec).

An outage (`InfrastructureError`: the endpoint could not be reached, its breaker is open, a
key is missing) propagates: Inspect records the sample as errored — never a forecast — and
`inspect eval-retry` / `--retry-on-error` asks again. Inside a hindcast sweep the
`inspect-agent:` forecaster hands its own bound `Models` in (`models=`), so the sweep's cache
and breakers apply, and every reply is added to the forecast's usage (`USAGE`).

Imported only when Inspect loads hindcast's entry point or `inspect-agent:` runs.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from inspect_ai.model import StopReason

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    messages_to_openai,
    modelapi,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

from hindcast import environment
from hindcast.llm import Models
from hindcast.llm import client as llm

API = "hindcast"
DEFAULT_CACHE = Path("runs") / "responses.db"
# The usage record of the forecast being made (set by the inspect-agent forecaster around a run).
USAGE: ContextVar[llm.UsageTally | None] = ContextVar("hindcast_inspect_usage", default=None)
# Cache-key fields of the forecast being made (`repeat`, `attempt`; set by the inspect-agent
# forecaster).
SAMPLE: ContextVar[dict | None] = ContextVar("hindcast_inspect_sample", default=None)
_SETTINGS = (
    "temperature",
    "max_tokens",
    "top_p",
    "seed",
    "stop_seqs",
)  # what reaches the request body


@modelapi(name=API)
class HindcastModelAPI(ModelAPI):
    """Inspect's `generate` → hindcast's ChatClient (cache, breaker, retries, usage)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=None, config=config)
        self.spec = model_name
        self.key_env = model_args.pop("key_env", None)
        llm.parse_model(self.spec, self.key_env)  # a malformed spec fails before any sample
        models = model_args.pop("models", None)
        self._owned = models is None
        self.models = models if models is not None else _own_models(model_args.pop("cache", None))
        if model_args:
            raise ValueError(
                f"model {API}/{model_name}: unknown model argument(s) "
                f"{', '.join(sorted(model_args))} (known: cache, key_env)"
            )

    def client(self) -> llm.ChatClient:
        return self.models.client(self.spec, self.key_env, structured="none")

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        client = self.client()
        messages = [dict(m) for m in await messages_to_openai(input)]
        params = {**request_params(config, tools, tool_choice), **_sample_keys(config)}
        reply = await client.complete(
            messages, tools=[tool_param(t) for t in tools] or None, **params
        )
        usage = USAGE.get()
        if usage is not None:
            usage.add("turn", reply, content=reply.content, tool_calls=list(reply.tool_calls))
        return output_of(reply, self.spec)

    def should_retry(self, ex: Exception) -> bool:
        return False  # hindcast's client retried already; an outage is the sample's error

    def max_connections(self) -> int:
        return self.models.concurrency

    async def aclose(self) -> None:
        if self._owned:  # a Models handed in (a sweep's) is closed by its owner
            await self.models.aclose()
            self.models.close()


def _own_models(cache: str | None) -> Models:
    """A Models for `inspect eval`: keys from the environment, the response cache at `cache`."""
    path = None if str(cache).lower() == "none" else Path(cache) if cache else DEFAULT_CACHE
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    return Models.from_environment(environment.of(), path)


def _sample_keys(config: GenerateConfig) -> dict:
    """Which sample this call belongs to, in the cache key: at temperature > 0 each epoch (or
    repeat) of a sample is its own answer; a retried failure (`attempt`) is asked anew."""
    keys = dict(SAMPLE.get() or {})
    if "repeat" not in keys and (config.temperature or 0) > 0:
        from inspect_ai.log._samples import sample_active

        active = sample_active()
        keys["repeat"] = active.epoch - 1 if active is not None else 0
    return {k: v for k, v in keys.items() if v}


def request_params(config: GenerateConfig, tools: list[ToolInfo], tool_choice: ToolChoice) -> dict:
    """Body parameters from Inspect's GenerateConfig (all of them part of the cache key)."""
    params: dict = {}
    for name in _SETTINGS:
        value = getattr(config, name)
        if value is not None:
            params["stop" if name == "stop_seqs" else name] = value
    if tools and tool_choice not in (None, "auto"):
        params["tool_choice"] = (
            "required"
            if tool_choice == "any"
            else (
                tool_choice
                if isinstance(tool_choice, str)
                else {"type": "function", "function": {"name": tool_choice.name}}
            )
        )
    return params


def tool_param(tool: ToolInfo) -> dict:
    """An Inspect ToolInfo as an OpenAI function tool."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters.model_dump(exclude_none=True),
        },
    }


def output_of(reply: llm.ChatReply, model: str) -> ModelOutput:
    """hindcast's ChatReply as Inspect's ModelOutput (tool calls parsed; bad JSON
    kept as a parse error)."""
    calls = [tool_call(c) for c in reply.tool_calls] or None
    message = ChatMessageAssistant(
        content=reply.content or "", tool_calls=calls, model=model, source="generate"
    )
    output = ModelOutput.from_message(
        message, stop_reason="tool_calls" if calls else _stop(reply.finish_reason)
    )
    tokens = {k: int(reply.usage.get(k) or 0) for k in ("prompt_tokens", "completion_tokens")}
    output.usage = ModelUsage(
        input_tokens=tokens["prompt_tokens"],
        output_tokens=tokens["completion_tokens"],
        total_tokens=sum(tokens.values()),
    )
    output.model = model
    output.metadata = {
        "hindcast": {"cached": reply.cached, "retries": reply.retries, "latency_s": reply.latency_s}
    }
    return output


def tool_call(call: dict) -> ToolCall:
    try:
        arguments = json.loads(call["arguments"] or "{}")
        error = None if isinstance(arguments, dict) else "arguments are not a JSON object"
    except ValueError as exc:
        arguments, error = {}, f"arguments are not valid JSON: {exc}"
    return ToolCall(
        id=call["id"],
        function=call["name"],
        arguments=arguments if error is None else {},
        parse_error=error,
    )


def _stop(reason: str) -> StopReason:
    stops: dict[str, StopReason] = {"length": "max_tokens", "content_filter": "content_filter"}
    return stops.get(reason, "stop")
