"""Frozen records. Raw payloads are parsed into these once, at the boundary."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, Literal

from hindcast.timeutil import require_aware

ResolutionStatus = Literal["yes", "no", "fifty-fifty", "ambiguous", "fractional"]
EditState = Literal["never", "at", "unknown"]


def _aware(obj: object, *names: str) -> None:
    for name in names:
        value = getattr(obj, name)
        if value is not None:
            object.__setattr__(obj, name, require_aware(value))


@dataclass(frozen=True, slots=True)
class PricePoint:
    """The YES price `p` known at instant `t`."""

    t: datetime
    p: float

    def __post_init__(self) -> None:
        _aware(self, "t")
        if not (math.isfinite(self.p) and 0.0 <= self.p <= 1.0):
            raise ValueError(f"price {self.p!r} outside [0, 1]")


@dataclass(frozen=True, slots=True)
class Market:
    """A market's text and metadata. Holds no outcome: this is what a forecaster may see."""

    id: str
    question: str
    description: str
    url: str = ""
    slug: str = ""
    topic: str = "other"
    opened_at: datetime | None = None
    scheduled_close: datetime | None = None
    volume: float | None = None
    source: str = ""

    def __post_init__(self) -> None:
        _aware(self, "opened_at", "scheduled_close")
        if not self.id or not self.question:
            raise ValueError("a market needs an id and a question")


@dataclass(frozen=True, slots=True)
class Resolution:
    """How a market resolved. Reaches only the scorers and the cutoff checks.

    `resolved_at` is the effective resolution instant (the earliest evidence of it):
    every cutoff must lie strictly before it. `known_at` is the latest instant by which
    the outcome was certainly public: only resolutions known before t0 may inform a
    forecast of another market (walk-forward base rates). `fraction` is the outcome of a
    "fractional" resolution (Manifold's MKT: the creator-chosen probability), and only of one.
    """

    market_id: str
    status: ResolutionStatus
    resolved_at: datetime
    known_at: datetime
    fraction: float | None = None

    def __post_init__(self) -> None:
        _aware(self, "resolved_at", "known_at")
        if self.known_at < self.resolved_at:
            raise ValueError("known_at precedes resolved_at")
        if (self.status == "fractional") != (self.fraction is not None):
            raise ValueError("fraction is set exactly when the status is 'fractional'")
        if self.fraction is not None and not (
            math.isfinite(self.fraction) and 0.0 <= self.fraction <= 1.0
        ):
            raise ValueError(f"fractional outcome {self.fraction!r} outside [0, 1]")

    @property
    def outcome(self) -> float | None:
        """1.0 for Yes, 0.0 for No, the fraction of a fractional resolution, None for 50-50 or
        ambiguous resolutions."""
        if self.status == "fractional":
            return self.fraction
        return {"yes": 1.0, "no": 0.0}.get(self.status)


@dataclass(frozen=True, slots=True)
class Question:
    """A market as it stood at t0. No outcome, no resolution instant."""

    market_id: str
    question: str
    description: str
    t0: datetime
    url: str = ""
    topic: str = "other"
    scheduled_close: datetime | None = None

    def __post_init__(self) -> None:
        _aware(self, "t0", "scheduled_close")


USAGE_COUNTS = (
    "prompt_tokens",
    "completion_tokens",
    "requests",
    "cache_hits",
    "retries",
    "fresh_prompt_tokens",
    "fresh_completion_tokens",
)


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_seconds(value: object) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


_USAGE_CHECKS: dict[str, Callable[[object], bool]] = {
    **dict.fromkeys(("model", "model_name", "endpoint"), lambda v: isinstance(v, str)),
    **dict.fromkeys(USAGE_COUNTS, _is_count),
    "latency_s": _is_seconds,
    "steps": lambda v: isinstance(v, list),
}


