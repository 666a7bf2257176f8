"""Frozen records. Raw payloads are parsed into these once, at the boundary."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from hindcast.timeutil import require_aware

ResolutionStatus = Literal["yes", "no", "fifty-fifty", "ambiguous"]
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
    forecast of another market (walk-forward base rates).
    """

    market_id: str
    status: ResolutionStatus
    resolved_at: datetime
    known_at: datetime

    def __post_init__(self) -> None:
        _aware(self, "resolved_at", "known_at")
        if self.known_at < self.resolved_at:
            raise ValueError("known_at precedes resolved_at")

    @property
    def outcome(self) -> float | None:
        """1.0 for Yes, 0.0 for No, None for 50-50 or ambiguous resolutions."""
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


@dataclass(frozen=True, slots=True)
class Forecast:
    """What a forecaster answered: a probability, or a failure with its reason (never both)."""

    probability: float | None
    rationale: str = ""
    evidence: tuple[str, ...] = ()
    usage: dict = field(default_factory=dict)
    error: str | None = None
    raw: str = ""

    def __post_init__(self) -> None:
        if (self.probability is None) == (self.error is None):
            raise ValueError("a forecast has either a probability or an error")
        if self.probability is not None and not (
            math.isfinite(self.probability) and 0.0 <= self.probability <= 1.0
        ):
            raise ValueError(f"probability {self.probability!r} outside [0, 1]")

    @classmethod
    def failure(cls, reason: str, raw: str = "", usage: dict | None = None) -> "Forecast":
        return cls(probability=None, error=reason, raw=raw, usage=usage or {})

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
