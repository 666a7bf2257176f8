"""ReplaySpec: the one schema of a sweep, whichever way it is given.

One name per concept: a field of `ReplaySpec` is the key of a flat mapping
(`spec_from_mapping`, `hindcast.sweep(**settings)`), the key in its TOML table
(`hindcast.replay.layout`) and, with dashes, its `hindcast sweep` flag (`max_cost` ↔
`--max-cost`); the few flags named otherwise are in FLAGS. What makes a run this run is in
`hindcast.replay.identity`.

Every value is checked by pydantic from the field's constrained type, however the spec is
built, and parsed once; a field's `description` says what it must be. One translator
(`config_error`) turns pydantic's errors into the one-line ConfigError naming the input,
the key (and its flag), and, for an unknown key, the nearest known name.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic.dataclasses import dataclass
from pydantic_core import ArgsKwargs, PydanticCustomError

from hindcast import archive, forecasters
from hindcast.errors import ConfigError, HindcastError
from hindcast.replay.cutoffs import DEFAULT_FRACTIONS, check_fraction
from hindcast.timeutil import parse_utc, require_aware

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
# `exclude`: the source says the market was disputed / its rules updated
EXCLUSIONS = ("disputed", "rules-updated")
MAPPING = "invalid sweep spec"  # how an error names a spec given as a mapping or as fields
VALUE = "hindcast_value"  # the error type of a value of the right type that cannot be used


def parse_offset(text: str) -> timedelta:
    """`7d` → 7 days before the effective resolution (units h, d, w)."""
    match = _OFFSET.match(text.strip())
    if not match or int(match.group(1)) == 0:
        raise ConfigError(
            f"offset {text!r}: expected a positive number and a unit h, d or w, e.g. 7d"
        )
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


# -- the constrained types: the library checks the type and range, these the meaning ----------
def _ray_address(address: str) -> None:
    archive.distributed.check_address(address)


def _usable(check: Callable[[Any], object]) -> Callable[[Any], Any]:
    """A validator running `check` (which raises HindcastError) as a pydantic value error."""

    def validate(value: Any) -> Any:
        try:
            check(value)
        except (HindcastError, ValueError, OverflowError) as exc:
            raise PydanticCustomError(VALUE, "{message}", {"message": str(exc)}) from None
        return value

    return validate


def _listlike(value: Any) -> Any:
    """A list or a tuple (a set has no order; a string is not a list of one)."""
    if not isinstance(value, (list, tuple)):
        raise PydanticCustomError("list_type", "not a list")
    return value


def _path(value: Any) -> Any:
    if isinstance(value, str) and not value.strip():
        raise PydanticCustomError("path_type", "a blank path")
    return value


def _instant(value: object) -> datetime:
    """A date or ISO instant → an aware UTC datetime (a naive one is refused)."""
    if not isinstance(value, (str, date)):  # datetime is a date
        raise PydanticCustomError("instant_type", "not a date or ISO instant")
    try:
        return require_aware(value) if isinstance(value, datetime) else parse_utc(str(value))
    except (ValueError, OverflowError) as exc:
        message = f"{value!r} cannot be read as an instant ({exc})"
        raise PydanticCustomError(VALUE, "{message}", {"message": message}) from None


def _forecaster_list(specs: tuple[str, ...]) -> None:
    _require(bool(specs), "a sweep needs at least one forecaster")
    twice = sorted({f for f in specs if specs.count(f) > 1})
    _require(not twice, f"forecaster {', '.join(twice)} is named twice")
    for spec in specs:
        _known_forecaster(spec)


def _known_forecaster(spec: str) -> None:
    """The forecaster a spec names exists (built-in or plugin); its parameters are checked
    when it is built."""
    name, _ = forecasters.registry.parse_spec(spec)
    known = forecasters.registry.names()
    _require(name in known, f"unknown forecaster {name!r} in {spec!r}{did_you_mean(name, known)}")


def _wanted(text: str) -> Any:
    return Field(description=text)  # what a field must be: the error says so


_Seq = BeforeValidator(_listlike)
Text = Annotated[str, StringConstraints(strict=True, pattern=r"\S")]
Int = Annotated[int, Field(strict=True)]
AtLeast1 = Annotated[int, Field(strict=True, ge=1)]
Flag = Annotated[bool, Field(strict=True)]
Number = (
    Annotated[int, Field(strict=True)] | Annotated[float, Field(strict=True, allow_inf_nan=False)]
)
NonNegative = (
    Annotated[int, Field(strict=True, ge=0)]
    | Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)]
)
Instant = Annotated[datetime, PlainValidator(_instant)]
PathText = Annotated[Path, BeforeValidator(_path)]
Texts = Annotated[tuple[Text, ...], _Seq]
Offset = Annotated[Text, AfterValidator(_usable(parse_offset))]
Fraction = Annotated[Number, AfterValidator(_usable(check_fraction)), AfterValidator(float)]


@dataclass(frozen=True, config=ConfigDict(extra="forbid", arbitrary_types_allowed=True))
class ReplaySpec:
    store: Annotated[PathText, _wanted("a path")]  # the market store
    # its version id (None: LATEST)
    version: Annotated[Text | None, _wanted("a version id (text)")] = None
    # market ids (empty: every market the filters keep)
    ids: Annotated[Texts, _wanted("a list of market ids")] = ()
    topics: Annotated[Texts, _wanted("a list of topics")] = ()
    resolved_after: Annotated[Instant | None, _wanted("a date or ISO instant")] = None
    resolved_before: Annotated[Instant | None, _wanted("a date or ISO instant")] = None
    min_volume: Annotated[NonNegative | None, _wanted("a number ≥ 0")] = None
    limit: Annotated[AtLeast1 | None, _wanted("an integer ≥ 1")] = None
    # market classes left out: "disputed", "rules-updated" (EXCLUSIONS)
    exclude: Annotated[
        tuple[Literal["disputed", "rules-updated"], ...],
        _Seq,
        _wanted(f"a list of {' and '.join(EXCLUSIONS)}"),
    ] = ()
    forecasters: Annotated[
        Texts, AfterValidator(_usable(_forecaster_list)), _wanted("a list of forecaster specs")
    ] = DEFAULT_FORECASTERS
    # (forecaster spec, number of markets)
    subsets: Annotated[
        tuple[Annotated[tuple[Text, AtLeast1], _Seq], ...],
        _Seq,
        _wanted("a list of (forecaster spec, markets ≥ 1)"),
    ] = ()
    archive: Annotated[PathText | None, _wanted("a path")] = None  # the archive root
    snapshot: Annotated[Text | None, _wanted("a snapshot id (text)")] = None
    # "approx": closed months through their approximate index (recall recorded)
    vector_search: Annotated[Literal["exact", "approx"], _wanted("exact or approx")] = "exact"
    # lists probed per closed month in approx mode (None: the index's default)
    nprobe: Annotated[AtLeast1 | None, _wanted("an integer ≥ 1")] = None
    fractions: Annotated[tuple[Fraction, ...], _Seq, _wanted("a list of numbers")] = (
        DEFAULT_FRACTIONS
    )
    offsets: Annotated[tuple[Offset, ...], _Seq, _wanted('a list like ["1d", "7d"]')] = ()
    # explicit cutoff instants
    at: Annotated[tuple[Instant, ...], _Seq, _wanted("a list of ISO instants")] = ()
    hindcast_rule: Annotated[Flag, _wanted("true or false")] = False
    repeats: Annotated[AtLeast1, _wanted("an integer ≥ 1")] = 1
    seed: Annotated[Int, _wanted("an integer")] = 0
    concurrency: Annotated[AtLeast1, _wanted("an integer ≥ 1")] = 8
    max_failures: Annotated[
        Annotated[int, Field(strict=True, ge=0)] | None, _wanted("an integer ≥ 0")
    ] = None
    # run integrity: none of these is part of the run's identity (they change how, not what)
    # ask again for stored forecast failures (the old attempt is kept)
    retry_failed: Annotated[Flag, _wanted("true or false")] = False
    # dollars (model price table); stop scheduling once reached
    max_cost: Annotated[NonNegative | None, _wanted("a number of dollars ≥ 0")] = None
    # prompt + completion tokens; stop scheduling once reached
    max_tokens: Annotated[AtLeast1 | None, _wanted("an integer ≥ 1")] = None
    # consecutive infrastructure failures on one endpoint that stop the run
    breaker_threshold: Annotated[AtLeast1, _wanted("an integer ≥ 1")] = 5
    # the archive searched as month shards on this Ray cluster (the same results as one node)
    ray: Annotated[
        Text | None,
        AfterValidator(_usable(_ray_address)),
        _wanted("a Ray address: auto, local, HOST:PORT or ray://HOST:PORT"),
    ] = None

    @model_validator(mode="wrap")
    @classmethod
    def _one_line(cls, data: Any, handler: Any, info: ValidationInfo) -> Any:  # pydantic wrap
        """Any field's error as the one-line ConfigError naming the input (and the flag)."""
        try:
            return handler(data)
        except ValidationError as exc:
            context = info.context or {}
            where, flags = context.get("where", MAPPING), context.get("flags", False)
            raise config_error(exc.errors(), _given(data), where, flags) from None

    @model_validator(mode="after")
    def _whole(self) -> ReplaySpec:
        _require(
            all(name in self.forecasters for name, _ in self.subsets),
            "a forecaster subset names a forecaster that is not in the sweep, or a size below 1",
        )
        _require(
            bool(self.fractions or self.offsets or self.at or self.hindcast_rule),
            "the sweep has no cutoff",
        )
        _require(
            self.nprobe is None or self.vector_search == "approx",
            "nprobe applies only to vector_search approx",
        )
        _require(self.ray is None or self.archive is not None, "ray applies only with an archive")
        return self

    @property
    def subset_sizes(self) -> dict[str, int]:
        return dict(self.subsets)

    @staticmethod
    def flag(key: str) -> str:
        """The `hindcast sweep` flag of a field: `--` and its name with dashes, but for FLAGS."""
        return FLAGS.get(key, "--" + key.replace("_", "-"))


