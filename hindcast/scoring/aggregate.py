"""From stored forecasts to scored rows to leaderboards. A separate pass: no model is called.

Policies (recorded with each run):
- outcome `exclude-non-binary`: markets resolved 50-50 or ambiguous are not scored;
- failures `count-never-impute`: a failed forecast is counted, never filled in;
- market rows `paired-with-price-before-t0`: market comparisons use only rows where the
  market had a price strictly before t0, for both sides;
- plus the metric, bootstrap and market-comparison policies of `metrics.POLICIES`,
  `bootstrap.POLICY` and `vs_market.POLICY` (no interval under 5 markets, no skill ratio where
  the market's Brier is near 0).

A forecaster covering fewer markets (with a valid forecast) than the best-covered forecaster of
its slice is marked `subset: n of N markets`: its Brier is over its own markets, and its
comparison with the market is on its own matched rows only. Usage and cost come from
`usage` (per forecaster and slice, over the rows scored).

Lists and numpy, not polars frames (polars only in `to_polars()`): measured in
docs/performance.md, "Scoring: lists, not frames".
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime

import numpy as np

from hindcast.records import Market, PricePoint, Resolution, Usage
from hindcast.scoring import bootstrap, metrics, usage, vs_market
from hindcast.scoring.costs import PriceTable, load_prices
from hindcast.timeutil import require_aware

POLICIES = {
    "outcome": "exclude-non-binary",
    "failures": "count-never-impute",
    "market_rows": "paired-with-price-before-t0",
    **metrics.POLICIES,
    **bootstrap.POLICY,
    **vs_market.POLICY,
}


@dataclass(frozen=True, slots=True)
class ScoredRow:
    forecaster: str
    market_id: str
    t0: datetime
    label: str
    topic: str
    probability: float | None
    error: str | None
    outcome: float
    market_price: float | None
    regime: str = "n/a"
    coverage: str = "n/a"
    repeat: int = 0
    usage: Usage = Usage()  # usage.relevant(forecast.usage): what the usage summary reads
    resolved_at: datetime | None = None  # the effective resolution (regimes are by it)
    price_t: datetime | None = (
        None  # the instant of market_price (the last point strictly before t0)
    )
    known_at: datetime | None = None  # when the outcome was public (walk-forward splits are by it)
    venue: str = "n/a"  # where the market trades (markets.venues): polymarket, kalshi, …

    def __post_init__(self) -> None:
        if not isinstance(self.usage, Usage):  # given as a mapping or (key, value) pairs
            object.__setattr__(self, "usage", Usage.of(self.usage))

    @property
    def brier(self) -> float | None:
        return None if self.probability is None else (self.probability - self.outcome) ** 2

    @property
    def market_brier(self) -> float | None:
        return None if self.market_price is None else (self.market_price - self.outcome) ** 2


DOCUMENT_READERS = (
    "retrieval-agent",
    "tool-agent",
)  # forecasters whose default retrieval policy is `pit`


def retrieval_policy(spec: str) -> str:
    """A forecaster spec's retrieval policy (`forecasters.policies`): its `policy=` value, `pit`
    for a document reader without one, `n/a` for a forecaster that reads no documents. A name
    qualified by its run (`spec@run`, runs combined) is read without the qualifier."""
    head, sep, run = spec.rpartition("@")
    spec = head if sep and run and not any(c in run for c in ",=:/#") else spec
    name, _, rest = spec.partition(":")
    for item in rest.split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip() == "policy":
            return value.strip()
    return "pit" if name.strip() in DOCUMENT_READERS else "n/a"


SLICES: dict[str, Callable[[ScoredRow], str]] = {
    "topic": lambda r: r.topic,
    "fraction": lambda r: r.label,
    "regime": lambda r: r.regime,
    "coverage": lambda r: r.coverage,
    "policy": lambda r: retrieval_policy(r.forecaster),
    "venue": lambda r: r.venue,
}


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    forecaster: str
    slice: str
    n_forecasts: int
    n_failed: int
    n_markets: int
    n_markets_all: int  # markets of the best-covered forecaster of the slice
    subset: str | None  # "subset: n of N markets", or None
    brier: float | None
    brier_ci_low: float | None
    brier_ci_high: float | None
    n_paired: int
    n_markets_paired: int
    forecaster_brier_paired: float | None
    market_brier: float | None
    brier_diff_vs_market: float | None  # forecaster − market on the paired rows, within [−1, 1]
    diff_ci_low: float | None
    diff_ci_high: float | None
    skill_vs_market: float | None
    skill_ci_low: float | None
    skill_ci_high: float | None
    skill_note: str | None  # why skill is not shown
    ci_note: str | None  # why intervals are not shown
    log_score: float | None
    accuracy: float | None
    mean_abs_diff_market: float | None
    ece: float | None
    models: str | None  # model names, comma-separated (None: none recorded, e.g. baselines)
    prompt_tokens: int | None
    completion_tokens: int | None
    requests: int | None
    cache_hits: int | None
    retries: int | None
    latency_s: float | None
    mean_latency_s: float | None
    cost_usd: (
        float | None
    )  # list price of every token the forecasts consumed, cached replies included
    cost_fresh_usd: float | None  # of the tokens of replies not served from the cache
    cost_status: str  # priced | unknown | no model
    unpriced: str | None  # models without a price, comma-separated
    # fractional outcomes (e.g. Manifold MKT, ForecastBench PROB) left out of `accuracy` (last
    # column: the columns before it keep their order)
    n_fractional_left_out: int = 0


@dataclass(frozen=True, slots=True)
class Comparison:
    """Forecaster a vs b on their matched (market, t0) rows: mean Brier difference a − b."""

    a: str
    b: str
    n_rows: int
    n_markets: int
    brier_a: float | None
    brier_b: float | None
    difference: float | None
    ci_low: float | None
    ci_high: float | None


def score_rows(
    stored: Iterable,
    markets: Mapping[str, Market],
    resolutions: Mapping[str, Resolution],
    prices: Mapping[str, Sequence[PricePoint]],
    label_regime: Callable = lambda s: "n/a",
    coverage: Mapping | None = None,
    venues: Mapping[str, str] | None = None,
) -> list[ScoredRow]:
    """Attach outcome, the market's price at the same t0 and slice labels to each stored forecast
    (`venues`: market id → venue, `markets.venues`; "n/a" when not given). Each market's price
    instants are listed once (not per forecast) and each usage record's relevant part computed
    once (records read in bulk share them)."""
    rows = []
    price_of = _PriceLookup(prices)
    relevant: dict[int, Usage] = {}
    for s in stored:
        outcome = resolutions[s.market_id].outcome
        if outcome is None:
            continue
        point = price_of(s.market_id, s.t0)
        used = s.forecast.usage
        if id(used) not in relevant:
            relevant[id(used)] = usage.relevant(used)
        rows.append(
            ScoredRow(
                s.forecaster,
                s.market_id,
                s.t0,
                s.label,
                markets[s.market_id].topic,
                s.forecast.probability,
                s.forecast.error,
                outcome,
                None if point is None else point.p,
                label_regime(s),
                (coverage or {}).get((s.market_id, s.t0), "n/a"),
                s.repeat,
                relevant[id(used)],
                resolutions[s.market_id].resolved_at,
                None if point is None else point.t,
                resolutions[s.market_id].known_at,
                (venues or {}).get(s.market_id, "n/a"),
            )
        )
    return rows


class _PriceLookup:
    """`price_at(prices[market], t0)` with each market's instants listed once."""

    def __init__(self, prices: Mapping[str, Sequence[PricePoint]]):
        self.prices = prices
        self.instants: dict[str, list[datetime]] = {}

    def __call__(self, market_id: str, t0) -> PricePoint | None:
        history = self.prices.get(market_id, ())
        instants = self.instants.get(market_id)
        if instants is None:
            instants = self.instants[market_id] = [point.t for point in history]
        i = bisect_left(instants, require_aware(t0))
        return history[i - 1] if i else None


