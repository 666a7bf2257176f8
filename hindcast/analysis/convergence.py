"""Price convergence: does the market move toward a forecaster that disagrees with it?

This reads the future on purpose — the stored price path after t0 — and lives only here, in the
analysis of stored runs; no forecaster is ever shown it. For each forecaster's valid (market, t0)
(repeats averaged) with a price p₀ at t0 (the last point strictly before t0) and a horizon h, p_h is
the last stored price at an instant in (t0, t0 + h]; the row is left out at h when the path has no
point there, or when t0 + h is not before the market's effective resolution (the price then reflects
the outcome, not the market's judgement). A row disagrees when |p − p₀| ≥ the threshold; its signed
move toward the forecaster is sign(p − p₀)·(p_h − p₀). Matched control: for each disagreeing row,
the mean move of the (at most 5) non-disagreeing rows of the same forecaster and horizon nearest to
it in p₀ and within 0.05 of it (ties: the earliest market, t0), signed by the disagreeing row's
direction; a disagreeing row with no such row is unmatched and left out of the effect (n_matched
counts the rest; none matched: no effect). move_toward is the mean over every disagreeing row;
control_move and effect over the matched ones. Effect = mean move − mean control
move; its 95% interval resamples the disagreeing rows' whole markets (whole events where markets
share one), each row with its matched control."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

import numpy as np

from hindcast.analysis import series
from hindcast.analysis.units import MARKET_PRICE, MarketFacts, Settings, bounds, cluster_interval
from hindcast.scoring import Finding

MATCHES = 5
CALIPER = 0.05


@dataclass(frozen=True)
class Move:
    market_id: str
    t0: object
    direction: float  # sign(p − p₀); 0 when equal
    distance: float  # |p − p₀|
    price: float  # p₀
    move: float  # p_h − p₀


@dataclass(frozen=True)
class Convergence:
    forecaster: str
    horizon_days: int
    n_disagree: int
    n_control: int
    n_matched: int
    move_toward: float | None
    control_move: float | None
    effect: float | None
    low: float | None
    high: float | None


def price_after(path: Sequence, t0, until) -> float | None:
    """The last stored price at an instant in (t0, until] (None: no point there)."""
    i = bisect_right(path, until, key=lambda point: point.t) - 1
    return path[i].p if i >= 0 and path[i].t > t0 else None


def moves(points: Sequence, facts: MarketFacts, days: int) -> list[Move]:
    out, times = [], _Times(facts)
    for p in points:
        until = p.t0 + timedelta(days=days)
        if p.market_price is None or p.resolved_at is None or until >= p.resolved_at:
            continue
        later = times.price_after(p.market_id, p.t0, until)
        if later is not None:
            gap = p.probability - p.market_price
            out.append(
                Move(
                    p.market_id,
                    p.t0,
                    float(np.sign(gap)),
                    abs(gap),
                    p.market_price,
                    later - p.market_price,
                )
            )
    return out


class _Times:
    """`price_after` over the markets' stored paths, each path's instants listed once."""

    def __init__(self, facts: MarketFacts):
        self.facts = facts
        self.instants: dict[str, list] = {}

    def price_after(self, market_id: str, t0, until) -> float | None:
        path = self.facts.prices.get(market_id, ())
        if market_id not in self.instants:
            self.instants[market_id] = [point.t for point in path]
        i = bisect_right(self.instants[market_id], until) - 1
        return path[i].p if i >= 0 and path[i].t > t0 else None


def convergence(
    rows: Sequence,
    facts: MarketFacts,
    settings: Settings,
    found: Sequence[series.Point] | None = None,
) -> list[Convergence]:
    """`found`: `series.points(rows)` if the caller has them (the market price's left out)."""
    found = [p for p in series.shared(rows, found) if p.forecaster != MARKET_PRICE]
    out = []
    for name in sorted({p.forecaster for p in found}):
        mine = [p for p in found if p.forecaster == name]
        out += [
            _one(name, moves(mine, facts, days), days, facts, settings)
            for days in settings.horizons_days
        ]
    return out


def _one(
    name: str, found: Sequence[Move], days: int, facts: MarketFacts, settings: Settings
) -> Convergence:
    treated = [m for m in found if m.distance >= settings.threshold]
    control = sorted(
        (m for m in found if m.distance < settings.threshold),
        key=lambda m: (m.price, m.market_id, m.t0),
    )
    prices, shifts = np.array([m.price for m in control]), np.array([m.move for m in control])
    toward = float(np.mean([m.direction * m.move for m in treated])) if treated else None
    pairs = [(t, c) for t in treated if (c := _matched_move(prices, shifts, t.price)) is not None]
    if not pairs:
        return Convergence(
            name, days, len(treated), len(control), 0, toward, None, None, None, None
        )
    moved = np.array([t.direction * t.move for t, _ in pairs])
    placebo = np.array([t.direction * c for t, c in pairs])
    interval = cluster_interval(
        [facts.unit(t.market_id) for t, _ in pairs],
        moved - placebo,
        f"convergence|{name}|{days}",
        settings,
    )
    return Convergence(
        name,
        days,
        len(treated),
        len(control),
        len(pairs),
        toward,
        float(placebo.mean()),
        float((moved - placebo).mean()),
        *bounds(interval),
    )


def _matched_move(prices: np.ndarray, shifts: np.ndarray, price: float) -> float | None:
    """The mean move of the (at most MATCHES) control rows (sorted by price, market, t0: `prices`,
    their `shifts`) nearest `price` and within CALIPER of it (ties: in that order)."""
    lo, hi = (
        np.searchsorted(prices, price - CALIPER, "left"),
        np.searchsorted(prices, price + CALIPER, "right"),
    )
    distance = np.abs(prices[lo:hi] - price)
    near = np.argsort(distance, kind="stable")[:MATCHES]
    near = near[distance[near] <= CALIPER]
    return float(np.mean(shifts[lo:hi][near])) if near.size else None


def finding(found: Sequence[Convergence], settings: Settings) -> Finding:
    columns = (
        "forecaster",
        "horizon_days",
        "n_disagree",
        "n_control",
        "n_matched",
        "move_toward",
        "control_move",
        "effect",
        "low",
        "high",
    )
    rows = tuple(
        (
            c.forecaster,
            c.horizon_days,
            c.n_disagree,
            c.n_control,
            c.n_matched,
            c.move_toward,
            c.control_move,
            c.effect,
            c.low,
            c.high,
        )
        for c in found
    )
    return Finding(
        "convergence",
        f"Price convergence toward a forecaster disagreeing by ≥ {settings.threshold:g}",
        columns,
        rows,
        (" ".join(__doc__.split("\n\n")[1].split()),),
    )
