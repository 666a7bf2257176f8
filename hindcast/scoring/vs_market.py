"""The comparison with the market, bounded and honest about small samples.

On a forecaster's rows where the market had a price strictly before the same t0 ("paired"
rows), the headline is the **Brier difference** forecaster − market: a mean of per-row
differences of two numbers in [0, 1], so always within [−1, 1] (negative: the forecaster beat
the market). The skill ratio 1 − Brier/market Brier is given only where the market's Brier on
those rows is at least MIN_MARKET_BRIER: near 0 the ratio explodes (−1.89e+06 for a
forecaster on a few markets the market had all but settled) and says nothing. No interval is
drawn from fewer than MIN_MARKETS markets: a bootstrap over 1–4 markets gives intervals that
look precise and are not. Every omission carries its reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hindcast.scoring import bootstrap, metrics

MIN_MARKETS = 5  # fewer markets: no interval ("n too small")
MIN_MARKET_BRIER = 0.01  # a lower market Brier: no skill ratio
POLICY = {
    "intervals": f"none-under-{MIN_MARKETS}-markets",
    "skill": f"none-under-market-brier-{MIN_MARKET_BRIER:g}",
}


@dataclass(frozen=True)
class VsMarket:
    n_markets_paired: int
    forecaster_brier_paired: float | None
    market_brier: float | None
    brier_diff_vs_market: float | None
    diff_ci_low: float | None
    diff_ci_high: float | None
    skill_vs_market: float | None
    skill_ci_low: float | None
    skill_ci_high: float | None
    skill_note: str | None


def too_few(n_markets: int) -> bool:
    return n_markets < MIN_MARKETS


def ci_note(n_markets: int, n_markets_paired: int) -> str | None:
    """Why an interval is missing, or None when none is for want of markets."""
    if too_few(n_markets):
        return (
            f"n too small: {n_markets} market{'' if n_markets == 1 else 's'} (< {MIN_MARKETS}), "
            "no interval"
        )
    if too_few(n_markets_paired):
        return (
            f"n too small vs market: {n_markets_paired} "
            f"market{'' if n_markets_paired == 1 else 's'} with a price (< {MIN_MARKETS}), no "
            "interval"
        )
    return None


def skill_note(market_brier: float | None) -> str | None:
    if market_brier is None:
        return "no row with a market price"
    if market_brier < MIN_MARKET_BRIER:
        return (
            f"skill not shown: market Brier {market_brier:.4f} < {MIN_MARKET_BRIER:g} on these "
            "rows (ratio unstable)"
        )
    return None


def compare_to_market(
    market_ids: list[str], own: np.ndarray, market: np.ndarray, replicates: int, rng
) -> VsMarket:
    """Difference, skill and their market-clustered intervals on paired rows (Brier arrays)."""
    if not market_ids:
        return VsMarket(0, None, None, None, None, None, None, None, None, skill_note(None))
    codes, n = bootstrap.market_codes(market_ids)
    own_mean, market_mean = float(own.mean()), float(market.mean())
    note = skill_note(market_mean)
    skill = None if note else metrics.skill(own_mean, market_mean)
    diff_ci = skill_ci = None
    if not too_few(n):
        weights = bootstrap.draw_weights(n, replicates, rng)
        diff_ci = bootstrap.percentile_interval(
            bootstrap.replicate_means(weights, codes, own - market)
        )
        skill_ci = None if skill is None else _skill_interval(weights, codes, own, market, n)
    return VsMarket(
        n,
        own_mean,
        market_mean,
        float((own - market).mean()),
        diff_ci and diff_ci.low,
        diff_ci and diff_ci.high,
        skill,
        skill_ci and skill_ci.low,
        skill_ci and skill_ci.high,
        note,
    )


def _skill_interval(weights, codes, own, market, n) -> bootstrap.Interval | None:
    with np.errstate(divide="ignore", invalid="ignore"):
        samples = 1.0 - (weights @ bootstrap.cluster_sums(codes, own, n)[0]) / (
            weights @ bootstrap.cluster_sums(codes, market, n)[0]
        )
    return bootstrap.percentile_interval(samples)