def leaderboard(
    rows: Iterable[ScoredRow],
    by: str | None = None,
    replicates: int = bootstrap.REPLICATES,
    seed: int = 0,
    prices: PriceTable | None = None,
    rank_by: str = "brier",
) -> list[LeaderboardRow]:
    """One row per forecaster (per slice value when `by` is given), best first within a slice by
    the `rank_by` metric's declared direction (`metrics.METRICS`; Brier: lowest first). Costs
    from `prices` (default: the shipped price table)."""
    metrics.best_first(rank_by, None)  # an unknown metric is refused before any work
    prices = prices or load_prices()
    groups: dict[tuple[str, str], list[ScoredRow]] = defaultdict(list)
    for row in rows:
        groups[(f"{by}={SLICES[by](row)}" if by else "all", row.forecaster)].append(row)
    board = mark_subsets(
        [
            summarise(name, key, group, replicates, seed, prices)
            for (key, name), group in sorted(groups.items())
        ]
    )
    return ranked(board, rank_by)


def ranked(board: Iterable[LeaderboardRow], metric: str = "brier") -> list[LeaderboardRow]:
    """Rows by slice, then best `metric` first (its declared direction; missing last), then name."""
    return sorted(
        board,
        key=lambda r: (r.slice, *metrics.best_first(metric, getattr(r, metric)), r.forecaster),
    )


def mark_subsets(board: list[LeaderboardRow]) -> list[LeaderboardRow]:
    """Each row's N (the best coverage of its slice) and its subset mark when it covers fewer."""
    best: dict[str, int] = defaultdict(int)
    for r in board:
        best[r.slice] = max(best[r.slice], r.n_markets)
    return [
        replace(
            r,
            n_markets_all=best[r.slice],
            subset=f"subset: {r.n_markets} of {best[r.slice]} markets"
            if r.n_markets < best[r.slice]
            else None,
        )
        for r in board
    ]


