"""A chat client for any OpenAI-compatible endpoint, over an injected `httpx.AsyncClient`.

Model specs:

* `openai:gpt-4.1-mini` — https://api.openai.com/v1, key from `OPENAI_API_KEY`;
* `openai-compatible:http://127.0.0.1:8080/v1#model-name` — any server (vLLM, Ollama,
  llama.cpp); a key only if the forecaster names an environment variable (`key_env=…`);
* `local` — the embedded SmolLM2 server (`hindcast.llm.local`), started lazily.

Clients are made and owned by a `hindcast.llm.models.Models` value (built at the
edge from an environment mapping and a response cache); there are no module settings.
Keys travel in the Authorization header of a request and nowhere else (not in the cache,
usage, errors, or `repr`). A URL with credentials (`http://user:pass@host/…`) is refused:
the spec is the forecaster's name, stored and printed everywhere — use `key_env=`.

Two kinds of failure: a reply that cannot be used (malformed body, a 400 …) is a
`ChatError` (a ForecastError: recorded with the forecast); an outage — connection error,
timeout, 429/5xx after the retry budget, 401/403/404, a missing key, a dead local server —
is an `InfrastructureError` naming the endpoint: never stored as a forecast, asked again
on the next run. Requests go through the shared HTTP layer (`hindcast.http`): timeouts,
dropped connections, 408/409/425/429 and 5xx are retried a bounded number of times with
exponential backoff, honouring `Retry-After` (seconds, or an HTTP date against the
response's `Date`), a wait capped at `max_wait`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from hindcast.errors import (
    ChatError,
    CircuitOpen,
    ForecastError,
    InfrastructureError,
)
from hindcast.errors import RejectedAnswer as _Rejected
from hindcast.http import (
    AsyncRetrying,
    Outcome,
    RetryPolicy,
    has_userinfo,
    redact,
    retry_after,
)
from hindcast.llm.cache import ResponseCache, request_key
from hindcast.llm.model_spec import OPENAI_URL, ModelSpec, check_key_env, parse_model
from hindcast.records import Usage

__all__ = [
    "AUTH_STATUSES",
    "OPENAI_URL",
    "RETRY_STATUSES",
    "STRUCTURED",
    "Breakers",
    "ChatClient",
    "ChatError",
    "ChatReply",
    "CircuitOpen",
    "ModelSpec",
    "UsageTally",
    "check_key_env",
    "has_userinfo",
    "parse_model",
    "redact",
    "reply_from",
    "response_format",
    "retry_after",
]  # ChatError, CircuitOpen, retry_after: re-exported

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
AUTH_STATUSES = frozenset(
    {401, 403, 404, 407}
)  # an outage (wrong key, URL or model name): asked again next run
STRUCTURED = (
    "json_schema",
    "json_object+schema",
    "json_object",
    "none",
)  # each falls back to the next


@dataclass(frozen=True)
class ChatReply:
    """One assistant message: text, tool calls ({id, name, arguments}), token usage."""

    content: str
    tool_calls: tuple[dict, ...] = ()
    usage: dict = field(default_factory=dict)
    cached: bool = False
    finish_reason: str = ""
    retries: int = 0  # HTTP attempts beyond the first (0 from the cache)
    latency_s: float = 0.0  # seconds from the first attempt to the reply (0 from the cache)


def reply_from(body: Mapping, cached: bool) -> ChatReply:
    """Parse a chat.completion body once, at the boundary."""
    try:
        choice = body["choices"][0]
        message = choice["message"]
        calls = tuple(
            {
                "id": c.get("id", ""),
                "name": c["function"]["name"],
                "arguments": c["function"].get("arguments") or "",
            }
            for c in message.get("tool_calls") or ()
        )
    except (KeyError, IndexError, TypeError) as exc:
        raise ChatError(f"malformed chat response ({type(exc).__name__}: {exc})") from exc
    usage = {
        k: v
        for k, v in (body.get("usage") or {}).items()
        if k in ("prompt_tokens", "completion_tokens")
    }
    return ChatReply(
        message.get("content") or "", calls, usage, cached, choice.get("finish_reason") or ""
    )


def response_format(schema: Mapping | None, structured: str) -> dict | None:
    """The `response_format` for a JSON schema under the endpoint's structured-output mode."""
    if schema is None or structured == "none":
        return None
    if (
        structured == "json_object+schema"
    ):  # llama.cpp's (and the local server's) schema-constrained JSON
        return {"type": "json_object", "schema": dict(schema)}
    if structured == "json_object":
        return {"type": "json_object"}
    return {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": dict(schema), "strict": True},
    }


