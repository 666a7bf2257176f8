"""The spec of `hindcast.sweep`: a ReplaySpec as given, or one built from a mapping of spec keys or
a TOML file (the `hindcast sweep --spec` layout) with keyword settings laid over it."""

from __future__ import annotations

from collections.abc import Mapping
from os import PathLike
from pathlib import Path

from hindcast.errors import ConfigError
from hindcast.replay.layout import load_toml
from hindcast.replay.spec import ReplaySpec, spec_from_mapping


def replay_spec(
    spec: ReplaySpec | Mapping[str, object] | str | PathLike[str] | None,
    settings: dict,
    where: str = "hindcast.sweep",
) -> ReplaySpec:
    """A ReplaySpec from a ReplaySpec, a mapping or a TOML path, with `settings` over it."""
    if isinstance(spec, ReplaySpec):
        if settings:
            raise ConfigError(
                f"{where}: settings {', '.join(sorted(settings))} given with a ReplaySpec; "
                "pass a mapping or a TOML path to combine them"
            )
        return spec
    base = dict(load_toml(Path(spec)) if isinstance(spec, (str, PathLike)) else spec or {})
    values = {**base, **settings}
    if values.get("store") is None:
        raise ConfigError(
            f"{where} needs a market store: store=PATH (hindcast.sample('markets') is the "
            "shipped sample)"
        )
    return spec_from_mapping(values, where=where)
