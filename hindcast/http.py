"""One HTTP layer: a retry policy and the two loops (sync, async) that apply it.

`RetryPolicy` is a frozen value: how many attempts, the exponential backoff (base·2^k,
at most `max_delay`), the timeout of every request, which statuses are transient, and
what to do when a server's `Retry-After` asks for more than `max_delay` ("fail": give up
at once; "cap": wait `max_delay`). `Retry-After` is read in both of its forms: seconds,
or an HTTP date taken relative to the same response's `Date` header (the server's own
clock; no clock of ours is read, and a date without a `Date` header falls back to backoff).

`Retrying` (over an injected `httpx.Client`) and `AsyncRetrying` (over an
`httpx.AsyncClient`) send one request until it succeeds, fails for good, or the policy's
attempts are spent, and return what happened as data (`Outcome`): the last response or
transport error, how many attempts it took, and whether it was still transient. They
raise nothing of their own; each caller turns an `Outcome` into its own errors. Every
transport error (timeout, refused or dropped connection, protocol error) is transient.
The sleep function is injected, so tests never wait. httpx is imported on the first
request, not with this module (importing a forecaster stays light).

`redact(text)` is the one place credentials are taken out of a URL (or any text holding
one) before it is printed, logged, stored or raised: `scheme://user:password@host` becomes
`scheme://***@host` and the value of a credential-looking key (`?api_key=…`, `&token=…`,
`password=…`; `credential_key`) becomes `***`; `redacted(value)` does it to every text of a
JSON-like value. `credential_keys(url)` names the credential-looking query keys of a URL (an
endpoint carrying one is refused by its caller); `carried_credential(key, value)` says which
credential a forecaster spec's `key=value` carries (a URL, a command line, a variable's name).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from itertools import count
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:
    import httpx

TRANSIENT_STATUSES = frozenset({429, 500, 502, 503, 504})
LONG_WAITS = ("fail", "cap")

Last = Union[
    "httpx.Response", "httpx.TransportError"
]  # a response, or the transport error raised instead
Retryable = Callable[["httpx.Response"], bool]


@dataclass(frozen=True)
class RetryPolicy:
    """At most `attempts` tries, each with `timeout` seconds; waits base·2^k seconds
    (≤ max_delay) or what Retry-After says (above max_delay: `long_wait` decides)."""

    attempts: int = 5
    base_delay: float = 1.0
    max_delay: float = 60.0
    timeout: float = 30.0
    statuses: frozenset[int] = TRANSIENT_STATUSES
    long_wait: str = "fail"

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"attempts={self.attempts}: at least one attempt")
        if self.long_wait not in LONG_WAITS:
            raise ValueError(f"long_wait={self.long_wait!r}: use {' or '.join(LONG_WAITS)}")

    def backoff(self, attempt: int) -> float:
        return min(self.base_delay * float(2**attempt), self.max_delay)

    def transient(self, response: httpx.Response) -> bool:
        return response.status_code in self.statuses

    def wait(self, last: Last, attempt: int) -> float:
        """Seconds before the next attempt: what Retry-After asks (capped under
        "cap"), else backoff."""
        asked = -1.0 if isinstance(last, Exception) else retry_after(last.headers)
        if asked < 0:
            return self.backoff(attempt)
        return min(asked, self.max_delay) if self.long_wait == "cap" else asked

    def decide(
        self, last: Last, attempt: int, transient: Retryable | None = None
    ) -> Outcome | float:
        """After attempt number `attempt` (from 0): the Outcome if it is over, else the wait."""
        retry = isinstance(last, Exception) or (transient or self.transient)(last)
        if not retry:
            return Outcome(last, attempt + 1, transient=False)
        if attempt + 1 >= self.attempts:
            return Outcome(last, attempt + 1, transient=True)
        wait = self.wait(last, attempt)
        if wait > self.max_delay:
            return Outcome(last, attempt + 1, transient=True, refused_wait=wait)
        return wait


@dataclass(frozen=True)
class Outcome:
    """What a request came to. `last` is the final response (any status) or transport
    error; `transient` says it was still a transient failure (attempts spent, or a
    Retry-After above the policy's max_delay refused: `refused_wait` seconds)."""

    last: Last
    attempts: int
    transient: bool
    refused_wait: float | None = None

    @property
    def response(self) -> httpx.Response | None:
        return None if isinstance(self.last, Exception) else self.last


class Retrying:
    """Requests over an injected `httpx.Client` under a RetryPolicy (`sleep`: time.sleep)."""

    def __init__(
        self,
        http: httpx.Client,
        policy: RetryPolicy = RetryPolicy(),
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.http, self.policy, self.sleep = http, policy, sleep

    def request(
        self,
        method: str,
        url: str,
        *,
        transient: Retryable | None = None,
        before: Callable[[], None] | None = None,
        **kwargs: Any,
    ) -> Outcome:
        """Send until the Outcome is decided; `before()` runs before every attempt (it may
        raise to stop), `transient(response)` overrides the policy's status set."""
        for attempt in count():
            if before is not None:
                before()
            step = self.policy.decide(self._once(method, url, kwargs), attempt, transient)
            if isinstance(step, Outcome):
                return step
            self.sleep(step)
        raise AssertionError("unreachable: count() never ends")

    def _once(self, method: str, url: str, kwargs: dict[str, Any]) -> Last:
        import httpx

        try:
            return self.http.request(method, url, timeout=self.policy.timeout, **kwargs)
        except httpx.TransportError as exc:
            return exc


class AsyncRetrying:
    """The same over an `httpx.AsyncClient` (`sleep`: asyncio.sleep)."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        policy: RetryPolicy = RetryPolicy(),
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ):
        self.http, self.policy, self.sleep = http, policy, sleep

    async def request(
        self,
        method: str,
        url: str,
        *,
        transient: Retryable | None = None,
        before: Callable[[], None] | None = None,
        **kwargs: Any,
    ) -> Outcome:
        for attempt in count():
            if before is not None:
                before()
            step = self.policy.decide(await self._once(method, url, kwargs), attempt, transient)
            if isinstance(step, Outcome):
                return step
            await self.sleep(step)
        raise AssertionError("unreachable: count() never ends")

    async def _once(self, method: str, url: str, kwargs: dict[str, Any]) -> Last:
        import httpx

        try:
            return await self.http.request(method, url, timeout=self.policy.timeout, **kwargs)
        except httpx.TransportError as exc:
            return exc


def retry_after(headers: Mapping[str, str]) -> float:
    """Seconds a `Retry-After` header asks for: delta-seconds, or an HTTP date minus the
    response's `Date`; never negative. -1.0 when absent or unreadable (then: backoff)."""
    value = headers.get("retry-after")
    if value is None:
        return -1.0
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(
            0.0,
            (parsedate_to_datetime(value) - parsedate_to_datetime(headers["date"])).total_seconds(),
        )
    except (KeyError, TypeError, ValueError, IndexError):
        return -1.0


# -- credentials out of every URL we print, log, store or raise ----------------------------------
_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^/?#@:\s]*(?::\S*)?)@")
_PAIR = re.compile(
    r"(?P<lead>(?:^|[?&;\s,:(\'\"]))(?P<key>[A-Za-z_][A-Za-z0-9_.-]*)=(?P<value>[^&#;?\s,\'\")\\]*)"
)
_SECRET_NAMES = frozenset(
    {
        "key",
        "apikey",
        "api_key",
        "token",
        "secret",
        "password",
        "passwd",
        "pwd",
        "pass",
        "auth",
        "authorization",
        "sig",
        "signature",
        "bearer",
        "credential",
        "credentials",
        "session",
        "sessionid",
        "code",
    }
)
_SECRET_ENDINGS = (
    "_key",
    "apikey",
    "token",
    "secret",
    "password",
    "passwd",
    "credential",
    "credentials",
)
_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
_PLACEHOLDERS = frozenset({"", "value", "val", "variable", "var", "name", "x"})
MASK = "***"


def variable_name(text: str) -> bool:
    """Whether `text` reads as an environment variable's name (OPENAI_API_KEY, MY_KEY), not as a
    key pasted in its place (sk-…, a long upper-case token with digits and no underscore)."""
    token_like = len(text) >= 16 and "_" not in text.strip("_") and any(c.isdigit() for c in text)
    return _ENV_NAME.fullmatch(text) is not None and not token_like


def has_userinfo(url: str) -> bool:
    """Whether a URL carries `user[:password]@` before its host."""
    return _USERINFO.search(url) is not None


def credential_key(name: str) -> bool:
    """Whether a query / key=value name looks like it carries a credential (api_key, token,
    access_token, secret, password, key, X-Api-Key …); `key_env` (a variable's name) does not."""
    norm = name.lower().replace("-", "_").replace(".", "_")
    return norm in _SECRET_NAMES or norm.endswith(_SECRET_ENDINGS)


def credential_keys(url: str) -> list[str]:
    """The credential-looking keys of a URL's query string, in order."""
    from urllib.parse import parse_qsl, urlsplit

    query = urlsplit(url).query
    return [k for k, _ in parse_qsl(query, keep_blank_values=True) if credential_key(k)]


def redact(text: object) -> str:
    """`text` (a URL, a message holding URLs, a libpq key=value string, a forecaster spec) with
    every password, userinfo and credential-looking key's value replaced by `***` (and a
    `key_env=` value that is not an environment variable's name: a key pasted there)."""
    text = _USERINFO.sub(lambda m: m.group("scheme") + MASK + "@", str(text))
    return _PAIR.sub(_masked, text)


def redacted(value: Any, mask: Callable[[str], str] = lambda text: text) -> Any:
    """Every text inside a JSON-like value (keys included) as `redact(mask(text))`; lists and
    tuples come back as lists."""
    if isinstance(value, str):
        return redact(mask(value)) if value else value
    if isinstance(value, Mapping):
        return {redacted(str(k), mask): redacted(v, mask) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redacted(v, mask) for v in value]
    return value


def _masked(m: re.Match[str]) -> str:
    key, value = m.group("key"), m.group("value")
    secret = credential_key(key) or (key == "key_env" and not variable_name(value))
    placeholder = (
        value in ("", MASK) or value.lower().strip(".…") in _PLACEHOLDERS
    )  # prose: "key=value"
    return f"{m.group('lead')}{key}={MASK}" if secret and not placeholder else m.group(0)


_FLAG = re.compile(r"-{1,2}(?P<name>[A-Za-z][A-Za-z0-9_.-]*)(?:=(?P<value>.*))?")


def carried_credential(key: str, value: object) -> str | None:
    """What credential a spec's `key=value` carries, described without its value, or None: a key
    named like a credential (`api_key=…`, `token=…`: a plugin's parameter); a URL
    with `user:password@` or a credential-looking query key; a `…key_env` / `pass_env` value that
    is not an environment variable's name; in a command line (any value with spaces, `cmd=`), an
    argument `--api-key VALUE`, `--token=VALUE` or `API_KEY=VALUE`, or such a URL. A `$NAME` value
    is a reference, not a key (no shell is run, so it reaches a program as written)."""
    text = str(value)
    if credential_key(key) and text and not text.startswith("$"):
        return f"a credential as the value of {key}="
    if key.endswith("key_env") or key == "pass_env":
        names = text.split("+") if key == "pass_env" else [text]
        if not all(variable_name(n) for n in names):
            return f"{key}: a value that is not an environment variable's name (a key itself?)"
        return None
    for word in _words(text):
        found = _url_credential(word) or _argument_credential(word)
        if found:
            return found
    return _flag_value_credential(_words(text))


def _words(text: str) -> list[str]:
    import shlex

    try:
        return shlex.split(text)
    except ValueError:  # an unbalanced quote: the words as written
        return text.split()


def _url_credential(word: str) -> str | None:
    if "://" not in word:
        return None
    if has_userinfo(word):
        return "a URL with credentials before its host"
    keys = credential_keys(word)
    return f"a URL with a credential in its query ({', '.join(keys)}=…)" if keys else None


def _argument_credential(word: str) -> str | None:
    """`--api-key=VALUE` or `API_KEY=VALUE` (an environment assignment on a command line)."""
    flag = _FLAG.fullmatch(word)
    name, value = (flag.group("name"), flag.group("value")) if flag else word.partition("=")[::2]
    if value and credential_key(name) and not value.startswith("$"):
        return f"a credential on the command line ({word.partition('=')[0]}=…)"
    return None


def _flag_value_credential(words: list[str]) -> str | None:
    """`--api-key VALUE`: a credential-named flag followed by its value."""
    for flag, value in zip(words, words[1:], strict=False):
        match = _FLAG.fullmatch(flag)
        if (
            match
            and match.group("value") is None
            and credential_key(match.group("name"))
            and not value.startswith(("-", "$"))
        ):
            return f"a credential on the command line ({flag} …)"
    return None
