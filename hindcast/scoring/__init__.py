"""Scores of stored forecasts: metrics, aggregation, bootstrap intervals, the market comparison,
costs and usage. The face other packages import (loaded on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # what mypy sees; at run time each name loads on first use (`lazy`)
    from hindcast.scoring import bootstrap, metrics, regimes, usage, vs_market
    from hindcast.scoring.aggregate import (
        POLICIES,
        SLICES,
        LeaderboardRow,
        ScoredRow,
        leaderboard,
        retrieval_policy,
        score_rows,
    )
    from hindcast.scoring.costs import PriceTable, load_prices
    from hindcast.scoring.findings import Finding
    from hindcast.scoring.metrics import brier
    from hindcast.scoring.regimes import REGIMES, load_cutoffs, model_of
    from hindcast.scoring.usage import NO_MODEL, dollars, figures, summarize
    from hindcast.scoring.vs_market import MIN_MARKETS, too_few

_WHERE = {
    "bootstrap": "bootstrap",
    "brier": "metrics",
    "dollars": "usage",
    "figures": "usage",
    "Finding": "findings",
    "leaderboard": "aggregate",
    "LeaderboardRow": "aggregate",
    "load_cutoffs": "regimes",
    "load_prices": "costs",
    "metrics": "metrics",
    "MIN_MARKETS": "vs_market",
    "model_of": "regimes",
    "NO_MODEL": "usage",
    "POLICIES": "aggregate",
    "PriceTable": "costs",
    "regimes": "regimes",
    "REGIMES": "regimes",
    "retrieval_policy": "aggregate",
    "score_rows": "aggregate",
    "ScoredRow": "aggregate",
    "SLICES": "aggregate",
    "summarize": "usage",
    "too_few": "vs_market",
    "usage": "usage",
    "vs_market": "vs_market",
}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy(
    __name__,
    _WHERE,
    modules=(
        "bootstrap",
        "metrics",
        "regimes",
        "usage",
        "vs_market",
    ),
)
