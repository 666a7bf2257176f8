"""ReplaySpec: everything that defines a sweep, from CLI flags or a TOML file.

Equal specs over the same frozen inputs are the same run: its id is the hash of the
identity below, so re-running a spec resumes it.

TOML layout (every key optional; CLI flags override the file):

    [markets]   store, version, ids, topics, resolved_after, resolved_before, min_volume, limit
    [archive]   root, snapshot
    [cutoffs]   fractions, offsets (["1d", "7d"]), at (ISO instants), hindcast_rule (bool)
    [[forecasters]]  spec = "zero-shot:model=local", markets = 6   (markets: a subset size)
    [run]       repeats, seed, concurrency, max_failures, retry_failed, max_cost, max_tokens, breaker_threshold
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from hindcast.errors import HindcastError
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


@dataclass(frozen=True)
class ReplaySpec:
    markets: Path
    store_version: str | None = None
    market_ids: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    resolved_after: datetime | None = None
    resolved_before: datetime | None = None
    min_volume: float | None = None
    limit: int | None = None
    forecasters: tuple[str, ...] = DEFAULT_FORECASTERS
    subsets: tuple[tuple[str, int], ...] = ()  # (forecaster spec, number of markets)
    archive: Path | None = None
    snapshot: str | None = None
    fractions: tuple[float, ...] = DEFAULT_FRACTIONS
    offsets: tuple[str, ...] = ()
    instants: tuple[datetime, ...] = ()
    hindcast_rule: bool = False
    repeats: int = 1
    seed: int = 0
    concurrency: int = 8
    max_failures: int | None = None
    # run integrity: none of these is part of the run's identity (they change how, not what)
    retry_failed: bool = False  # ask again for stored forecast failures (the old attempt is kept)
    max_cost: float | None = None  # dollars (model price table); stop scheduling once reached
    max_tokens: int | None = None  # prompt + completion tokens; stop scheduling once reached
    breaker_threshold: int = 5  # consecutive infrastructure failures on one endpoint that stop the run

    def __post_init__(self) -> None:
        for f in self.fractions:
            check_fraction(f)
        for o in self.offsets:
            parse_offset(o)
        _require(bool(self.forecasters), "a sweep needs at least one forecaster")
        _require(len(set(self.forecasters)) == len(self.forecasters), "a forecaster is named twice")
        _require(all(name in self.forecasters and n >= 1 for name, n in self.subsets),
                 "a forecaster subset names a forecaster that is not in the sweep, or a size below 1")
        _require(self.repeats >= 1 and self.concurrency >= 1, "repeats and concurrency must be at least 1")
        _require(bool(self.fractions or self.offsets or self.instants or self.hindcast_rule), "the sweep has no cutoff")

    @property
    def subset_sizes(self) -> dict[str, int]:
        return dict(self.subsets)


def parse_offset(text: str) -> timedelta:
    """`7d` → 7 days before the effective resolution (units h, d, w)."""
    match = _OFFSET.match(text.strip())
    if not match or int(match.group(1)) == 0:
        raise HindcastError(f"offset {text!r}: expected a positive number and a unit h, d or w, e.g. 7d")
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


def run_identity(spec: ReplaySpec, store_version: str, market_ids: list[str], snapshot_id: str | None) -> dict:
    """What makes a run this run: the frozen inputs and the schedule, not paths or concurrency."""
    return {
        "store_version": store_version, "snapshot": snapshot_id, "markets": sorted(market_ids),
        "forecasters": list(spec.forecasters), "subsets": sorted(map(list, spec.subsets)),
        "fractions": list(spec.fractions), "offsets": list(spec.offsets),
        "instants": [iso(t) for t in spec.instants], "hindcast_rule": spec.hindcast_rule,
        "repeats": spec.repeats, "seed": spec.seed,
    }


def run_id(identity: dict) -> str:
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return "r-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def load_toml(path: Path) -> dict:
    """A spec file as the flat mapping `spec_from_mapping` takes."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise HindcastError(f"spec file {path}: {exc}") from exc
    flat = {**_section(data, "markets", path), **_section(data, "cutoffs", path), **_section(data, "run", path)}
    archive = _section(data, "archive", path)
    flat.update({"archive": archive.get("root"), "snapshot": archive.get("snapshot")})
    for key in ("store", "archive"):  # relative to the spec file, wherever it is run from
        if flat.get(key) is not None:
            flat[key] = Path(path).parent / flat[key]
    if "forecasters" in data:
        flat["forecasters"] = [f["spec"] for f in data["forecasters"]]
        flat["subsets"] = [(f["spec"], f["markets"]) for f in data["forecasters"] if "markets" in f]
    return {k: v for k, v in flat.items() if v is not None}


def spec_from_mapping(values: dict) -> ReplaySpec:
    """Build a spec from flat keys (TOML names); unknown keys are an error, not ignored."""
    unknown = set(values) - _KEYS
    if unknown:
        raise HindcastError(f"unknown spec key(s): {', '.join(sorted(unknown))}")
    v = dict(values)
    try:
        return ReplaySpec(
            markets=Path(v.pop("store")), store_version=v.pop("version", None),
            market_ids=tuple(v.pop("ids", ())), topics=tuple(v.pop("topics", ())),
            resolved_after=_time(v.pop("resolved_after", None)), resolved_before=_time(v.pop("resolved_before", None)),
            archive=Path(v.pop("archive")) if v.get("archive") else v.pop("archive", None),
            instants=tuple(_time(t) for t in v.pop("at", ())), **_plain(v))
    except (TypeError, ValueError) as exc:
        raise HindcastError(f"invalid sweep spec: {exc}") from exc


_KEYS = {"store", "version", "ids", "topics", "resolved_after", "resolved_before", "min_volume", "limit",
         "forecasters", "subsets", "archive", "snapshot", "fractions", "offsets", "at", "hindcast_rule",
         "repeats", "seed", "concurrency", "max_failures", "retry_failed", "max_cost", "max_tokens",
         "breaker_threshold"}


def _plain(v: dict) -> dict:
    tuples = {"forecasters", "fractions", "offsets"}
    out = {k: tuple(x) if k in tuples else x for k, x in v.items()}
    if "subsets" in out:
        out["subsets"] = tuple((str(a), int(b)) for a, b in out["subsets"])
    if "fractions" in out:
        out["fractions"] = tuple(float(f) for f in out["fractions"])
    return out


def _section(data: dict, name: str, path: Path) -> dict:
    section = data.get(name, {})
    if not isinstance(section, dict):
        raise HindcastError(f"spec file {path}: [{name}] must be a table")
    return section


def _time(value):
    if value is None:
        return None
    return require_aware(value) if isinstance(value, datetime) else parse_utc(str(value))


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise HindcastError(message)