@dataclass(frozen=True, slots=True, eq=False)
class Usage(Mapping[str, object]):
    """What one forecast consumed: the model asked, token counts (`fresh_*`: of replies not served
    from the response cache, what budgets count), requests, cache hits, retries, latency and the
    log of its steps. A field is None when not recorded, or recorded with a value of the wrong kind
    (kept as given in `extra`, with every other key: temperature, sample, a program's own fields).

    It reads as the mapping it is stored as (`Usage.of(d)` and `dict(usage)` round-trip
    exactly), so stored runs and exports are byte-identical to the dicts it replaced."""

    model: str | None = None  # the model spec as given
    model_name: str | None = None  # the model's name: what the price table prices
    endpoint: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    requests: int | None = None  # calls that reached the endpoint
    cache_hits: int | None = None  # replies served from the response cache
    retries: int | None = None
    fresh_prompt_tokens: int | None = None
    fresh_completion_tokens: int | None = None
    latency_s: float | None = None  # total seconds
    steps: tuple[Mapping[str, object], ...] | None = None
    extra: Mapping[str, object] = field(default_factory=dict)

    @classmethod
    def of(cls, value: Usage | Mapping | Iterable[tuple[str, object]] | None) -> Usage:
        """The record of a stored usage mapping (or of its (key, value) pairs)."""
        if isinstance(value, Usage):
            return value
        if not value:
            return _NO_USAGE
        given: dict[str, Any] = dict(value)
        typed = {
            k: given.pop(k)
            for k in list(given)
            if k in _USAGE_CHECKS and _USAGE_CHECKS[k](given[k])
        }
        if "steps" in typed:
            typed["steps"] = tuple(typed["steps"])
        return cls(**typed, extra=given)

    def to_dict(self) -> dict[str, object]:
        """The stored form: the recorded fields and `extra`, as they were given."""
        out: dict[str, object] = {}
        for f in fields(self)[:-1]:
            value = getattr(self, f.name)
            if value is not None:
                out[f.name] = list(value) if f.name == "steps" else value
        return {**out, **self.extra}

    def __getitem__(self, key: str) -> object:
        return self.to_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())

    def uses_model(self) -> bool:
        """A forecast used a model when its usage names one or counts tokens (baselines record
        nothing)."""
        keys = ("model", "model_name", "prompt_tokens", "completion_tokens")
        return any(getattr(self, k) is not None or k in self.extra for k in keys)

    def __hash__(self) -> int:  # equal mappings hash alike (a scored row holding one is hashable)
        return hash(_frozen(self.to_dict()))


