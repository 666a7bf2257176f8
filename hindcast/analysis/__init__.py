"""Research analyses of stored runs (issue 29), computed from stored forecasts, resolutions and
stored price paths alone — no model is called, time is passed in through the rows:
time-averaged scores, the market-relative log score, pairwise relative skill, CORP reliability,
the additive-information (mixture) test, price convergence and event-level inference. Every
interval resamples whole markets, or whole events where markets share one (`units`).

`analyze(rows, facts, settings)` → Analyses (typed, frozen); `Analyses.findings()` → the tables
that `hindcast analyze`, its JSON and the HTML report show. The analyses `hindcast analyze` and
`hindcast trade` have shown since issue 17 live here too (layer above scoring/, beside audit/ and
leaderboard/): strata, effects (fixed effects), ensemble, calibration, copying, policy_pairs,
trading (with its fees.toml); the face offers those modules whole, and trading's names."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hindcast.analysis import (
    convergence,
    corp,
    events,
    mixture,
    pairwise,
    relative_log,
    time_average,
)
from hindcast.analysis.units import MARKET_PRICE, MarketFacts, Settings, facts_of
from hindcast.faces import lazy

if TYPE_CHECKING:  # what mypy sees; at run time each name loads on first use (`lazy`)
    from hindcast.analysis import (
        calibration,
        copying,
        effects,
        ensemble,
        policy_pairs,
        strata,
        trading,
    )
    from hindcast.analysis.trading import (
        TRADE_COLUMNS,
        TradingStrategy,
        load_fees,
        simulate_trading,
    )
from hindcast.scoring import Finding

_WHOLE = ("calibration", "copying", "effects", "ensemble", "policy_pairs", "strata", "trading")
_WHERE = {
    **dict.fromkeys(
        ("TRADE_COLUMNS", "TradingStrategy", "load_fees", "simulate_trading"), "trading"
    ),
    **{m: m for m in _WHOLE},
}
__all__ = [
    "MARKET_PRICE",
    "Analyses",
    "MarketFacts",
    "Settings",
    "analyze",
    "facts_of",
    "findings",
    "corp",
    *_WHERE,
]
__getattr__, _ = lazy(__name__, _WHERE, modules=_WHOLE)


@dataclass(frozen=True)
class Analyses:
    settings: Settings
    time_averaged: tuple[time_average.ScoreLine, ...]
    relative_log: tuple[relative_log.RelativeLog, ...]
    pairwise: pairwise.Pairwise
    corp: tuple[corp.Corp, ...]
    mixture: tuple[mixture.Mixture, ...]
    convergence: tuple[convergence.Convergence, ...]
    coherence: tuple[events.Coherence, ...]
    units_note: str

    def findings(self) -> list[Finding]:
        return [
            time_average.finding(self.time_averaged),
            relative_log.finding(self.relative_log),
            *pairwise.findings(self.pairwise),
            corp.finding(self.corp),
            mixture.finding(self.mixture),
            convergence.finding(self.convergence, self.settings),
            events.finding(self.coherence, self.units_note),
        ]


def analyze(rows: Sequence, facts: MarketFacts, settings: Settings | None = None) -> Analyses:
    """Every analysis of scored rows (scoring.aggregate.ScoredRow) with the
    markets' stored facts."""
    settings = settings or Settings()
    return Analyses(
        settings,
        tuple(time_average.lines(rows, facts, settings)),
        tuple(relative_log.relative_logs(rows, facts, settings)),
        pairwise.pairwise(rows, facts, settings),
        tuple(corp.corp(rows, facts, settings)),
        tuple(mixture.mixtures(rows, facts, settings)),
        tuple(convergence.convergence(rows, facts, settings)),
        tuple(events.coherence(rows, facts)),
        events.units_note(rows, facts),
    )


def findings(rows: Sequence, bundles: Sequence, **settings) -> list[Finding]:
    """`analyze`'s tables over scored rows and the market bundles they were scored against
    (`settings`: Settings fields, e.g. baseline="market price", seed=0, threshold=0.1)."""
    return analyze(rows, facts_of(bundles), Settings(**settings)).findings()
