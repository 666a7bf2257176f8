"""ReplaySpec: the one schema of a sweep, whichever way it is given.

Equal specs over the same frozen inputs are the same run: its id is the hash of the
identity below, so re-running a spec resumes it.

One name per concept: a field of `ReplaySpec` is the key of a flat mapping
(`spec_from_mapping`, `hindcast.sweep(**settings)`), the key in its TOML table and, with
dashes, its `hindcast sweep` flag (`max_cost` ↔ `--max-cost`); the few flags named
otherwise are in FLAGS. The TOML layout groups the fields in tables (LAYOUT; every key
optional; CLI flags override the file; the service's `[[sweeps]]` use the same tables as
`[sweeps.markets]` …):

    [markets]   store, version, ids, topics, resolved_after, resolved_before, min_volume, limit, exclude
    [archive]   root (the field `archive`), snapshot, vector_search ("exact" | "approx"), nprobe
    [cutoffs]   fractions, offsets (["1d", "7d"]), at (ISO instants), hindcast_rule (bool)
    [[forecasters]]  spec = "zero-shot:model=local", markets = 6   (fields `forecasters`, `subsets`)
    [run]       repeats, seed, concurrency, max_failures, retry_failed, max_cost, max_tokens, breaker_threshold

Every value is checked by the model itself (a pydantic dataclass), however the spec is
built; an unknown key is refused with the nearest known name, naming the input.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import tomllib
from datetime import date, datetime, timedelta
from pathlib import Path

from pydantic import (
    ConfigDict,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.dataclasses import dataclass
from pydantic_core import ArgsKwargs

from hindcast.errors import ConfigError, HindcastError
from hindcast.replay.cutoffs import DEFAULT_FRACTIONS, check_fraction
from hindcast.timeutil import iso, parse_utc, require_aware

DEFAULT_FORECASTERS = ("market", "constant", "base-rate")
# `hindcast sweep` with no forecaster: the baselines everywhere, and the embedded 135M local
# model (a pipeline check, not a forecaster) on a few markets so the default run stays short.
LOCAL_ZERO_SHOT = "zero-shot:model=local"
LOCAL_RETRIEVAL = "retrieval-agent:model=local,rounds=1"
SAMPLE_FORECASTERS = (*DEFAULT_FORECASTERS, LOCAL_ZERO_SHOT, LOCAL_RETRIEVAL)
SAMPLE_SUBSETS = ((LOCAL_ZERO_SHOT, 3), (LOCAL_RETRIEVAL, 1))
_OFFSET = re.compile(r"^(\d+)([hdw])$")
_UNITS = {"h": "hours", "d": "days", "w": "weeks"}
VECTOR_SEARCH = ("exact", "approx")
EXCLUSIONS = (
    "disputed",
    "rules-updated",
)  # `exclude`: the source says the market was disputed / its rules updated
MAPPING = "invalid sweep spec"  # how an error names a spec given as a mapping or as fields


@dataclass(frozen=True, config=ConfigDict(extra="forbid", arbitrary_types_allowed=True))
class ReplaySpec:
    store: Path  # the market store
    version: str | None = None  # its version id (None: LATEST)
    ids: tuple[str, ...] = ()  # market ids (empty: every market the filters keep)
    topics: tuple[str, ...] = ()
    resolved_after: datetime | None = None
    resolved_before: datetime | None = None
    min_volume: float | None = None
    limit: int | None = None
    exclude: tuple[
        str, ...
    ] = ()  # market classes left out: "disputed", "rules-updated" (EXCLUSIONS)
    forecasters: tuple[str, ...] = DEFAULT_FORECASTERS
    subsets: tuple[tuple[str, int], ...] = ()  # (forecaster spec, number of markets)
    archive: Path | None = None  # the archive root
    snapshot: str | None = None
    vector_search: str = (
        "exact"  # "approx": closed months through their approximate index (recall recorded)
    )
    nprobe: int | None = (
        None  # lists probed per closed month in approx mode (None: the index's default)
    )
    fractions: tuple[float, ...] = DEFAULT_FRACTIONS
    offsets: tuple[str, ...] = ()
    at: tuple[datetime, ...] = ()  # explicit cutoff instants
    hindcast_rule: bool = False
    repeats: int = 1
    seed: int = 0
    concurrency: int = 8
    max_failures: int | None = None
    # run integrity: none of these is part of the run's identity (they change how, not what)
    retry_failed: bool = False  # ask again for stored forecast failures (the old attempt is kept)
    max_cost: float | None = None  # dollars (model price table); stop scheduling once reached
    max_tokens: int | None = None  # prompt + completion tokens; stop scheduling once reached
    breaker_threshold: int = (
        5  # consecutive infrastructure failures on one endpoint that stop the run
    )

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data, info: ValidationInfo):
        keys = (data.kwargs or {}) if isinstance(data, ArgsKwargs) else data
        if isinstance(keys, dict):
            _only(keys, FIELDS, _where(info)[0], "spec key")
        return data

    @field_validator("*", mode="before")
    @classmethod
    def _field(cls, value, info: ValidationInfo):
        return checked(info.field_name, value, *_where(info))

    @model_validator(mode="after")
    def _whole(self):
        _require(bool(self.forecasters), "a sweep needs at least one forecaster")
        _require(len(set(self.forecasters)) == len(self.forecasters), "a forecaster is named twice")
        _require(
            all(name in self.forecasters and n >= 1 for name, n in self.subsets),
            "a forecaster subset names a forecaster that is not in the sweep, or a size below 1",
        )
        _require(
            self.repeats >= 1 and self.concurrency >= 1,
            "repeats and concurrency must be at least 1",
        )
        _require(
            bool(self.fractions or self.offsets or self.at or self.hindcast_rule),
            "the sweep has no cutoff",
        )
        _require(
            self.nprobe is None or self.vector_search == "approx",
            "nprobe applies only to vector_search approx",
        )
        return self

    @property
    def subset_sizes(self) -> dict[str, int]:
        return dict(self.subsets)

    @staticmethod
    def flag(key: str) -> str:
        """The `hindcast sweep` flag of a field: `--` and its name with dashes, but for FLAGS."""
        return FLAGS.get(key, "--" + key.replace("_", "-"))


FIELDS = tuple(f.name for f in dataclasses.fields(ReplaySpec))
FLAGS = {
    "version": "--store-version",
    "ids": "--market",
    "topics": "--topic",  # the flags not named
    "forecasters": "--forecaster",
    "subsets": "--subset",
}  # after their field


def _where(info: ValidationInfo) -> tuple[str, bool]:
    """The input an error names, and whether to name each field by its flag too."""
    context = info.context or {}
    return context.get("where", MAPPING), context.get("flags", False)


def parse_offset(text: str) -> timedelta:
    """`7d` → 7 days before the effective resolution (units h, d, w)."""
    match = _OFFSET.match(text.strip())
    if not match or int(match.group(1)) == 0:
        raise ConfigError(
            f"offset {text!r}: expected a positive number and a unit h, d or w, e.g. 7d"
        )
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


def run_identity(
    spec: ReplaySpec, store_version: str, market_ids: list[str], snapshot_id: str | None
) -> dict:
    """What makes a run this run: the frozen inputs and the schedule, not paths or concurrency."""
    return (
        {
            "store_version": store_version,
            "snapshot": snapshot_id,
            "markets": sorted(market_ids),
            "forecasters": list(spec.forecasters),
            "subsets": sorted(map(list, spec.subsets)),
            "fractions": list(spec.fractions),
            "offsets": list(spec.offsets),
            "instants": [iso(t) for t in spec.at],
            "hindcast_rule": spec.hindcast_rule,
            "repeats": spec.repeats,
            "seed": spec.seed,
        }
        | _search_identity(spec)
        | ({"exclude": sorted(spec.exclude)} if spec.exclude else {})
    )


def _search_identity(spec: ReplaySpec) -> dict:
    """How vectors are searched, when not the default exact scan (so exact runs keep their ids)."""
    if spec.vector_search == "exact":
        return {}
    return {"vector_search": spec.vector_search, "nprobe": spec.nprobe}


def run_id(identity: dict) -> str:
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return "r-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


# -- the TOML layout: each table, its keys and the field each key fills ------------------------
LAYOUT = {
    "markets": {
        k: k
        for k in (
            "store",
            "version",
            "ids",
            "topics",
            "resolved_after",
            "resolved_before",
            "min_volume",
            "limit",
            "exclude",
        )
    },
    "archive": {
        "root": "archive",
        "snapshot": "snapshot",
        "vector_search": "vector_search",
        "nprobe": "nprobe",
    },
    "cutoffs": {k: k for k in ("fractions", "offsets", "at", "hindcast_rule")},
    "run": {
        k: k
        for k in (
            "repeats",
            "seed",
            "concurrency",
            "max_failures",
            "retry_failed",
            "max_cost",
            "max_tokens",
            "breaker_threshold",
        )
    },
}
FORECASTER_KEYS = {"spec": "forecasters", "markets": "subsets"}  # one [[forecasters]] entry
SECTIONS = {table: tuple(keys) for table, keys in LAYOUT.items()}


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
    """The sweep spec layout ([markets] [archive] [cutoffs] [[forecasters]] [run]) → fields;
    paths relative to `base`. `where` names the input in every error; `prefix` the tables'
    place in an enclosing file (the service config's `sweeps.`)."""
    _only(data, tables, where, "table", f"[{prefix}{{}}]")
    flat = {}
    for name, keys in LAYOUT.items():
        section = _section(data, prefix + name, data.get(name, {}), where)
        _only(section, keys, where, "key", suffix=f" in [{prefix}{name}]")
        flat.update({keys[k]: v for k, v in section.items()})
    for key in ("store", "archive"):  # relative to the file, wherever it is run from
        if isinstance(flat.get(key), str):
            flat[key] = base / flat[key]
    if "forecasters" in data:
        flat.update(_forecasters(data["forecasters"], where, prefix))
    check_values(flat, where)
    return flat


def _forecasters(entries, where: str, prefix: str) -> dict:
    _require(
        isinstance(entries, list) and all(isinstance(e, dict) for e in entries),
        f"{where}: [[{prefix}forecasters]] must be an array of tables",
    )
    for number, entry in enumerate(entries, start=1):
        label = f"{where}: [[{prefix}forecasters]] entry {number}"
        _only(entry, FORECASTER_KEYS, label, "key")
        _require("spec" in entry, f'{label} has no spec = "…" (e.g. spec = "constant:p=0.3")')
    subsets = [(e["spec"], e["markets"]) for e in entries if "markets" in e]
    return {
        "forecasters": [e["spec"] for e in entries],
        **({"subsets": subsets} if subsets else {}),
    }


def spec_from_mapping(values: dict, where: str = MAPPING) -> ReplaySpec:
    """Build a spec from flat keys (the field names; None means unset); unknown keys and
    wrong types are an error, each key named by its `hindcast sweep` flag too."""
    values = {k: v for k, v in values.items() if v is not None}
    check_values(values, where, flags=True)
    _require("store" in values, f"{where}: no market store (store, {ReplaySpec.flag('store')})")
    try:
        return _ADAPTER.validate_python(values, context={"where": where, "flags": True})
    except ValidationError as exc:  # a shape the checks let through (none is known)
        raise ConfigError(f"{where}: {_first_error(exc)}") from exc


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(map(str, error['loc']))}: {error['msg']}"