@dataclass
class _LoopState:
    loop: object
    gate: asyncio.Semaphore
    http: object
    owned: bool


class Breakers:
    """Per-endpoint circuit breakers: `threshold` consecutive infrastructure failures on one
    endpoint open its breaker; a success closes it again. Thread-safe."""

    def __init__(self, threshold: int = 5) -> None:
        self.threshold = max(1, int(threshold))
        self._lock = threading.Lock()
        self._count: dict[str, int] = {}
        self._open: dict[str, str] = {}  # endpoint → reason of the failure that opened it

    def failure(self, endpoint: str, reason: str) -> None:
        with self._lock:
            self._count[endpoint] = self._count.get(endpoint, 0) + 1
            if self._count[endpoint] >= self.threshold:
                self._open.setdefault(endpoint, reason)

    def success(self, endpoint: str) -> None:
        with self._lock:
            if endpoint not in self._open:
                self._count[endpoint] = 0

    def reason(self, endpoint: str) -> str | None:
        """Why the breaker of `endpoint` is open, or None while it is closed."""
        with self._lock:
            return self._open.get(endpoint)

    def opened(self) -> dict[str, str]:
        with self._lock:
            return dict(self._open)


class ChatClient:
    """POST /chat/completions with retries, a concurrency limit, a cache and structured output.

    `http` is used as given (tests inject `httpx.AsyncClient(transport=…)`); without one the
    client makes its own per event loop. `base_url` may be a coroutine function (the local
    server starts on first use). `sleep` is injectable so retry waits can be observed. A
    missing key (`key_env` set, `api_key` None) is an outage raised when a request would be
    sent — a reply from the cache needs no key. `breakers` (shared by the clients of one
    `Models`) stops calls to an endpoint whose breaker is open.
    """

    def __init__(
        self,
        spec: ModelSpec,
        *,
        api_key: str | None = None,
        http=None,
        cache: ResponseCache | None = None,
        timeout: float = 120.0,
        max_retries: int = 3,
        backoff: float = 1.0,
        max_wait: float = 60.0,
        concurrency: int = 4,
        structured: str = "json_schema",
        sleep=asyncio.sleep,
        base_url: Callable[[], Awaitable[str]] | None = None,
        breakers: Breakers | None = None,
    ) -> None:
        if structured not in STRUCTURED:
            raise ValueError(f"structured={structured!r}: use {', '.join(STRUCTURED)}")
        self.spec, self.cache, self.timeout = spec, cache, float(timeout)
        self.max_retries, self.backoff, self.max_wait = (
            int(max_retries),
            float(backoff),
            float(max_wait),
        )
        self.concurrency, self.configured, self.structured, self._sleep = (
            int(concurrency),
            structured,
            structured,
            sleep,
        )
        self._key, self._http, self._base_url, self._state = api_key, http, base_url, None
        self.breakers = breakers
        self.requests = 0

    def __repr__(self) -> str:
        return f"ChatClient({self.spec.spec!r}, endpoint={self.spec.endpoint!r})"

    async def complete(
        self,
        messages: list[dict],
        *,
        schema: Mapping | None = None,
        tools: list[dict] | None = None,
        repeat: int = 0,
        attempt: int = 0,
        **params,
    ) -> ChatReply:
        """One chat completion (from the cache when the identical request was made before).

        The cache key is the request as asked, in the configured structured-output mode,
        so a re-run hits the cache even if this endpoint made the client fall back; a
        retried failure (`attempt` > 0) is its own cache entry, so it is really asked again.
        """
        asked = self._body(messages, schema, tools, params, self.configured)
        key = request_key(self.spec.identity, asked, repeat, attempt)
        if (
            self.cache is not None
            and (hit := await asyncio.to_thread(self.cache.get, key)) is not None
        ):
            return reply_from(hit, cached=True)
        payload, attempts, seconds = await self._post_structured(messages, schema, tools, params)
        reply = _timed(reply_from(payload, cached=False), attempts - 1, seconds)
        if self.cache is not None:  # stored before the forecast is: a killed run never asks again
            await asyncio.to_thread(self.cache.put, key, asked, payload)
        return reply

    def _body(self, messages, schema, tools, params, structured: str) -> dict:
        body = {"model": self.spec.model, "messages": list(messages), **params}
        fmt = response_format(schema, structured)
        if fmt is not None:
            body["response_format"] = fmt
        if tools:
            body["tools"] = list(tools)
        return body

    async def _post_structured(
        self, messages, schema, tools, params, before: int = 0, spent: float = 0.0
    ) -> tuple[dict, int, float]:
        """POST (→ payload, HTTP attempts made by this call, seconds spent past the concurrency
        gate); an endpoint that rejects the response_format is asked again one level simpler
        (its attempts and seconds are added)."""
        body = self._body(messages, schema, tools, params, self.structured)
        try:
            payload, attempts, seconds = await self._post(body)
            return payload, before + attempts, spent + seconds
        except _Rejected as exc:
            if "response_format" not in body or not _mentions_format(exc.text):
                raise ChatError(exc.reason) from None
            self.structured = STRUCTURED[STRUCTURED.index(self.structured) + 1]
            return await self._post_structured(
                messages, schema, tools, params, before + exc.attempts, spent + exc.seconds
            )

    @property
    def policy(self) -> RetryPolicy:
        """The shared HTTP layer's policy from this client's settings: a Retry-After above
        `max_wait` is waited `max_wait` (not refused, as the market client does)."""
        return RetryPolicy(
            attempts=self.max_retries + 1,
            base_delay=self.backoff,
            max_delay=self.max_wait,
            timeout=self.timeout,
            statuses=RETRY_STATUSES,
            long_wait="cap",
        )

    async def _post(self, body: dict) -> tuple[dict, int, float]:
        """(payload, attempts, seconds): the clock starts once the gate is passed (time queued
        behind other calls to the endpoint is not this call's latency)."""
        state, policy = self._loop_state(), self.policy
        async with state.gate:
            started = time.monotonic()
            url = (await self._url()).rstrip("/") + "/chat/completions"
            self._check_open()  # an open breaker before a missing key, as on every attempt
            outcome = await AsyncRetrying(state.http, policy, self._sleep).request(
                "POST",
                url,
                json=body,
                headers=self._headers(),
                before=self._before_attempt,
                transient=lambda response: (
                    policy.transient(response) and not _format_refused(body, response)
                ),
            )
        try:
            return self._payload(outcome), outcome.attempts, time.monotonic() - started
        except _Rejected as exc:
            exc.attempts, exc.seconds = outcome.attempts, time.monotonic() - started
            raise

    def _before_attempt(self) -> None:
        self._check_open()
        self.requests += 1

    def _payload(self, outcome: Outcome) -> dict:
        """The decoded body of a final 2xx; an outage or a refused reply otherwise."""
        if outcome.transient:
            raise self.outage(
                f"{self._reason(outcome.last)} (gave up after {outcome.attempts} attempts)"
            )
        response = outcome.last
        if response.status_code in AUTH_STATUSES:
            raise self.outage(self._reason(response))
        if (
            response.status_code >= 400
        ):  # a refused response_format (even as a 500), or a bad request
            raise _Rejected(self._reason(response), response.text)
        try:
            return response.json()
        except ValueError:
            raise ChatError(f"response is not JSON: {_excerpt(response.text)}") from None

    def _reason(self, last) -> str:
        import httpx

        if isinstance(last, httpx.TimeoutException):
            return f"timeout after {self.timeout:g}s ({type(last).__name__})"
        if isinstance(last, httpx.TransportError):
            return f"connection failed ({type(last).__name__}: {redact(str(last))})"
        return f"HTTP {last.status_code}: {_excerpt(last.text)}"

    async def _url(self) -> str:
        if self._base_url is None:
            return self.spec.endpoint
        try:
            return await self._base_url()
        except ForecastError as exc:  # a local server that cannot start is an outage, not an answer
            raise self.outage(str(exc)) from None

    def outage(self, reason: str) -> InfrastructureError:
        return InfrastructureError(
            f"model {self.spec.spec} at {self.spec.endpoint}: {reason}", self.spec.endpoint
        )

    def _check_open(self) -> None:
        reason = self.breakers.reason(self.spec.endpoint) if self.breakers is not None else None
        if reason is not None:
            raise CircuitOpen(
                f"circuit breaker open for {self.spec.endpoint}: {reason}", self.spec.endpoint
            )

    def _headers(self) -> dict:
        if self._key:
            return {"Authorization": f"Bearer {self._key}"}
        if self.spec.key_env is not None:
            raise self.outage(
                f"{self.spec.key_env} is not set in the environment given to hindcast"
            )
        return {}

    def _loop_state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        if self._state is None or self._state.loop is not loop:
            import httpx

            http = self._http if self._http is not None else httpx.AsyncClient(timeout=self.timeout)
            self._state = _LoopState(
                loop, asyncio.Semaphore(self.concurrency), http, self._http is None
            )
        return self._state

    async def aclose(self) -> None:
        if self._state is not None and self._state.owned:
            await self._state.http.aclose()
        self._state = None


