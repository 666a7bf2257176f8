"""Forecaster specs as text (`name:key=value,…`, a run qualifier `spec@run` when runs are
combined): parsed one way for the registry that builds forecasters and for the analyses that
pair a forecaster with its twin. Pure; imports nothing from hindcast."""

from __future__ import annotations


def split_spec(spec: str) -> tuple[str, dict] | None:
    """(name, parameters with values as int, then float, then text), or None for a spec whose
    parameters are not all `key=value`."""
    name, _, rest = spec.strip().partition(":")
    params = {}
    for item in filter(None, rest.split(",")):
        key, sep, value = item.partition("=")
        if not sep or not key:
            return None
        params[key.strip()] = spec_value(value.strip())
    return name.strip(), params


def run_qualified(spec: str) -> tuple[str, str]:
    """`spec@run` (how combined runs qualify a name found in several) → (spec,
    run); else (spec, "")."""
    head, sep, run = spec.strip().rpartition("@")
    plain = sep and run and not any(c in run for c in ",=:/#")
    return (head, run) if plain else (spec.strip(), "")


def spec_value(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text