def _frozen(value: object) -> object:
    if isinstance(value, Mapping):
        return frozenset((k, _frozen(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


_NO_USAGE = Usage()  # nothing recorded (a baseline's forecast): shared, it is immutable


@dataclass(frozen=True, slots=True)
class Forecast:
    """What a forecaster answered: a probability, or a failure with its reason (never both)."""

    probability: float | None
    rationale: str = ""
    evidence: tuple[str, ...] = ()
    usage: Usage = field(default_factory=Usage)  # a mapping given here is read by `Usage.of`
    error: str | None = None
    raw: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.usage, Usage):
            object.__setattr__(self, "usage", Usage.of(self.usage))
        if (self.probability is None) == (self.error is None):
            raise ValueError("a forecast has either a probability or an error")
        if self.probability is not None and not (
            math.isfinite(self.probability) and 0.0 <= self.probability <= 1.0
        ):
            raise ValueError(f"probability {self.probability!r} outside [0, 1]")

    @classmethod
    def failure(cls, reason: str, raw: str = "", usage: Usage | Mapping | None = None) -> Forecast:
        return cls(probability=None, error=reason, raw=raw, usage=Usage.of(usage))

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True, slots=True)
class Document:
    """One archived document (news item, submission, comment) with its time provenance."""

    id: str
    source: str
    created_at: datetime
    title: str
    text: str = ""
    url: str = ""
    kind: str = ""
    edit_state: EditState = "never"
    edited_at: datetime | None = None
    retrieved_at: datetime | None = None
    score: int | None = None
    num_comments: int | None = None
    parent_id: str | None = None
    thread_id: str | None = None
    deleted: bool = False

    def __post_init__(self) -> None:
        _aware(self, "created_at", "edited_at", "retrieved_at")
        if (self.edit_state == "at") != (self.edited_at is not None):
            raise ValueError("edited_at is set exactly when edit_state is 'at'")


@dataclass(frozen=True, slots=True)
class RunIdentity:
    """What makes a run this run (built by `hindcast.replay.identity`): the frozen inputs and the
    schedule, not paths, concurrency or budgets. The run id is the hash of its stored form
    (`hindcast.runs.forms.identity_form`), exactly the mapping runs have always recorded: the
    optional parts appear only when set (`vector_search` with its `nprobe` off the default exact
    scan; `exclude`; `question_text_uncertain`; the searched `index`; an imported Inspect eval's
    id), so every pinned run id is unchanged. Keys of no field (a stored identity of another
    layout) are kept in `extra`."""

    store_version: str
    snapshot: str | None
    markets: tuple[str, ...]
    forecasters: tuple[str, ...]
    subsets: tuple[tuple[object, ...], ...]
    fractions: tuple[float, ...]
    offsets: tuple[str, ...]
    instants: tuple[str, ...]  # ISO instants
    hindcast_rule: bool
    repeats: int
    seed: int
    vector_search: str | None = None  # off the default exact scan: the spec's mode ("approx")
    nprobe: int | None = None  # recorded beside vector_search
    exclude: tuple[str, ...] | None = None
    question_text_uncertain: tuple[Mapping[str, object], ...] | None = None
    index: Mapping[str, object] | None = None  # embedder, dims, dtype (+ the approximate index)
    inspect_eval: str | None = None
    extra: Mapping[str, object] = field(default_factory=dict)
    absent: frozenset[str] = frozenset()  # required keys a stored identity lacked (not rewritten)


MANIFEST_VERSION = 1


@dataclass(frozen=True, slots=True)
class MarketStoreRef:
    """Where a run's market store lived: its frozen version and root folder."""

    version: str
    root: str


@dataclass(frozen=True, slots=True)
class ArchiveRef:
    """Where a run's archive lived: its snapshot id (None: none was recorded) and root folder."""

    snapshot: str | None
    root: str


@dataclass(frozen=True, slots=True)
class RunManifest:
    """What produced a run, recorded once when the run is created: its identity, each
    forecaster's provenance, where its market store and archive lived (so a later export can open
    them again), the scoring policies in force, the git revision, Python and package versions.

    `version` is the layout's: version 1 is the layout runs have always stored, written without a
    version key (so stored manifests, and the runs' ids, are unchanged); a later layout writes
    `manifest_version`. Its stored form is made and read only in `hindcast.runs.forms`
    (`manifest_form`, `manifest_of`; keys of no field, such as a scheduled sweep's `sweep` and
    `runs`, are kept in `extra`). `market_store` is None when a run of an older release recorded
    none (it cannot be scored then); `archive` is None for a run without an archive."""

    identity: RunIdentity
    forecasters: Mapping[str, Mapping[str, object]]
    market_store: MarketStoreRef | None
    archive: ArchiveRef | None
    scoring_policies: Mapping[str, object]
    git_revision: str | None
    python: str
    packages: Mapping[str, str | None]
    version: int = MANIFEST_VERSION
    extra: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Retrieval:
    """One entry of a forecast's retrieval log: the call (`op`: search, read, thread, a tool's
    name, or `withhold` — a document the leak filter kept from the model), the document ids it
    returned, and what else it recorded (`detail`: query, k, mode, doc_id, verdict, via, turn,
    arguments …, as given). Stored by `hindcast.runs.forms` as `{**detail, "op", "ids"}`."""

    op: str
    ids: tuple[str, ...] = ()
    detail: Mapping[str, object] = field(default_factory=dict)

    @property
    def doc_id(self) -> str:
        """The document a read, thread or withhold entry names ("" for the others)."""
        return str(self.detail.get("doc_id", ""))
