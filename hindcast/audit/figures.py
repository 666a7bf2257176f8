"""The Brier with and without the flagged forecasts of one forecaster, paired on its rows.

Only scored forecasts enter a Brier (a failure, probability None, is counted by the caller,
never imputed). With F the flagged rows and C the rest (clean):

- `brier_all`: mean Brier of all rows; `brier_clean`: of C; `all_minus_clean` = the two's
  difference, negative when the flagged forecasts lowered the Brier (the leak helped: without
  them the forecaster looks worse), with a market-clustered bootstrap interval: each replicate
  draws markets with replacement and recomputes both means on the same draw (paired; a
  replicate that drew no clean row is dropped);
- `flagged_minus_market`: on F, the mean of (Brier − the market's Brier at the same t0) over
  the rows where the market had a price, with its interval (negative: the flagged forecasts
  beat the market).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hindcast.scoring import bootstrap

FIELDS = (
    "brier_all",
    "brier_clean",
    "all_minus_clean",
    "delta_low",
    "delta_high",
    "flagged_minus_market",
    "vs_market_low",
    "vs_market_high",
)


def paired(
    rows: Sequence, flagged: Sequence[bool], key: str, replicates: int = bootstrap.REPLICATES
) -> dict:
    """The figures above for scored `rows` (each with .market_id, .brier, .market_brier) and
    whether each is flagged; `key` seeds its bootstrap stream. None where a figure has no row."""
    if not rows:
        return dict.fromkeys(FIELDS)
    codes, n_markets = bootstrap.market_codes([r.market_id for r in rows])
    flags = np.asarray(flagged, dtype=bool)
    briers = np.array([r.brier for r in rows], dtype=float)
    weights = bootstrap.draw_weights(
        n_markets, replicates, bootstrap.rng_for(bootstrap.POLICY["seed"], key)
    )
    return {
        **_with_without(weights, codes, briers, flags),
        **_versus_market(weights, codes, rows, flags),
    }


def _with_without(weights, codes, briers, flags) -> dict:
    everything = float(briers.mean())
    if flags.all():
        return {
            "brier_all": everything,
            "brier_clean": None,
            "all_minus_clean": None,
            "delta_low": None,
            "delta_high": None,
        }
    clean = float(briers[~flags].mean())
    interval = _interval(
        _means(weights, codes, briers) - _means(weights, codes[~flags], briers[~flags])
    )
    return {
        "brier_all": everything,
        "brier_clean": clean,
        "all_minus_clean": everything - clean,
        **_bounds("delta", interval),
    }


def _versus_market(weights, codes, rows, flags) -> dict:
    priced = np.array([f and r.market_brier is not None for r, f in zip(rows, flags)], dtype=bool)
    if not priced.any():
        return {"flagged_minus_market": None, "vs_market_low": None, "vs_market_high": None}
    diffs = np.array([r.brier - r.market_brier for r, p in zip(rows, priced) if p], dtype=float)
    interval = _interval(_means(weights, codes[priced], diffs))
    return {"flagged_minus_market": float(diffs.mean()), **_bounds("vs_market", interval)}


def _means(weights, codes, values) -> np.ndarray:
    with np.errstate(
        divide="ignore", invalid="ignore"
    ):  # a replicate that drew none of these rows: NaN, dropped
        return bootstrap.replicate_means(weights, codes, values)


def _interval(samples: np.ndarray):
    return bootstrap.percentile_interval(samples)


def _bounds(prefix: str, interval) -> dict:
    return {
        f"{prefix}_low": interval.low if interval else None,
        f"{prefix}_high": interval.high if interval else None,
    }