def _timed(reply: ChatReply, retries: int, latency: float) -> ChatReply:
    from dataclasses import replace

    return replace(reply, retries=max(0, retries), latency_s=round(latency, 6))


def _format_refused(body: dict, response) -> bool:
    """An error naming the response_format we sent (some servers answer it with a 500)."""
    return (
        response.status_code >= 400
        and "response_format" in body
        and _mentions_format(response.text)
    )


def _mentions_format(text: str) -> bool:
    lowered = text.lower()
    return any(
        word in lowered
        for word in ("response_format", "json_schema", "json_object", "response format")
    )


def _excerpt(text: str, n: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n] + "…"


# ---- usage accounting -------------------------------------------------------------------------
class UsageTally:
    """Token counts (all, and `fresh_*`: of calls not replayed from the cache), requests,
    cache hits, retries, latency and a log of every call of one forecast."""

    def __init__(self, client: ChatClient, **fields) -> None:
        self.totals = {
            "model": client.spec.spec,
            "model_name": client.spec.model,
            "endpoint": client.spec.endpoint,
            **fields,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "requests": 0,
            "cache_hits": 0,
            "retries": 0,
            "latency_s": 0.0,
            "fresh_prompt_tokens": 0,
            "fresh_completion_tokens": 0,
        }
        self.steps: list[dict] = []
        self._client = client

    def add(self, step: str, reply: ChatReply | None, **detail) -> None:
        if reply is not None:
            tokens = {
                k: int(reply.usage.get(k) or 0) for k in ("prompt_tokens", "completion_tokens")
            }
            for name, n in tokens.items():
                self.totals[name] += n
                if not reply.cached:  # what this run paid for (budgets count only these)
                    self.totals[f"fresh_{name}"] += n
            self.totals["cache_hits" if reply.cached else "requests"] += 1
            self.totals["retries"] += reply.retries
            self.totals["latency_s"] = round(self.totals["latency_s"] + reply.latency_s, 6)
        self.steps.append({"step": step, **detail})

    def record(self) -> Usage:
        """Totals, the structured-output mode the endpoint accepted, and every step."""
        return Usage.of(
            {**self.totals, "structured": self._client.structured, "steps": list(self.steps)}
        )
