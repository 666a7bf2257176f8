"""The additive-information test: does the forecaster add to the market's price?

The mixture σ((1 − w)·logit p_market + w·logit p_model) pools the market's price at t0 and the
forecaster's probability (both clipped to [1e-6, 1 − 1e-6] before the logit, policy
`log-clip-1e-6`). The markets (whole events where markets share one) are ordered by when their
resolution was known (`known_at`) and split in two: w ∈ [0, 1] is fitted on the earlier half (the w
of a 0.001 grid with the lowest mean Brier; ties to the smaller w) and the mixture is judged on the
later half, which the fit never saw. Reported: the Brier gain of the mixture over the market there
(market Brier − mixture Brier; positive: the forecaster carries information the price lacks) and,
beside it, the gain of the forecaster alone, each with a 95% interval resampling whole
markets/events of the later half. w = 0: the price already holds everything the forecaster knows; w
= 1: the forecaster replaces it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hindcast.analysis.units import CLIP, MarketFacts, Settings, bounds, cluster_interval
from hindcast.scoring import Finding

GRID = np.linspace(0.0, 1.0, 1001)


@dataclass(frozen=True)
class Mixture:
    forecaster: str
    w: float | None  # None: too few markets to split
    n_fit_markets: int
    n_test_markets: int
    n_test_rows: int
    mixed_gain: float | None
    mixed_low: float | None
    mixed_high: float | None
    model_gain: float | None
    model_low: float | None
    model_high: float | None


def logit(p) -> np.ndarray:
    q = np.clip(np.asarray(p, float), CLIP, 1.0 - CLIP)
    return np.log(q / (1.0 - q))


def mix(w, market, model) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-((1.0 - w) * logit(market) + w * logit(model))))


def fit_w(market, model, y) -> float:
    """The w of GRID with the lowest mean Brier of the mixture (ties: the smallest)."""
    market, model, y = (np.asarray(v, float) for v in (market, model, y))
    pooled = 1.0 / (
        1.0 + np.exp(-(np.outer(1.0 - GRID, logit(market)) + np.outer(GRID, logit(model))))
    )
    return float(GRID[int(np.argmin(np.mean((pooled - y) ** 2, axis=1)))])


def split_units(rows: Sequence, facts: MarketFacts) -> tuple[set[str], set[str]]:
    """(earlier half, later half) of the units, ordered by when their resolutions were known."""
    known: dict[str, list] = defaultdict(list)
    for r in rows:
        instant = facts.known_at.get(r.market_id, r.resolved_at)
        if instant is not None:
            known[facts.unit(r.market_id)].append(instant)
    order = sorted(known, key=lambda u: (max(known[u]), u))
    half = len(order) // 2
    return set(order[:half]), set(order[half:])


def mixtures(rows: Sequence, facts: MarketFacts, settings: Settings) -> list[Mixture]:
    paired = [r for r in rows if r.probability is not None and r.market_price is not None]
    return [
        _one(name, [r for r in paired if r.forecaster == name], facts, settings)
        for name in sorted({r.forecaster for r in paired})
    ]


def _one(name: str, rows: Sequence, facts: MarketFacts, settings: Settings) -> Mixture:
    fit, test = split_units(rows, facts)
    train = [r for r in rows if facts.unit(r.market_id) in fit]
    held = [r for r in rows if facts.unit(r.market_id) in test]
    if not train or not held:
        return Mixture(name, None, len(fit), len(test), len(held), *([None] * 6))
    w = fit_w(*_arrays(train))
    market, model, y = _arrays(held)
    base = (market - y) ** 2
    mixed_gain, model_gain = base - (mix(w, market, model) - y) ** 2, base - (model - y) ** 2
    units = [facts.unit(r.market_id) for r in held]
    mixed = cluster_interval(units, mixed_gain, f"mixture|{name}", settings)
    alone = cluster_interval(units, model_gain, f"mixture-alone|{name}", settings)
    return Mixture(
        name,
        w,
        len(fit),
        len(test),
        len(held),
        float(np.mean(mixed_gain)),
        *bounds(mixed),
        float(np.mean(model_gain)),
        *bounds(alone),
    )


def _arrays(rows: Sequence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (
        np.array([r.market_price for r in rows]),
        np.array([r.probability for r in rows]),
        np.array([r.outcome for r in rows]),
    )


def finding(found: Sequence[Mixture]) -> Finding:
    columns = (
        "forecaster",
        "w",
        "n_fit_units",
        "n_test_units",
        "n_test_rows",
        "mixed_gain",
        "mixed_low",
        "mixed_high",
        "model_gain",
        "model_low",
        "model_high",
    )
    rows = tuple(
        (
            m.forecaster,
            m.w,
            m.n_fit_markets,
            m.n_test_markets,
            m.n_test_rows,
            m.mixed_gain,
            m.mixed_low,
            m.mixed_high,
            m.model_gain,
            m.model_low,
            m.model_high,
        )
        for m in found
    )
    return Finding(
        "mixture",
        "Additive information: market ⊕ forecaster, fitted on earlier markets, judged on later",
        columns,
        rows,
        (" ".join(__doc__.split("\n\n")[1].split()),),
    )
