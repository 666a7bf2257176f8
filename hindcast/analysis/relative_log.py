"""The market-relative log score: 100·(ln p(y) − ln p_market(y)) at the same t0.

p(y) is the probability the forecaster gave to what happened (p for YES, 1 − p for NO), p_market(y)
the same of the market's last price strictly before t0. A strictly proper score of the forecaster
relative to the market (positive: it put more probability on the outcome than the market did), in
hundredths of a nat. Probabilities of exactly 0 or 1 — the forecaster's or the market's — would give
an infinite score, so both are clipped to [1e-6, 1 − 1e-6] first (policy `log-clip-1e-6`, the run's
log-score policy); how many rows were clipped is reported beside each figure, never hidden. The
extremes are therefore ±100·ln(1e6) ≈ ±1381.6 plus the other side's term. Rows are those with both a
probability and a price; the interval resamples whole markets (whole events
where markets share one)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from hindcast.analysis.units import (
    CLIP_POLICY,
    MarketFacts,
    Settings,
    bounds,
    clipped,
    cluster_interval,
    is_clipped,
)
from hindcast.scoring import Finding


@dataclass(frozen=True)
class RelativeLog:
    forecaster: str
    mean: float
    low: float | None
    high: float | None
    n_rows: int
    n_markets: int
    n_clipped: int  # rows where the forecaster's or the market's probability was clipped
    policy: str = CLIP_POLICY


def relative_log(p: float, market: float, y: float) -> float:
    """100·(ln p(y) − ln p_market(y)), both probabilities clipped to [1e-6, 1 − 1e-6]."""
    return 100.0 * (math.log(_given(clipped(p), y)) - math.log(_given(clipped(market), y)))


def _given(p: float, y: float) -> float:
    return p if y == 1.0 else 1.0 - p


def relative_logs(rows: Sequence, facts: MarketFacts, settings: Settings) -> list[RelativeLog]:
    paired = [r for r in rows if r.probability is not None and r.market_price is not None]
    return [
        _one(name, [r for r in paired if r.forecaster == name], facts, settings)
        for name in sorted({r.forecaster for r in paired})
    ]


def _one(name: str, rows: Sequence, facts: MarketFacts, settings: Settings) -> RelativeLog:
    values = [relative_log(r.probability, r.market_price, r.outcome) for r in rows]
    interval = cluster_interval(
        [facts.unit(r.market_id) for r in rows], values, f"relative-log|{name}", settings
    )
    n_clipped = sum(is_clipped(r.probability) or is_clipped(r.market_price) for r in rows)
    return RelativeLog(
        name,
        math.fsum(values) / len(values),
        *bounds(interval),
        len(rows),
        len({r.market_id for r in rows}),
        n_clipped,
    )


def finding(found: Sequence[RelativeLog]) -> Finding:
    columns = (
        "forecaster",
        "relative_log",
        "low",
        "high",
        "n_rows",
        "n_markets",
        "n_clipped",
        "clip_policy",
    )
    rows = tuple(
        (f.forecaster, f.mean, f.low, f.high, f.n_rows, f.n_markets, f.n_clipped, f.policy)
        for f in found
    )
    return Finding(
        "relative-log",
        "Market-relative log score: 100·(ln p(y) − ln p_market(y)) at the same t0",
        columns,
        rows,
        (" ".join(__doc__.split("\n\n")[1].split()),),
    )