def summarise(
    name: str,
    slice_key: str,
    rows: list[ScoredRow],
    replicates: int,
    seed: int,
    prices: PriceTable | None = None,
) -> LeaderboardRow:
    valid = [r for r in rows if r.probability is not None]
    paired = [r for r in valid if r.market_price is not None]
    rng = bootstrap.rng_for(seed, f"{slice_key}|{name}")
    p, o = _arrays(valid)
    n_markets = len({r.market_id for r in valid})
    brier_ci = None if vs_market.too_few(n_markets) else _brier_ci(valid, replicates, rng)
    versus = _versus(paired, replicates, rng)
    accuracy = metrics.binary_accuracy(p, o)
    return LeaderboardRow(
        forecaster=name,
        slice=slice_key,
        n_forecasts=len(valid),
        n_failed=len(rows) - len(valid),
        n_markets=n_markets,
        n_markets_all=n_markets,
        subset=None,
        brier=_mean(metrics.brier(p, o)),
        brier_ci_low=brier_ci and brier_ci.low,
        brier_ci_high=brier_ci and brier_ci.high,
        n_paired=len(paired),
        **asdict(versus),
        ci_note=vs_market.ci_note(n_markets, versus.n_markets_paired),
        log_score=_mean(metrics.log_score(p, o)),
        accuracy=accuracy.value,
        mean_abs_diff_market=_mean(np.abs([r.probability - r.market_price for r in paired])),
        ece=metrics.ece(p, o) if len(valid) else None,
        **_usage(name, rows, prices or load_prices()),
        n_fractional_left_out=accuracy.fractional_left_out,
    )


def _usage(name: str, rows: list[ScoredRow], prices: PriceTable) -> dict:
    s = usage.summary(name, [r.usage for r in rows], prices)
    return dict(
        models=",".join(s.models) or None,
        prompt_tokens=s.prompt_tokens,
        completion_tokens=s.completion_tokens,
        requests=s.requests,
        cache_hits=s.cache_hits,
        retries=s.retries,
        latency_s=s.latency_s,
        mean_latency_s=s.mean_latency_s,
        cost_usd=s.cost_usd,
        cost_fresh_usd=s.cost_fresh_usd,
        cost_status=s.cost_status,
        unpriced=", ".join(s.unpriced) or None,
    )


def compare(
    rows: Iterable[ScoredRow], a: str, b: str, replicates: int = bootstrap.REPLICATES, seed: int = 0
) -> Comparison:
    """Paired, market-clustered bootstrap of the mean Brier difference a − b on matched rows."""
    by_key = defaultdict(dict)
    for r in rows:
        if r.probability is not None and r.forecaster in (a, b):
            by_key[(r.market_id, r.t0)][r.forecaster] = r
    matched = [(k, v[a], v[b]) for k, v in sorted(by_key.items()) if len(v) == 2]
    if not matched:
        return Comparison(a, b, 0, 0, None, None, None, None, None)
    diffs = np.array([ra.brier - rb.brier for _, ra, rb in matched])
    codes, n = bootstrap.market_codes([k[0] for k, _, _ in matched])
    ci = None
    if not vs_market.too_few(n):  # no interval from fewer than 5 markets
        weights = bootstrap.draw_weights(n, replicates, bootstrap.rng_for(seed, f"compare|{a}|{b}"))
        ci = bootstrap.percentile_interval(bootstrap.replicate_means(weights, codes, diffs))
    return Comparison(
        a,
        b,
        len(matched),
        n,
        _mean(np.array([ra.brier for _, ra, _ in matched])),
        _mean(np.array([rb.brier for _, _, rb in matched])),
        _mean(diffs),
        ci and ci.low,
        ci and ci.high,
    )


def _arrays(rows: list[ScoredRow]) -> tuple[np.ndarray, np.ndarray]:
    return np.array([r.probability for r in rows], float), np.array(
        [r.outcome for r in rows], float
    )


def _mean(values) -> float | None:
    values = np.asarray(values, float)
    return float(values.mean()) if values.size else None


def _brier_ci(rows: list[ScoredRow], replicates: int, rng) -> bootstrap.Interval | None:
    if not rows:
        return None
    codes, n = bootstrap.market_codes([r.market_id for r in rows])
    weights = bootstrap.draw_weights(n, replicates, rng)
    return bootstrap.percentile_interval(
        bootstrap.replicate_means(weights, codes, np.array([r.brier for r in rows]))
    )


def _versus(paired: list[ScoredRow], replicates: int, rng) -> vs_market.VsMarket:
    """Brier difference and skill against the market on rows with a market price."""
    own, market = (
        np.array([r.brier for r in paired], float),
        np.array([r.market_brier for r in paired], float),
    )
    return vs_market.compare_to_market([r.market_id for r in paired], own, market, replicates, rng)
