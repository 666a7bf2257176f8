"""Scores of stored forecasts: metrics, aggregation, bootstrap intervals, the market comparison,
costs and usage. The face other packages import (loaded on first use)."""

from __future__ import annotations

# isort: skip_file
# fmt: off
from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # each name loads from its module on first use (hindcast.faces.lazy)
    from hindcast.scoring import bootstrap, metrics, regimes, usage, vs_market
    from hindcast.scoring.aggregate import (POLICIES, SLICES, LeaderboardRow, ScoredRow,
        leaderboard, retrieval_policy, score_rows)
    from hindcast.scoring.costs import PriceTable, load_prices
    from hindcast.scoring.findings import Finding
    from hindcast.scoring.metrics import brier
    from hindcast.scoring.regimes import REGIMES, load_cutoffs, model_of
    from hindcast.scoring.usage import NO_MODEL, dollars, figures, summarize
    from hindcast.scoring.vs_market import MIN_MARKETS, too_few

__all__ = ["Finding", "LeaderboardRow", "MIN_MARKETS", "NO_MODEL", "POLICIES", "PriceTable",
    "REGIMES", "SLICES", "ScoredRow", "bootstrap", "brier", "dollars", "figures", "leaderboard",
    "load_cutoffs", "load_prices", "metrics", "model_of", "regimes", "retrieval_policy",
    "score_rows", "summarize", "too_few", "usage", "vs_market"]
# fmt: on
__getattr__, __dir__ = lazy(__name__, __file__)