# -- value checks: what each field must be, judged alone ---------------------------------------
def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _is_text(x) -> bool:
    return isinstance(x, str) and x.strip() != ""


def _is_path(x) -> bool:
    return isinstance(x, Path) or _is_text(x)


def _is_instant(x) -> bool:
    return isinstance(x, (str, date))  # datetime is a date; parsed (and refused if naive) later


def _list_of(check):
    return lambda x: isinstance(x, (list, tuple)) and all(check(i) for i in x)


def _is_subset(x) -> bool:
    return (
        isinstance(x, (list, tuple))
        and len(x) == 2
        and _is_text(x[0])
        and _is_int(x[1])
        and x[1] >= 1
    )


_CHECKS = {  # field → (test, what it must be)
    "store": (_is_path, "a path"),
    "version": (_is_text, "a version id (text)"),
    "ids": (_list_of(_is_text), "a list of market ids"),
    "topics": (_list_of(_is_text), "a list of topics"),
    "resolved_after": (_is_instant, "a date or ISO instant"),
    "resolved_before": (_is_instant, "a date or ISO instant"),
    "min_volume": (lambda x: _is_number(x) and x >= 0, "a number ≥ 0"),
    "limit": (lambda x: _is_int(x) and x >= 1, "an integer ≥ 1"),
    "exclude": (_list_of(lambda x: x in EXCLUSIONS), f"a list of {' and '.join(EXCLUSIONS)}"),
    "forecasters": (_list_of(_is_text), "a list of forecaster specs"),
    "subsets": (_list_of(_is_subset), "a list of (forecaster spec, markets ≥ 1)"),
    "archive": (_is_path, "a path"),
    "snapshot": (_is_text, "a snapshot id (text)"),
    "vector_search": (lambda x: x in VECTOR_SEARCH, "exact or approx"),
    "nprobe": (lambda x: _is_int(x) and x >= 1, "an integer ≥ 1"),
    "fractions": (_list_of(_is_number), "a list of numbers"),
    "offsets": (_list_of(_is_text), 'a list like ["1d", "7d"]'),
    "at": (_list_of(_is_instant), "a list of ISO instants"),
    "hindcast_rule": (lambda x: isinstance(x, bool), "true or false"),
    "repeats": (lambda x: _is_int(x) and x >= 1, "an integer ≥ 1"),
    "seed": (_is_int, "an integer"),
    "concurrency": (lambda x: _is_int(x) and x >= 1, "an integer ≥ 1"),
    "max_failures": (lambda x: _is_int(x) and x >= 0, "an integer ≥ 0"),
    "retry_failed": (lambda x: isinstance(x, bool), "true or false"),
    "max_cost": (lambda x: _is_number(x) and x >= 0, "a number of dollars ≥ 0"),
    "max_tokens": (lambda x: _is_int(x) and x >= 1, "an integer ≥ 1"),
    "breaker_threshold": (lambda x: _is_int(x) and x >= 1, "an integer ≥ 1"),
}
_OPTIONAL = {f.name for f in dataclasses.fields(ReplaySpec) if f.default is None}
_TUPLES = {"ids", "topics", "forecasters", "offsets", "exclude"}
assert (
    set(_CHECKS)
    == set(FIELDS)
    == {f for keys in LAYOUT.values() for f in keys.values()} | {*FORECASTER_KEYS.values()}
)


