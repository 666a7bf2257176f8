"""What the report's figures show, computed from scored rows (pure; no drawing here).

Recovered and regressed markets (the per-topic figure). For a forecaster F and a baseline B
(another forecaster, or `market price`: the market's last price strictly before the same
t0), a market is compared on its (market, t0) rows where both have a probability. Over
those rows (every repeat of each) let F_m and B_m be the two mean Brier scores. The market is
- **recovered** when F_m < B_m − tolerance (F beats the baseline there),
- **regressed** when F_m > B_m + tolerance (F loses to it),
- **tied** otherwise.
A topic's net is recovered − regressed: how many more markets F fixed than it broke.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hindcast.errors import LeaderboardError
from hindcast.leaderboard.tables import fraction_of
from hindcast.scoring import metrics

MARKET_PRICE = "market price"
TOLERANCE = 0.01


@dataclass(frozen=True)
class CurvePoint:
    fraction: float
    brier: float
    n: int


@dataclass(frozen=True)
class MarketVerdict:
    market_id: str
    topic: str
    n_rows: int
    brier: float
    baseline_brier: float
    verdict: str  # recovered | regressed | tied


@dataclass(frozen=True)
class TopicNet:
    topic: str
    recovered: int
    regressed: int
    tied: int

    @property
    def net(self) -> int:
        return self.recovered - self.regressed


def forecasters(rows: Sequence) -> list[str]:
    return sorted({r.forecaster for r in rows})


def fraction_curves(rows: Sequence) -> dict[str, list[CurvePoint]]:
    """Mean Brier per lifetime fraction, per forecaster (rows cut at an explicit
    instant are left out)."""
    groups: dict[str, dict[float, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        fraction = fraction_of(r.label)
        if r.probability is not None and fraction is not None:
            groups[r.forecaster][fraction].append(r.brier)
    return {name: _curve(by_fraction) for name, by_fraction in sorted(groups.items())}


def market_curve(rows: Sequence) -> list[CurvePoint]:
    """The market's mean Brier per lifetime fraction, once per (market, t0) that had a price."""
    seen: dict[tuple, tuple[float, float]] = {}
    for r in rows:
        fraction = fraction_of(r.label)
        if r.market_price is not None and fraction is not None:
            seen[(r.market_id, r.t0)] = (fraction, r.market_brier)
    by_fraction: dict[float, list[float]] = defaultdict(list)
    for fraction, value in seen.values():
        by_fraction[fraction].append(value)
    return _curve(by_fraction)


def _curve(by_fraction: dict[float, list[float]]) -> list[CurvePoint]:
    return [CurvePoint(f, float(np.mean(v)), len(v)) for f, v in sorted(by_fraction.items())]


def reliability(rows: Sequence) -> dict[str, list[metrics.ReliabilityBin]]:
    """The reliability table of each forecaster over its valid forecasts."""
    tables = {}
    for name in forecasters(rows):
        valid = [r for r in rows if r.forecaster == name and r.probability is not None]
        if valid:
            tables[name] = metrics.reliability_table(
                [r.probability for r in valid], [r.outcome for r in valid]
            )
    return tables


def _scores(rows: Sequence, name: str) -> dict[tuple, list[tuple[float, str]]]:
    """(market, t0) → [(Brier, topic)] of one forecaster (one per repeat), or
    of the market's price."""
    scores: dict[tuple, list[tuple[float, str]]] = defaultdict(list)
    for r in rows:
        if name == MARKET_PRICE and r.market_price is not None:
            scores[(r.market_id, r.t0)] = [(r.market_brier, r.topic)]
        elif r.forecaster == name and r.probability is not None:
            scores[(r.market_id, r.t0)].append((r.brier, r.topic))
    return scores


def check_baseline(rows: Sequence, baseline: str) -> str:
    if baseline != MARKET_PRICE and baseline not in forecasters(rows):
        raise LeaderboardError(
            f"unknown baseline {baseline!r}; choose {MARKET_PRICE!r} or one of: "
            f"{', '.join(forecasters(rows))}"
        )
    return baseline


def market_verdicts(
    rows: Sequence, forecaster: str, baseline: str, tolerance: float = TOLERANCE
) -> list[MarketVerdict]:
    """Each market's verdict for `forecaster` against `baseline`, on their
    shared (market, t0) rows."""
    own, base = _scores(rows, forecaster), _scores(rows, baseline)
    per_market: dict[str, tuple[list, list, set]] = defaultdict(lambda: ([], [], set()))
    for key in sorted(own.keys() & base.keys()):
        mine, theirs, keys = per_market[key[0]]
        mine.extend(own[key])
        theirs.extend(base[key])
        keys.add(key)
    return [_verdict(market, *lists, tolerance) for market, lists in sorted(per_market.items())]


def _verdict(market: str, own: list, base: list, keys: set, tolerance: float) -> MarketVerdict:
    mine, theirs = float(np.mean([b for b, _ in own])), float(np.mean([b for b, _ in base]))
    verdict = (
        "recovered"
        if mine < theirs - tolerance
        else "regressed"
        if mine > theirs + tolerance
        else "tied"
    )
    return MarketVerdict(market, own[0][1], len(keys), mine, theirs, verdict)


def topic_net(verdicts: Sequence[MarketVerdict]) -> list[TopicNet]:
    """Recovered, regressed and tied markets per topic, topics by name."""
    counts: dict[str, dict[str, int]] = defaultdict(
        lambda: {"recovered": 0, "regressed": 0, "tied": 0}
    )
    for v in verdicts:
        counts[v.topic][v.verdict] += 1
    return [TopicNet(topic, **c) for topic, c in sorted(counts.items())]
