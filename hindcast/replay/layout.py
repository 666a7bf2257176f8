"""The TOML layout of a sweep spec: each table, its keys and the field each key fills.

    [markets]   store, version, ids, topics, resolved_after, resolved_before, min_volume, limit,
                exclude
    [archive]   root (the field `archive`), snapshot, vector_search ("exact" | "approx"), nprobe,
                ray (a Ray address: the archive searched as month shards on that cluster)
    [cutoffs]   fractions, offsets (["1d", "7d"]), at (ISO instants), hindcast_rule (bool)
    [[forecasters]]  spec = "zero-shot:model=local", markets = 6   (fields `forecasters`, `subsets`)
    [run]       repeats, seed, concurrency, max_failures, retry_failed, max_cost, max_tokens,
                breaker_threshold

Every table and key is optional; CLI flags override the file; the service's `[[sweeps]]` use
the same tables as `[sweeps.markets]` …. A misspelled table or key is an error naming the
nearest known name, never ignored.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from pathlib import Path

from hindcast.errors import ConfigError, HindcastError
from hindcast.replay.spec import FIELDS, check_values, did_you_mean

_KEYS = {
    "markets": (
        "store",
        "version",
        "ids",
        "topics",
        "resolved_after",
        "resolved_before",
        "min_volume",
        "limit",
        "exclude",
    ),
    "cutoffs": ("fractions", "offsets", "at", "hindcast_rule"),
    "run": (
        "repeats",
        "seed",
        "concurrency",
        "max_failures",
        "retry_failed",
        "max_cost",
        "max_tokens",
        "breaker_threshold",
    ),
}
LAYOUT = {  # table → {key: the field it fills}
    "markets": {k: k for k in _KEYS["markets"]},
    "archive": {
        "root": "archive",
        "snapshot": "snapshot",
        "vector_search": "vector_search",
        "nprobe": "nprobe",
        "ray": "ray",
    },
    "cutoffs": {k: k for k in _KEYS["cutoffs"]},
    "run": {k: k for k in _KEYS["run"]},
}
FORECASTER_KEYS = {"spec": "forecasters", "markets": "subsets"}  # one [[forecasters]] entry
SECTIONS = {table: tuple(keys) for table, keys in LAYOUT.items()}
assert sorted(FIELDS) == sorted(
    [f for keys in LAYOUT.values() for f in keys.values()] + list(FORECASTER_KEYS.values())
)


def load_toml(path: Path) -> dict:
    """A spec file as the flat mapping `spec_from_mapping` takes; every table, key and value
    is checked here, naming the file (a misspelled table is an error, never ignored)."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"spec file {path}: {exc}") from exc
    return flatten_layout(data, Path(path).parent, f"spec file {path}")


def flatten_layout(
    data: dict,
    base: Path,
    where: str,
    tables: tuple[str, ...] = (*LAYOUT, "forecasters"),
    prefix: str = "",
) -> dict:
    """The sweep spec layout ([markets] [archive] [cutoffs] [[forecasters]] [run]) → fields
    (values as given, each checked); paths relative to `base`. `where` names the input in
    every error; `prefix` the tables' place in an enclosing file (the service config's
    `sweeps.`)."""
    refuse_unknown(data, tables, where, ("table", f"[{prefix}{{}}]", ""))
    flat = {}
    for name, keys in LAYOUT.items():
        section = data.get(name, {})
        _require(isinstance(section, dict), f"{where}: [{prefix + name}] must be a table")
        refuse_unknown(section, keys, where, ("key", "{}", f" in [{prefix}{name}]"))
        flat.update({keys[k]: v for k, v in section.items()})
    for key in ("store", "archive"):  # relative to the file, wherever it is run from
        if isinstance(flat.get(key), str):
            flat[key] = base / flat[key]
    if "forecasters" in data:
        flat.update(_forecasters(data["forecasters"], where, prefix))
    check_values(flat, where)
    return flat


def _forecasters(entries: list[dict], where: str, prefix: str) -> dict:
    _require(
        isinstance(entries, list) and all(isinstance(e, dict) for e in entries),
        f"{where}: [[{prefix}forecasters]] must be an array of tables",
    )
    for number, entry in enumerate(entries, start=1):
        label = f"{where}: [[{prefix}forecasters]] entry {number}"
        refuse_unknown(entry, FORECASTER_KEYS, label)
        _require("spec" in entry, f'{label} has no spec = "…" (e.g. spec = "constant:p=0.3")')
    subsets = [(e["spec"], e["markets"]) for e in entries if "markets" in e]
    return {
        "forecasters": [e["spec"] for e in entries],
        **({"subsets": subsets} if subsets else {}),
    }


def refuse_unknown(
    table: dict,
    allowed: Iterable[str],
    where: str,
    naming: tuple[str, str, str] = ("key", "{}", ""),
    error: type[HindcastError] = ConfigError,
) -> None:
    """Refuse the first unknown key, naming the nearest allowed one. `naming`: (what a key is
    called, the shape that formats names, what follows the name)."""
    kind, shape, suffix = naming
    for key in table:
        if key not in allowed:
            raise error(
                f"{where}: unknown {kind} {shape.format(key)}{suffix}"
                f"{did_you_mean(key, allowed, shape)}"
            )


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ConfigError(message)