def checked(key: str, value, where: str = MAPPING, flags: bool = False):
    """One field's value checked alone (type, then offsets, fractions, instants, forecaster
    names) and in the field's own type; errors name `where` and the field (and its flag)."""
    if value is None and key in _OPTIONAL:
        return None
    _check_type(key, value, where, flags)
    _check_value(key, value, where, flags)
    return _converted(key, value)


def check_values(values: dict, where: str, flags: bool = False) -> None:
    """Every key known (else the nearest known name is suggested), of its type, and every
    value that can be judged alone valid (offsets, fractions, instants, forecaster lists);
    for a part of a spec (a file before the flags over it). With `flags`, each key is also
    named by its `hindcast sweep` flag."""
    _only(values, FIELDS, where, "spec key")
    for key, value in values.items():
        if value is not None:
            _check_type(key, value, where, flags)
    for key, value in values.items():
        if value is not None:
            _check_value(key, value, where, flags)


def _named(key: str, flags: bool) -> str:
    return f"{key} ({ReplaySpec.flag(key)})" if flags else key


def _check_type(key: str, value, where: str, flags: bool) -> None:
    test, wanted = _CHECKS[key]
    _require(test(value), f"{where}: {_named(key, flags)} must be {wanted}, got {value!r}")


def _check_value(key: str, value, where: str, flags: bool) -> None:
    try:
        _check_alone({key: value})
    except HindcastError as exc:  # CutoffError for a fraction, ConfigError for the rest
        raise ConfigError(f"{where}: {_named(key, flags)}: {exc}") from exc


