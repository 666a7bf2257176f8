"""What every analysis of this package shares: the stored market facts beyond the scored rows
(price paths, events, when each resolution was known), the resampling unit (a whole event where
markets share one, else the market), seeded cluster-bootstrap intervals and the settings.

An event is a Polymarket neg-risk group or any shared event id (`MarketMeta.event`): the
markets of one event are resampled together, never apart. A market without an event is its
own unit. Pure: every input is passed in."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from hindcast.records import PricePoint
from hindcast.scoring import bootstrap, vs_market

MARKET_PRICE = "market price"
CLIP = 1e-6  # probabilities of 0 and 1 are clipped to [CLIP, 1 − CLIP] before any log or logit
CLIP_POLICY = "log-clip-1e-6"


@dataclass(frozen=True)
class Settings:
    """The choices every analysis records: baseline of relative skill, resampling, thresholds."""

    baseline: str = MARKET_PRICE
    replicates: int = bootstrap.REPLICATES
    permutations: int = 2000
    seed: int = 0
    threshold: float = 0.10  # price convergence: |p − price at t0| at least this is a disagreement
    horizons_days: tuple[int, ...] = (1, 3, 7)
    band_draws: int = 500  # CORP consistency band and miscalibration test


@dataclass(frozen=True)
class MarketFacts:
    """Per market: its stored price path, its event (empty: none), whether its event's markets are
    mutually exclusive (neg-risk) and when its resolution was known."""

    prices: Mapping[str, tuple[PricePoint, ...]] = field(default_factory=dict)
    events: Mapping[str, str] = field(default_factory=dict)
    exclusive: frozenset[str] = frozenset()
    known_at: Mapping[str, datetime] = field(default_factory=dict)

    def unit(self, market_id: str) -> str:
        """The resampling unit of a market: its event, else itself."""
        event = self.events.get(market_id, "")
        return f"event:{event}" if event else f"market:{market_id}"

    def event_markets(self) -> dict[str, tuple[str, ...]]:
        """Event → its markets (sorted), for events of at least two markets."""
        members: dict[str, list[str]] = defaultdict(list)
        for market, event in sorted(self.events.items()):
            if event:
                members[event].append(market)
        return {e: tuple(ms) for e, ms in sorted(members.items()) if len(ms) > 1}


def facts_of(bundles: Sequence) -> MarketFacts:
    """The MarketFacts of market bundles (markets.bundle.MarketBundle; later
    bundles win a clash)."""
    prices: dict = {}
    events: dict[str, str] = {}
    exclusive: set[str] = set()
    known: dict[str, datetime] = {}
    for bundle in bundles:
        prices.update(bundle.prices)
        known.update({r.market_id: r.known_at for r in bundle.resolutions})
        for market_id, meta in bundle.meta.items():
            events[market_id] = meta.event
            if meta.neg_risk and meta.event:
                exclusive.add(market_id)
    return MarketFacts(prices, events, frozenset(exclusive), known)


def cluster_interval(units: Sequence[str], values: Sequence[float], key: str, settings: Settings):
    """The 95% percentile interval of the mean of `values`, resampling whole
    units (None: too few)."""
    codes, n = bootstrap.market_codes(list(units))
    if vs_market.too_few(n):
        return None
    weights = unit_weights(n, key, settings)
    return bootstrap.percentile_interval(
        bootstrap.replicate_means(weights, codes, np.asarray(values, float))
    )


def unit_weights(n_units: int, key: str, settings: Settings) -> np.ndarray:
    return bootstrap.draw_weights(
        n_units, settings.replicates, bootstrap.rng_for(settings.seed, key)
    )


def bounds(interval) -> tuple[float | None, float | None]:
    return (None, None) if interval is None else (interval.low, interval.high)


def mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def clipped(p: float) -> float:
    return min(max(p, CLIP), 1.0 - CLIP)


def is_clipped(p: float) -> bool:
    return p < CLIP or p > 1.0 - CLIP


def valid(rows: Sequence) -> list:
    """The rows with a probability (failures are counted by the analyses that report them)."""
    return [r for r in rows if r.probability is not None]


def forecasters(rows: Sequence) -> list[str]:
    return sorted({r.forecaster for r in rows})


def averaged(rows: Sequence) -> dict[tuple[str, str, datetime], float]:
    """(forecaster, market, t0) → the mean probability of its repeats (valid rows only)."""
    groups: dict[tuple, list[float]] = defaultdict(list)
    for r in valid(rows):
        groups[(r.forecaster, r.market_id, r.t0)].append(r.probability)
    return {k: float(np.mean(v)) for k, v in groups.items()}
