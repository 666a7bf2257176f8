"""Research analyses of stored runs (issue 29), computed from stored forecasts, resolutions and
stored price paths alone — no model is called, time is passed in through the rows:
time-averaged scores, the market-relative log score, pairwise relative skill, CORP reliability,
the additive-information (mixture) test, price convergence and event-level inference. Every
interval resamples whole markets, or whole events where markets share one (`units`).

`analyze(rows, facts, settings)` (`suite`) → Analyses; `Analyses.findings()` → the tables
that `hindcast analyze`, its JSON and the HTML report show. The analyses `hindcast analyze` and
`hindcast trade` have shown since issue 17 live here too (layer above scoring/, beside audit/ and
leaderboard/): strata, effects (fixed effects), ensemble, calibration, copying, policy_pairs,
trading (with its fees.toml); the face offers those modules whole, and trading's names."""

from __future__ import annotations

# isort: skip_file
# fmt: off
from typing import TYPE_CHECKING

from hindcast.analysis import corp
from hindcast.analysis.suite import analyze, findings
from hindcast.analysis.units import MARKET_PRICE, MarketFacts, Settings, facts_of
from hindcast.faces import lazy

if TYPE_CHECKING:  # each name loads from its module on first use (hindcast.faces.lazy)
    from hindcast.analysis import calibration, copying, deferral, effects, ensemble, policy_pairs
    from hindcast.analysis import strata, trading
    from hindcast.analysis.fees import load_fees
    from hindcast.analysis.trading import TRADE_COLUMNS, TradingStrategy, simulate_trading

__all__ = ["MARKET_PRICE", "MarketFacts", "Settings", "TRADE_COLUMNS", "TradingStrategy",
    "analyze", "calibration", "copying", "corp", "deferral", "effects", "ensemble", "facts_of",
    "findings", "load_fees", "policy_pairs", "simulate_trading", "strata", "trading"]
# fmt: on
__getattr__, __dir__ = lazy(__name__, __file__)