def _converted(key: str, value):
    """A checked value in the field's type (paths, tuples, aware instants, float fractions)."""
    if key in ("store", "archive"):
        return Path(value)
    if key in ("resolved_after", "resolved_before"):
        return _time(value)
    if key == "at":
        return tuple(_time(t) for t in value)
    if key == "fractions":
        return tuple(float(f) for f in value)
    if key == "subsets":
        return tuple((str(a), int(b)) for a, b in value)
    return tuple(value) if key in _TUPLES else value


def _check_alone(values: dict) -> None:
    for key in ("resolved_after", "resolved_before"):
        _instant_ok(key, values.get(key))
    for instant in values.get("at") or ():
        _instant_ok("at", instant)
    for offset in values.get("offsets") or ():
        parse_offset(offset)
    for fraction in values.get("fractions") or ():
        check_fraction(fraction)
    forecasters = values.get("forecasters")
    if forecasters is not None:
        _require(bool(forecasters), "a sweep needs at least one forecaster")
        twice = sorted({f for f in forecasters if list(forecasters).count(f) > 1})
        _require(not twice, f"forecaster {', '.join(twice)} is named twice")
        for spec in forecasters:
            _known_forecaster(spec)


def _known_forecaster(spec: str) -> None:
    """The forecaster a spec names exists (built-in or plugin); its parameters are checked
    when it is built."""
    from hindcast.forecasters import registry

    name, _ = registry.parse_spec(spec)
    known = registry.names()
    _require(name in known, f"unknown forecaster {name!r} in {spec!r}{did_you_mean(name, known)}")


