"""CORP reliability (Dimitriadis, Gneiting & Jordan 2021; R package `reliabilitydiag`).

Each forecaster's valid forecasts p (every stored row) are recalibrated by isotonic regression of
the outcomes on p (pool-adjacent-violators, equal forecasts pooled): cp, the conditional event
probability — the reliability diagram is cp against p. The mean Brier score
S(p) then splits exactly as
    S = MCB − DSC + UNC,  MCB = S(p) − S(cp),  DSC = S(ȳ) − S(cp),  UNC = S(ȳ) = ȳ(1 − ȳ):
miscalibration (0: calibrated), discrimination (higher is better) and uncertainty (of the outcomes
alone). Intervals of MCB and DSC: bootstrap over whole markets (whole events where markets share
one), the recalibration refitted in each replicate (the isotonic fit is closer to a resample's own
outcomes, so the bootstrap MCB leans high: its interval may sit above the estimate). The
consistency band (90%, as reliabilitydiag draws it) and the miscalibration test resample outcomes
from p itself, as if the forecaster were calibrated (rows taken as independent under that
hypothesis): the test's p-value is the share of those draws whose MCB is at least the observed one.
Fixed-bin ECE (10 equal-width bins) is kept beside it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hindcast.analysis import isotonic
from hindcast.analysis.units import MarketFacts, Settings, unit_weights
from hindcast.scoring import Finding, bootstrap, metrics, vs_market

BAND_LEVEL = 0.90


@dataclass(frozen=True)
class Decomposition:
    score: float  # the mean Brier score
    mcb: float
    dsc: float
    unc: float


@dataclass(frozen=True)
class CurvePoint:
    p: float  # a distinct forecast value
    cep: float  # its recalibrated (conditional event) probability
    band_low: float
    band_high: float


@dataclass(frozen=True)
class Corp:
    forecaster: str
    n_rows: int
    decomposition: Decomposition
    mcb_low: float | None
    mcb_high: float | None
    dsc_low: float | None
    dsc_high: float | None
    p_value: float  # the miscalibration test
    ece: float
    curve: tuple[CurvePoint, ...]


def recalibrate(p, y, w=None, groups: tuple[np.ndarray, int] | None = None) -> np.ndarray:
    """Each row's isotonic (PAV) recalibrated probability; rows of weight 0 get nan. `groups`: p's
    (np.unique inverse, number of distinct values), when already known."""
    p, y = np.asarray(p, float), np.asarray(y, float)
    w = np.ones_like(p) if w is None else np.asarray(w, float)
    inverse, n = groups if groups is not None else _groups(p)
    weight, hits = np.bincount(inverse, w, n), np.bincount(inverse, w * y, n)
    fitted = np.full(n, np.nan)
    kept = weight > 0
    fitted[kept] = isotonic.fit(hits[kept] / weight[kept], weight[kept])
    return fitted[inverse]


def _groups(p: np.ndarray) -> tuple[np.ndarray, int]:
    values, inverse = np.unique(p, return_inverse=True)
    return inverse.ravel(), len(values)


def decompose(p, y, w=None, groups: tuple[np.ndarray, int] | None = None) -> Decomposition:
    """The CORP Brier decomposition (weights: resample counts; None: every row once)."""
    p, y = np.asarray(p, float), np.asarray(y, float)
    w = np.ones_like(p) if w is None else np.asarray(w, float)
    cp = recalibrate(p, y, w, groups)
    on = w > 0
    w_on = w[on]
    total = np.sum(w_on)
    mean = lambda v: float(np.sum(w_on * v[on]) / total)
    score, recalibrated, base = mean((p - y) ** 2), mean((cp - y) ** 2), mean(y)
    unc = mean((base - y) ** 2)
    return Decomposition(score, score - recalibrated, unc - recalibrated, unc)


def corp(rows: Sequence, facts: MarketFacts, settings: Settings) -> list[Corp]:
    valid = [r for r in rows if r.probability is not None]
    return [
        _one(name, [r for r in valid if r.forecaster == name], facts, settings)
        for name in sorted({r.forecaster for r in valid})
    ]


def _one(name: str, rows: Sequence, facts: MarketFacts, settings: Settings) -> Corp:
    p, y = np.array([r.probability for r in rows]), np.array([r.outcome for r in rows])
    observed = decompose(p, y)
    mcb, dsc = _cluster_intervals(p, y, [facts.unit(r.market_id) for r in rows], name, settings)
    draws, p_value = _consistency(p, observed.mcb, name, settings)
    return Corp(
        name, len(rows), observed, *mcb, *dsc, p_value, metrics.ece(p, y), _curve(p, y, draws)
    )


def _cluster_intervals(p, y, units, name: str, settings: Settings):
    codes, n = bootstrap.market_codes(list(units))
    if vs_market.too_few(n):
        return (None, None), (None, None)
    weights, groups = unit_weights(n, f"corp|{name}", settings)[: settings.band_draws], _groups(p)
    parts = np.array(
        [(d.mcb, d.dsc) for d in (decompose(p, y, row[codes], groups) for row in weights)]
    )
    return _pct(parts[:, 0]), _pct(parts[:, 1])


def _pct(samples: np.ndarray) -> tuple[float | None, float | None]:
    interval = bootstrap.percentile_interval(samples)
    return (None, None) if interval is None else (interval.low, interval.high)


def _consistency(
    p: np.ndarray, mcb: float, name: str, settings: Settings
) -> tuple[np.ndarray, float]:
    """Outcomes drawn from p (calibrated by construction): the recalibrated
    curves and the p-value."""
    rng = bootstrap.rng_for(settings.seed, f"corp-consistency|{name}")
    drawn = (rng.random((settings.band_draws, p.size)) < p).astype(float)
    groups = _groups(p)
    curves = np.vstack([recalibrate(p, row, groups=groups) for row in drawn])
    mcbs = np.mean((p - drawn) ** 2, axis=1) - np.mean((curves - drawn) ** 2, axis=1)
    return curves, float((1 + np.sum(mcbs >= mcb - 1e-12)) / (1 + settings.band_draws))


def _curve(p: np.ndarray, y: np.ndarray, draws: np.ndarray) -> tuple[CurvePoint, ...]:
    cp = recalibrate(p, y)
    tail = (1 - BAND_LEVEL) / 2 * 100
    values, first = np.unique(p, return_index=True)
    low, high = np.percentile(draws[:, first], [tail, 100 - tail], axis=0)
    return tuple(
        CurvePoint(float(v), float(cp[i]), float(lo), float(hi))
        for v, i, lo, hi in zip(values, first, low, high)
    )


def finding(found: Sequence[Corp]) -> Finding:
    columns = (
        "forecaster",
        "n_rows",
        "brier",
        "mcb",
        "mcb_low",
        "mcb_high",
        "dsc",
        "dsc_low",
        "dsc_high",
        "unc",
        "miscalibration_p",
        "ece",
    )
    rows = tuple(
        (
            c.forecaster,
            c.n_rows,
            c.decomposition.score,
            c.decomposition.mcb,
            c.mcb_low,
            c.mcb_high,
            c.decomposition.dsc,
            c.dsc_low,
            c.dsc_high,
            c.decomposition.unc,
            c.p_value,
            c.ece,
        )
        for c in found
    )
    return Finding(
        "corp",
        "CORP reliability: Brier = MCB − DSC + UNC (isotonic recalibration)",
        columns,
        rows,
        (" ".join(__doc__.split("\n\n")[1].split()),),
    )
