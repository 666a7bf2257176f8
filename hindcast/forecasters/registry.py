"""Forecaster specs → forecaster objects. Built-ins register exactly as a plugin would.

A spec is `name` or `name:key=value,key=value`, e.g. `constant:p=0.3`. Third-party
forecasters register a factory under the entry-point group `hindcast.forecasters`, or
call `register()` before a sweep.

A spec is a forecaster's name, stored with every forecast and printed in every
leaderboard, so a spec carrying credentials in a URL (`http://user:pass@host/…`) is
refused before anything is built (use `key_env=VARIABLE` for a key); error messages
show specs with any such credentials replaced by `***`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import dataclasses

from hindcast.errors import ConfigError, HindcastError
from hindcast.forecasters import (
    baselines,
    command,
    http_bot,
    retrieval_agent,
    tool_agent,
    zero_shot,
)
from hindcast.forecasters.base import Forecaster
from hindcast.forecasters.inspect_agent import InspectAgent  # Inspect AI loads when one is built
from hindcast.http import carried_credential, has_userinfo, redact
from hindcast.registry import Registry
from hindcast.specs import split_spec

Factory = Callable[..., Forecaster]
ENTRY_POINT_GROUP = "hindcast.forecasters"
_FACTORIES: Registry[Factory] = Registry(ENTRY_POINT_GROUP)
SPEC_TYPES = ("int", "float", "str", "bool")  # what a spec's key=value can set


def register(name: str, factory: Factory, origin: str = "registered") -> None:
    _FACTORIES.register(name, factory, origin)


def factory(name: str) -> Factory:
    """The factory registered under `name` (plugins included)."""
    _FACTORIES.load_plugins()
    if name not in _FACTORIES:
        raise ConfigError(f"unknown forecaster {name!r}; known: {', '.join(sorted(_FACTORIES))}")
    return _FACTORIES[name]


def describe() -> list[dict]:
    """Every registered forecaster, plugins included: name, origin, its doc's first line and
    the parameters a spec can set (`name:key=value,…`) with their types and defaults."""
    _FACTORIES.load_plugins()
    return [
        {
            "name": name,
            "origin": _FACTORIES.origin(name),
            "doc": _doc_line(made),
            "parameters": _parameters(made),
        }
        for name, made in sorted(_FACTORIES.items())
    ]


def _doc_line(made: Factory) -> str:
    import inspect

    doc = inspect.getdoc(made) or ""
    auto = doc.startswith(f"{getattr(made, '__name__', '')}(")  # a dataclass without a docstring
    return "" if auto else " ".join(doc.strip().split("\n\n")[0].split())  # the first paragraph


def _parameters(made: Factory) -> list[dict]:
    """A dataclass's init fields shown in its repr, else the signature's keyword parameters;
    `name` (the spec itself) and values no spec can write (clients, objects) left out."""
    import dataclasses
    import inspect

    if dataclasses.is_dataclass(made):
        found = [
            (f.name, f.type, _default(f)) for f in dataclasses.fields(made) if f.init and f.repr
        ]
    else:
        found = [
            (p.name, p.annotation, p.default)
            for p in inspect.signature(made).parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]
    rows = [
        {"name": n, "type": _type_name(t), "default": _plain(d)} for n, t, d in found if n != "name"
    ]
    return [r for r in rows if r["type"] in SPEC_TYPES or r["type"] == ""]


def _default(f: dataclasses.Field) -> object:
    import dataclasses

    if f.default is not dataclasses.MISSING:
        return f.default
    return f.default_factory() if f.default_factory is not dataclasses.MISSING else _REQUIRED


_REQUIRED = object()


def _type_name(annotation: object) -> str:
    import inspect

    if annotation is inspect.Parameter.empty:
        return ""
    text = (
        annotation
        if isinstance(annotation, str)
        else getattr(annotation, "__name__", str(annotation))
    )
    return text.replace(" | None", "").replace("Optional[", "").rstrip("]").strip()


def _plain(value: object) -> object:
    import inspect

    if value is _REQUIRED or value is inspect.Parameter.empty:
        return "(required)"
    return value if value is None or isinstance(value, (bool, int, float, str)) else repr(value)


def names() -> list[str]:
    return _FACTORIES.names()


def create(spec: str) -> Forecaster:
    """Build the forecaster a spec names; its `name` becomes the spec itself."""

    if has_userinfo(spec):
        raise ConfigError(
            f"forecaster spec {redact(spec)!r}: credentials in a URL are refused (the spec is the "
            "forecaster's name, stored and printed); put the key in an environment variable and "
            "name it with key_env=VARIABLE"
        )
    name, params = parse_spec(spec)
    _refuse_credentials(spec, params)
    _FACTORIES.load_plugins()
    if name not in _FACTORIES:
        raise ConfigError(
            f"unknown forecaster {name!r} in {redact(spec)!r}; known: "
            f"{', '.join(sorted(_FACTORIES))}"
        )
    try:
        return _FACTORIES[name](name=spec, **params)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"forecaster spec {redact(spec)!r}: {exc}") from exc


def _refuse_credentials(spec: str, params: dict) -> None:
    """Every parameter that can carry a URL, a command line or a variable's name is checked as a
    model endpoint is: a credential in one is refused, never echoed (the spec is the forecaster's
    name, stored and printed everywhere)."""

    for key, value in params.items():
        found = carried_credential(key, value)
        if found:
            raise ConfigError(
                f"forecaster spec {redact(spec.partition(':')[0])!r}, {key}=: {found} is refused "
                "(it would be stored with the forecaster's name and printed); put the key in an "
                "environment variable and name it with key_env=VARIABLE (or pass_env=VARIABLE "
                "for a command: bot)"
            )


def check(specs: Iterable[str]) -> None:
    """Build each spec once and drop it: a bad parameter (`policy=bogus`, `constant:p=2`, a
    malformed model URL, a key pasted as key_env) is refused before anything is written."""
    for spec in specs:
        create(spec)


def parse_spec(spec: str) -> tuple[str, dict]:
    parsed = split_spec(spec)
    if parsed is None:
        items = filter(None, spec.strip().partition(":")[2].split(","))
        bad = next(i for i in items if not all(i.partition("=")[:2]))
        raise HindcastError(
            f"forecaster spec {spec!r}: expected key=value, got {bad!r}"
        )  # redacted by HindcastError
    return parsed


def _builtins() -> None:
    for name, made in (
        ("market", baselines.MarketForecaster),
        ("constant", baselines.ConstantForecaster),
        ("base-rate", baselines.BaseRateForecaster),
        ("zero-shot", zero_shot.ZeroShotForecaster),
        ("retrieval-agent", retrieval_agent.RetrievalAgent),
        ("tool-agent", tool_agent.ToolAgent),
        ("command", command.CommandForecaster),
        ("http", http_bot.HttpForecaster),
    ):
        register(name, made, origin="built-in")

    register("inspect-agent", InspectAgent, origin="built-in")


_builtins()