FIELDS = tuple(f.name for f in dataclasses.fields(ReplaySpec))
FLAGS = {  # the flags not named after their field
    "version": "--store-version",
    "ids": "--market",
    "topics": "--topic",
    "forecasters": "--forecaster",
    "subsets": "--subset",
}
_ADAPTER = TypeAdapter(ReplaySpec)
_INFO = ReplaySpec.__pydantic_fields__  # type: ignore[attr-defined]  # name → FieldInfo
_FIELD_ADAPTERS = {name: TypeAdapter(info.rebuild_annotation()) for name, info in _INFO.items()}


def spec_from_mapping(values: dict, where: str = MAPPING) -> ReplaySpec:
    """Build a spec from flat keys (the field names; None means unset); unknown keys and
    wrong types are an error, each key named by its `hindcast sweep` flag too."""
    values = {k: v for k, v in values.items() if v is not None}
    return _ADAPTER.validate_python(values, context={"where": where, "flags": True})


def check_values(values: dict, where: str, flags: bool = False) -> None:
    """A part of a spec (a file before the flags over it), each value checked alone in its
    field's type; the same errors as a whole spec's, naming `where`."""
    errors: list[Mapping[str, Any]] = []
    for key, value in values.items():
        if key not in _FIELD_ADAPTERS:
            errors.append({"type": "extra_forbidden", "loc": (key,)})
        elif value is not None:
            try:
                _FIELD_ADAPTERS[key].validate_python(value)
            except ValidationError as exc:
                errors += [{**e, "loc": (key, *e["loc"])} for e in exc.errors()]
    if errors:
        raise config_error(errors, values, where, flags)


