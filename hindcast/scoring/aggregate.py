"""From stored forecasts to scored rows to a leaderboard. A separate pass: no model is called.

Policies (recorded in each run's manifest):
- outcome policy `exclude-non-binary`: markets resolved 50-50 or ambiguous are not scored.
- failures are counted per forecaster, never imputed (no 0.5 fill-in).
- the market comparison uses only rows where the market had a price strictly before t0.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from hindcast.markets.prices import price_at
from hindcast.records import PricePoint, Resolution
from hindcast.scoring.metrics import brier, mean, skill

POLICIES = {"outcome": "exclude-non-binary", "failures": "count-never-impute", "market_rows": "paired-with-price-before-t0"}


@dataclass(frozen=True, slots=True)
class ScoredRow:
    forecaster: str
    market_id: str
    t0: datetime
    label: str
    probability: float | None
    error: str | None
    outcome: float
    market_price: float | None

    @property
    def brier(self) -> float | None:
        return None if self.probability is None else brier(self.probability, self.outcome)

    @property
    def market_brier(self) -> float | None:
        return None if self.market_price is None else brier(self.market_price, self.outcome)


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    forecaster: str
    n_forecasts: int
    n_failed: int
    n_markets: int
    brier: float | None
    n_paired: int
    forecaster_brier_paired: float | None
    market_brier: float | None
    skill_vs_market: float | None


def score_rows(stored: Iterable, resolutions: Mapping[str, Resolution],
               prices: Mapping[str, Sequence[PricePoint]]) -> list[ScoredRow]:
    """Attach outcome and the market's price at the same t0 to every stored forecast."""
    rows = []
    for s in stored:
        outcome = resolutions[s.market_id].outcome
        if outcome is None:
            continue
        point = price_at(prices.get(s.market_id, ()), s.t0)
        rows.append(ScoredRow(s.forecaster, s.market_id, s.t0, s.label, s.forecast.probability,
                              s.forecast.error, outcome, None if point is None else point.p))
    return rows


def leaderboard(rows: Iterable[ScoredRow]) -> list[LeaderboardRow]:
    """One row per forecaster, best Brier first (ties by name)."""
    groups: dict[str, list[ScoredRow]] = defaultdict(list)
    for row in rows:
        groups[row.forecaster].append(row)
    board = [_summary(name, group) for name, group in groups.items()]
    return sorted(board, key=lambda r: (r.brier is None, r.brier if r.brier is not None else 0.0, r.forecaster))


def _summary(name: str, rows: list[ScoredRow]) -> LeaderboardRow:
    valid = [r for r in rows if r.probability is not None]
    paired = [r for r in valid if r.market_price is not None]
    own = mean([r.brier for r in paired])
    market = mean([r.market_brier for r in paired])
    return LeaderboardRow(
        forecaster=name, n_forecasts=len(valid), n_failed=len(rows) - len(valid),
        n_markets=len({r.market_id for r in valid}), brier=mean([r.brier for r in valid]),
        n_paired=len(paired), forecaster_brier_paired=own, market_brier=market, skill_vs_market=skill(own, market),
    )
