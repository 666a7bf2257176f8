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

from collections.abc import Callable

from hindcast.errors import ConfigError, HindcastError
from hindcast.forecasters.base import Forecaster

Factory = Callable[..., Forecaster]
_FACTORIES: dict[str, Factory] = {}
ENTRY_POINT_GROUP = "hindcast.forecasters"


def register(name: str, factory: Factory) -> None:
    _FACTORIES[name] = factory


def names() -> list[str]:
    _load_plugins()
    return sorted(_FACTORIES)


def create(spec: str) -> Forecaster:
    """Build the forecaster a spec names; its `name` becomes the spec itself."""
    from hindcast.forecasters.llm import has_userinfo, redact

    if has_userinfo(spec):
        raise ConfigError(f"forecaster spec {redact(spec)!r}: credentials in a URL are refused (the spec is the "
                          "forecaster's name, stored and printed); put the key in an environment variable and "
                          "name it with key_env=VARIABLE")
    name, params = parse_spec(spec)
    _load_plugins()
    if name not in _FACTORIES:
        raise ConfigError(f"unknown forecaster {name!r} in {spec!r}; known: {', '.join(sorted(_FACTORIES))}")
    try:
        return _FACTORIES[name](name=spec, **params)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"forecaster spec {spec!r}: {exc}") from exc


def parse_spec(spec: str) -> tuple[str, dict]:
    name, _, rest = spec.strip().partition(":")
    params = {}
    for item in filter(None, rest.split(",")):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise HindcastError(f"forecaster spec {spec!r}: expected key=value, got {item!r}")
        params[key.strip()] = _value(value.strip())
    return name, params


def _value(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _load_plugins() -> None:
    from importlib.metadata import entry_points

    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name not in _FACTORIES:
            register(point.name, point.load())


def _builtins() -> None:
    from hindcast.forecasters import baselines, retrieval_agent, tool_agent, zero_shot

    register("market", baselines.MarketForecaster)
    register("constant", baselines.ConstantForecaster)
    register("base-rate", baselines.BaseRateForecaster)
    register("zero-shot", zero_shot.ZeroShotForecaster)
    register("retrieval-agent", retrieval_agent.RetrievalAgent)
    register("tool-agent", tool_agent.ToolAgent)


_builtins()
