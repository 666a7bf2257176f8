"""What an outside bot (`command:`, `http:`) is given, and what it hands back, without credentials.

`bot_environment(given, pass_env, extra)`: a `command:` program's environment is built from an
allow-list — `PATH`, `HOME`, `USER`, `LOGNAME`, `SHELL`, `TERM`, `TZ`, `TMPDIR`, `LANG`,
`LANGUAGE` and `LC_*` — plus the variables the spec names in `pass_env=A+B` (what the user
chooses to hand it) and where its tools are. Nothing else of the sweep's environment reaches it:
not `HINDCAST_DB`, `DATABASE_URL`, a model key or any token.

`Scrubber`: everything a bot hands us (its answer's rationale and raw text, its error, its
reported usage, the arguments of its tool calls) passes through the redaction model endpoints
get (`hindcast.http.redact`: a URL's `user:password@`, credential-looking `key=value`s) after
the value of every variable that could be a credential is replaced by `***`: the ones handed to
it (`pass_env`, the `key_env` an `http:` bot is sent), every variable of the sweep's environment
named like a secret (…KEY…, …TOKEN…, …SECRET…, …PASSWORD…, …AUTH…, …DATABASE…, …DSN…) and the
password of every URL the environment holds.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass

from hindcast import environment
from hindcast.forecasters.tools import Tools
from hindcast.http import redacted
from hindcast.records import Forecast

ALLOWED = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "TZ",
    "TMPDIR",
    "LANG",
    "LANGUAGE",
)
ALLOWED_PREFIXES = ("LC_",)
SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|DATABASE|DSN|COOKIE|SESSION",
    re.IGNORECASE,
)
SHORTEST = 6  # a shorter value is masked only through redact (masking "1" would maul any text)
_URL_PASSWORD = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^/?#@:\s]*:(?P<password>[^@\s]+)@")


def passed_names(pass_env: str) -> tuple[str, ...]:
    """`pass_env=A+B` → ("A", "B")."""
    return tuple(n.strip() for n in str(pass_env or "").split("+") if n.strip())


def sweep_environment(given: Mapping[str, str] | None) -> Mapping[str, str]:
    """The environment the sweep was given (its Models' env), this process's when used alone."""
    return environment.of(given)


def bot_environment(
    given: Mapping[str, str] | None, pass_env: str, extra: Mapping[str, str]
) -> dict[str, str]:
    """The allow-listed variables, those `pass_env` names, then `extra` (where the tools are)."""
    env = sweep_environment(given)
    kept = {
        k: v
        for k, v in env.items()
        if k in ALLOWED or k.startswith(ALLOWED_PREFIXES) or k in passed_names(pass_env)
    }
    return kept | dict(extra)


@dataclass(frozen=True)
class Scrubber:
    """Masks `secrets` (longest first), then redacts; `scrub(text)`, `forecast(f)`, `tools(t)`."""

    secrets: tuple[str, ...] = ()

    @classmethod
    def of(
        cls, given: Mapping[str, str] | None, handed: Mapping[str, str] | None = None
    ) -> Scrubber:
        """The secrets of the sweep's environment `given`, and the values `handed` to the bot."""
        env = sweep_environment(given)
        values = [v for k, v in env.items() if SECRET_NAME.search(k)]
        values += list((handed or {}).values())
        values += [m.group("password") for v in env.values() for m in _URL_PASSWORD.finditer(v)]
        kept = {v for v in values if len(v) >= SHORTEST}
        return cls(tuple(sorted(kept, key=len, reverse=True)))

    def scrub(self, text: str) -> str:
        return redacted(text, self._masked)

    def value(self, value):
        """Every text inside a JSON-like value scrubbed."""
        return redacted(value, self._masked)

    def _masked(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text

    def forecast(self, forecast: Forecast) -> Forecast:
        return dataclasses.replace(
            forecast,
            rationale=self.scrub(forecast.rationale),
            raw=self.scrub(forecast.raw),
            error=self.scrub(forecast.error) if forecast.error is not None else None,
            usage=self.value(forecast.usage.to_dict()),
        )

    def tools(self, tools: Tools) -> Tools:
        """`tools` whose text arguments are scrubbed before they run (and are logged)."""

        def search(query, k: int = 5, mode: str = "hybrid", **more):
            return tools.search(self.value(query), k, mode, **more)

        return dataclasses.replace(
            tools,
            search=search,
            read=lambda doc_id, **more: tools.read(self.value(doc_id), **more),
            thread=lambda submission_id, **more: tools.thread(self.value(submission_id), **more),
            note=lambda op, **fields: tools.note(op, **self.value(fields)),
        )
