"""Every research analysis of scored rows at once: `analyze(rows, facts, settings)` → Analyses
(typed, frozen); `Analyses.findings()` → the tables `hindcast analyze`, its JSON and the HTML
report show; `findings(rows, bundles, **settings)` both in one call."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hindcast.analysis import (
    convergence,
    corp,
    events,
    mixture,
    pairwise,
    relative_log,
    series,
    time_average,
)
from hindcast.analysis.units import MarketFacts, Settings, facts_of
from hindcast.scoring import Finding


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
    found = series.points(rows)  # shared by the analyses of series
    return Analyses(
        settings,
        tuple(time_average.lines(rows, facts, settings, found)),
        tuple(relative_log.relative_logs(rows, facts, settings)),
        pairwise.pairwise(rows, facts, settings, found),
        tuple(corp.corp(rows, facts, settings)),
        tuple(mixture.mixtures(rows, facts, settings)),
        tuple(convergence.convergence(rows, facts, settings, found)),
        tuple(events.coherence(rows, facts, found)),
        events.units_note(rows, facts),
    )


def findings(rows: Sequence, bundles: Sequence, **settings) -> list[Finding]:
    """`analyze`'s tables over scored rows and the market bundles they were scored against
    (`settings`: Settings fields, e.g. baseline="market price", seed=0, threshold=0.1)."""
    return analyze(rows, facts_of(bundles), Settings(**settings)).findings()
