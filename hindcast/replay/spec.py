"""ReplaySpec: everything that defines a sweep. Equal specs are the same run (resume)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from hindcast.errors import HindcastError
from hindcast.replay.cutoffs import DEFAULT_FRACTIONS, check_fraction
from hindcast.timeutil import iso

DEFAULT_FORECASTERS = ("market", "constant", "base-rate")


@dataclass(frozen=True)
class ReplaySpec:
    markets: Path
    store_version: str | None = None
    market_ids: tuple[str, ...] = ()
    limit: int | None = None
    forecasters: tuple[str, ...] = DEFAULT_FORECASTERS
    fractions: tuple[float, ...] = DEFAULT_FRACTIONS
    instants: tuple[datetime, ...] = field(default=())
    concurrency: int = 8

    def __post_init__(self) -> None:
        for f in self.fractions:
            check_fraction(f)
        if not self.forecasters:
            raise HindcastError("a sweep needs at least one forecaster")
        if len(set(self.forecasters)) != len(self.forecasters):
            raise HindcastError("a forecaster is named twice")
        if self.concurrency < 1:
            raise HindcastError("concurrency must be at least 1")


def run_identity(spec: ReplaySpec, store_version: str, market_ids: list[str]) -> dict:
    """What makes a run this run: the frozen inputs and the schedule, not paths or concurrency."""
    return {
        "store_version": store_version,
        "markets": sorted(market_ids),
        "forecasters": list(spec.forecasters),
        "fractions": list(spec.fractions),
        "instants": [iso(t) for t in spec.instants],
    }


def run_id(identity: dict) -> str:
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return "r-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