# -- the one translator: pydantic's errors → one line naming the input and the key -------------
_UNKNOWN = ("extra_forbidden", "unexpected_keyword_argument")


@dataclasses.dataclass(frozen=True)
class Wording:
    """How `config_error` words a schema's errors: `wrong` shapes a type error, `known` are the
    keys an unknown one is matched against, `wanted(key)` says what a key must be, `kind` names
    a key, `error` is the error raised. The default words the sweep spec's; another schema (the
    service config) passes its own."""

    wrong: str = "{where}: {name} must be {wanted}, got {value!r}"
    known: Iterable[str] = FIELDS
    wanted: Callable[[str], str] = lambda key: _INFO[key].description
    kind: str = "spec key"
    error: type[HindcastError] = ConfigError


def config_error(
    errors: Sequence[Mapping[str, Any]],
    given: dict,
    where: str,
    flags: bool = False,
    wording: Wording | None = None,
) -> HindcastError:
    """The first of pydantic's `errors` (an unknown key, then a wrong type, then a value
    that cannot be used, then a missing key; in the order given) as one line: the input
    (`where`), the key (and, with `flags`, its `hindcast sweep` flag) and what it must be,
    or for an unknown key the nearest known name, worded by `wording` (the spec's default)."""
    w = wording or Wording()
    wrong, known, wanted, kind, error = w.wrong, w.known, w.wanted, w.kind, w.error
    order = list(given)

    def rank(e: Mapping[str, Any]) -> tuple[int, int]:
        missing = e["type"] == "missing" and len(e["loc"]) == 1  # a key, not an item in it
        kind_rank = 0 if e["type"] in _UNKNOWN else 3 if missing else 1
        kind_rank += e["type"] == VALUE
        key = e["loc"][0] if e["loc"] else None
        return kind_rank, order.index(key) if key in order else len(order)

    first = min(errors, key=rank)
    key = str(first["loc"][0]) if first["loc"] else ""
    name = f"{key} ({ReplaySpec.flag(key)})" if flags else key
    if first["type"] in _UNKNOWN:
        return error(f"{where}: unknown {kind} {key}{did_you_mean(key, known)}")
    if first["type"] == "missing" and len(first["loc"]) == 1:
        if key == "store":
            return error(f"{where}: no market store (store, {ReplaySpec.flag('store')})")
        return error(f"{where}: {name} is required")
    if first["type"] == VALUE:
        return error(f"{where}: {name}: {first['msg']}")
    return error(wrong.format(where=where, name=name, wanted=wanted(key), value=given.get(key)))


def _given(data: object) -> dict:
    """The values as given to the model (a mapping, or a dataclass call's arguments)."""
    if isinstance(data, ArgsKwargs):  # in the fields' order, as the checks run
        given = {**dict(zip(FIELDS, data.args or ())), **(data.kwargs or {})}
        return {
            k: given[k] for k in sorted(given, key=lambda k: FIELDS.index(k) if k in FIELDS else -1)
        }
    return data if isinstance(data, dict) else {}


def did_you_mean(key: str, allowed: Iterable[str], shape: str = "{}") -> str:
    """' (did you mean X?)' for the closest allowed name, else the list of them."""
    close = difflib.get_close_matches(str(key), sorted(allowed), n=1, cutoff=0.6)
    if close:
        return f" (did you mean {shape.format(close[0])}?)"
    return f" (known: {', '.join(shape.format(a) for a in sorted(allowed))})"


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ConfigError(message)