def _only(table: dict, allowed, where: str, kind: str, shape: str = "{}", suffix: str = "") -> None:
    """Refuse the first unknown key, naming the nearest allowed one (`shape` formats names)."""
    for key in table:
        if key not in allowed:
            raise ConfigError(
                f"{where}: unknown {kind} {shape.format(key)}{suffix}{did_you_mean(key, allowed, shape)}"
            )


def did_you_mean(key: str, allowed, shape: str = "{}") -> str:
    """' (did you mean X?)' for the closest allowed name, else the list of them."""
    import difflib

    close = difflib.get_close_matches(str(key), sorted(allowed), n=1, cutoff=0.6)
    if close:
        return f" (did you mean {shape.format(close[0])}?)"
    return f" (known: {', '.join(shape.format(a) for a in sorted(allowed))})"


def _section(data: dict, label: str, section, where: str) -> dict:
    _require(isinstance(section, dict), f"{where}: [{label}] must be a table")
    return section


def _instant_ok(key: str, value) -> None:
    try:
        _time(value)
    except (ValueError, OverflowError) as exc:
        raise ConfigError(f"{value!r} cannot be read as an instant ({exc})") from exc


def _time(value):
    if value is None:
        return None
    return require_aware(value) if isinstance(value, datetime) else parse_utc(str(value))


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ConfigError(message)


_ADAPTER = TypeAdapter(ReplaySpec)
