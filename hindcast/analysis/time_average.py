"""Time-averaged scores over the sweep (Metaculus-style), beside spot scores per cutoff.

For a forecaster and a market, its valid forecasts at t0₁ < … < t0ₖ each stand until the next
one (a failed t0 leaves the previous forecast standing; nothing before the first is scored), the
last until the market's effective resolution. The time-averaged score is the integral of the
standing forecast's score over [t0₁, resolution] divided by its length: Σ wᵢ·sᵢ / Σ wᵢ with
wᵢ = t0ᵢ₊₁ − t0ᵢ (last: resolution − t0ₖ). The market price at the same t0s is averaged the same
way. A forecaster's figure is the mean over markets (each market once); the interval resamples
whole markets (whole events where markets share one). Spot scores: the mean over the
(market, t0) rows of each cutoff label."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hindcast.analysis import series
from hindcast.analysis.units import MarketFacts, Settings, bounds, clipped, cluster_interval
from hindcast.scoring import Finding

TIME_AVERAGED = "time-averaged"


@dataclass(frozen=True)
class MarketAverage:
    forecaster: str
    market_id: str
    brier: float
    log_score: float
    market_brier: (
        float | None
    )  # the market price at the same t0s, averaged the same way (None: a t0 had no price)
    seconds: float


@dataclass(frozen=True)
class ScoreLine:
    forecaster: str
    measure: str  # "time-averaged" or "spot <cutoff label>"
    brier: float
    brier_low: float | None
    brier_high: float | None
    log_score: float
    market_brier: float | None
    n_markets: int


def brier(p: float, y: float) -> float:
    return (p - y) ** 2


def log_score(p: float, y: float) -> float:
    q = clipped(p)
    return math.log(q if y == 1.0 else 1.0 - q)


def weights(points: Sequence) -> list[float] | None:
    """Seconds each point's forecast stands: to the next t0, the last to the resolution (None: no
    resolution instant, or a t0 not before it)."""
    close = points[-1].resolved_at
    if close is None or close <= points[-1].t0:
        return None
    ends = [p.t0 for p in points[1:]] + [close]
    return [(end - p.t0).total_seconds() for p, end in zip(points, ends)]


def market_average(points: Sequence) -> MarketAverage | None:
    w = weights(points)
    if w is None:
        return None
    total = math.fsum(w)
    avg = lambda f: math.fsum(wi * f(p) for wi, p in zip(w, points)) / total
    priced = all(p.market_price is not None for p in points)
    market = avg(lambda p: brier(p.market_price, p.outcome)) if priced else None
    first = points[0]
    return MarketAverage(
        first.forecaster,
        first.market_id,
        avg(lambda p: brier(p.probability, p.outcome)),
        avg(lambda p: log_score(p.probability, p.outcome)),
        market,
        total,
    )


def averages(rows: Sequence, found: Sequence[series.Point] | None = None) -> list[MarketAverage]:
    """Each (forecaster, market)'s time-averaged scores (the market price
    included as a forecaster); `found`: `series.points(rows)` if the caller has them."""
    out = []
    for markets in series.by_forecaster_market(series.shared(rows, found)).values():
        out += [a for pts in markets.values() if (a := market_average(pts)) is not None]
    return out


def lines(
    rows: Sequence,
    facts: MarketFacts,
    settings: Settings,
    found: Sequence[series.Point] | None = None,
) -> list[ScoreLine]:
    """Per forecaster: the time-averaged line, then one spot line per cutoff label (`found`:
    `series.points(rows)` if the caller has them)."""
    found = series.shared(rows, found)
    every = averages(rows, found)
    out = []
    for name in sorted({p.forecaster for p in found}):
        mine = [a for a in every if a.forecaster == name]
        if mine:
            out.append(
                _line(
                    name,
                    TIME_AVERAGED,
                    [a.market_id for a in mine],
                    [a.brier for a in mine],
                    [a.log_score for a in mine],
                    [a.market_brier for a in mine],
                    facts,
                    settings,
                )
            )
        out += _spots(name, [p for p in found if p.forecaster == name], facts, settings)
    return out


def _spots(name: str, pts: Sequence, facts: MarketFacts, settings: Settings) -> list[ScoreLine]:
    out = []
    for label in sorted({p.label for p in pts}):
        at = [p for p in pts if p.label == label]
        out.append(
            _line(
                name,
                f"spot {label}",
                [p.market_id for p in at],
                [brier(p.probability, p.outcome) for p in at],
                [log_score(p.probability, p.outcome) for p in at],
                [None if p.market_price is None else brier(p.market_price, p.outcome) for p in at],
                facts,
                settings,
            )
        )
    return out


def _line(
    name, measure, markets, briers, logs, market_briers, facts: MarketFacts, settings: Settings
) -> ScoreLine:
    interval = cluster_interval(
        [facts.unit(m) for m in markets], briers, f"time-average|{name}|{measure}", settings
    )
    priced = [b for b in market_briers if b is not None]
    market = float(np.mean(priced)) if len(priced) == len(market_briers) else None
    return ScoreLine(
        name,
        measure,
        float(np.mean(briers)),
        *bounds(interval),
        float(np.mean(logs)),
        market,
        len(set(markets)),
    )


def finding(found: Sequence[ScoreLine]) -> Finding:
    columns = (
        "forecaster",
        "measure",
        "brier",
        "brier_low",
        "brier_high",
        "log_score",
        "market_brier",
        "n_markets",
    )
    rows = tuple(
        (
            s.forecaster,
            s.measure,
            s.brier,
            s.brier_low,
            s.brier_high,
            s.log_score,
            s.market_brier,
            s.n_markets,
        )
        for s in found
    )
    return Finding(
        "time-averaged",
        "Time-averaged scores over the sweep, beside spot scores per cutoff",
        columns,
        rows,
        (
            " ".join(__doc__.split("\n\n")[1].split()),
            (
                "market_brier: the market's price at the same t0s scored the same way (– where a "
                "t0 had no price); log_score: ln of the probability given to the outcome, "
                "clipped to [1e-6, 1 − 1e-6] (policy log-clip-1e-6). Brier interval: 95%, "
                "bootstrap over whole markets/events."
            ),
        ),
    )
