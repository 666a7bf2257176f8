"""`http:` — a forecaster that is a web service: the `command:` contract over one HTTP POST.

Spec: `http:url=http://127.0.0.1:9000/forecast,timeout=120` (`key_env=VARIABLE` sends
`Authorization: Bearer <its value>`; `model=` names the model its reported tokens are priced as).

Per (market, t0) the question as it stood at t0 (the same JSON a `command:` program reads on
stdin) is POSTed to `url`; the header `Hindcast-MCP-URL` names the t0-bound tools of that
(market, t0), served over streamable HTTP on 127.0.0.1 for as long as the request lasts (so a
service on this machine can call them; its calls become the forecast's retrievals). The answer
is the body: one JSON object `{"probability", "rationale"?, "usage"?}`.

Taxonomy: no connection, no answer within `timeout`, HTTP 429 or 5xx → an outage (asked again
next run); any other status, or a 2xx body that is not one JSON object with a probability in
[0, 1] → a forecast failure (stored, counted).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from hindcast.errors import InfrastructureError, LeakageError
from hindcast.forecasters.base import Context, ModelForecaster
from hindcast.forecasters.bot_env import Scrubber, sweep_environment
from hindcast.forecasters.command import SHOWN, answered, stdin_payload
from hindcast.forecasters.tool_server import http_served, mcp_server
from hindcast.forecasters.tools import t0_tools
from hindcast.records import Forecast, Question

TOOLS_HEADER = "Hindcast-MCP-URL"


@dataclass(frozen=True)
class HttpForecaster(ModelForecaster):
    """A web service: the question JSON POSTed to `url`, the t0-bound tools
    at a loopback MCP URL."""

    name: str = "http"
    url: str = ""
    timeout: float = 120.0
    key_env: str = ""
    model: str = ""
    environment: Mapping[str, str] | None = field(default=None, repr=False, compare=False)
    http: Callable[[], object] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(
                "http: needs url=http(s)://… (e.g. http:url=http://127.0.0.1:9000/forecast)"
            )
        if not float(self.timeout) > 0:
            raise ValueError(f"timeout must be above 0 seconds, got {self.timeout!r}")

    def bind(self, models) -> HttpForecaster:
        """In a sweep: keys from the environment the sweep's Models was given;
        its HTTP client factory."""
        return dataclasses.replace(self, environment=dict(models.env), http=models.http)

    def model_name(self) -> str | None:
        return self.model or None

    def provenance(self) -> dict:
        return {
            "class": type(self).__name__,
            "url": self.url,
            "timeout": float(self.timeout),
            "model": self.model,
            "key_env": self.key_env,
        }

    async def forecast(self, question: Question, ctx: Context) -> Forecast:
        leaks: list[Exception] = []
        scrubber = self._scrubber()
        started = time.monotonic()
        async with http_served(
            mcp_server(scrubber.tools(t0_tools(question, ctx)), on_leak=leaks.append)
        ) as tools_url:
            status, body = await self._post(stdin_payload(question), tools_url)
        if leaks:
            raise LeakageError(f"{self.name}: the harness refused a tool answer: {leaks[0]}")
        ran = {
            "endpoint": self.url,
            "requests": 1,
            "latency_s": round(time.monotonic() - started, 3),
        }
        if not 200 <= status < 300:
            return scrubber.forecast(
                Forecast.failure(f"HTTP {status}", raw=body[:SHOWN], usage=ran)
            )
        return scrubber.forecast(answered(body, "the response body", ctx, ran, self.model))

    def _scrubber(self) -> Scrubber:
        """Masks the secrets of the sweep's environment and the key `key_env` names, whatever
        its variable is called."""
        env = sweep_environment(self.environment)
        return Scrubber.of(env, {"key": env[self.key_env]} if env.get(self.key_env) else {})

    async def _post(self, payload: bytes, tools_url: str) -> tuple[int, str]:
        """(status, body); no connection, a timeout, 429 or 5xx raise InfrastructureError."""
        import httpx

        headers = {
            "Content-Type": "application/json",
            TOOLS_HEADER: tools_url,
            **self._authorization(),
        }
        client = self.http() if self.http is not None else httpx.AsyncClient()
        try:
            async with client:  # type: ignore[attr-defined]
                reply = await client.post(
                    self.url,
                    content=payload,
                    headers=headers,  # type: ignore[attr-defined]
                    timeout=float(self.timeout),
                )
        except httpx.TimeoutException:
            raise self._outage(
                f"no answer within its timeout of {float(self.timeout):g} s"
            ) from None
        except httpx.TransportError as exc:
            raise self._outage(f"cannot reach it: {type(exc).__name__}") from None
        if reply.status_code == 429 or reply.status_code >= 500:
            raise self._outage(f"HTTP {reply.status_code}: {reply.text[:200]}")
        return reply.status_code, reply.text

    def _authorization(self) -> dict:
        if not self.key_env:
            return {}
        key = sweep_environment(self.environment).get(self.key_env)
        if not key:
            raise InfrastructureError(
                f"{self.name}: the key variable {self.key_env} is not set", self.url
            )
        return {"Authorization": f"Bearer {key}"}

    def _outage(self, what: str) -> InfrastructureError:
        return InfrastructureError(self._scrubber().scrub(f"{self.name}: {what}"), self.url)
