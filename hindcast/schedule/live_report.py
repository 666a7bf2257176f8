"""The backtest–live report: per forecaster, its live Brier against its hindcast Brier on the same
markets at the same instants (hence the same lifetime fractions), the mean gap (live − hindcast)
with a 95% bootstrap interval clustered by market (`scoring.bootstrap`), and the sweep's
hindcast Brier by regime (T1/T2/T3) against the live Brier."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hindcast import replay, runs, scoring
from hindcast.errors import CutoffError
from hindcast.schedule import live
from hindcast.schedule.config import ScheduleConfig
from hindcast.schedule.state import State
from hindcast.schedule.sweeps import series_scores
from hindcast.timeutil import ONE_DAY


@dataclass(frozen=True)
class Gap:
    forecaster: str
    pairs: int  # (market, t0) with a scored live and a scored hindcast forecast
    markets: int
    fraction: float | None  # mean lifetime fraction of the pairs' t0
    live_brier: float | None
    hindcast_brier: float | None
    gap: float | None  # mean of live − hindcast Brier
    low: float | None
    high: float | None


@dataclass(frozen=True)
class RegimeRow:
    forecaster: str
    regime: str
    hindcast_n: int
    hindcast_brier: float | None
    live_n: int
    live_brier: float | None


@dataclass(frozen=True)
class LiveReport:
    sweep: str
    live_forecasts: int  # stored live forecasts (every market)
    scored: int  # of resolved markets, scored
    late: int  # made at or after the market's effective resolution: never scored
    gaps: tuple[Gap, ...]
    regimes: tuple[RegimeRow, ...]


def for_config(config: ScheduleConfig) -> LiveReport:
    """The report of a service config, from its run database."""
    store = runs.RunStore(config.db_url, read_only=True)
    return report(config, State(store.engine, create=False), store)


def report(config: ScheduleConfig, state: State, store) -> LiveReport:
    cfg = config.live
    if cfg is None:
        raise live.ScheduleError(f"config {config.path}: no [live] section")
    spec = config.sweep(cfg.sweep).spec
    rid = live.run_id(cfg.sweep)
    bundle = live.newest_bundle(spec.store)
    stored = store.forecasts(rid) if any(r.id == rid for r in store.runs()) else []
    rows, late = live.live_scores(store, rid, bundle) if stored else ([], 0)
    hindcast = [
        row
        for recorded in live.hindcast_runs(state).values()
        for row in replay.load_scored(store, recorded["run_id"]).rows
    ]
    lifetimes = _lifetimes(bundle)
    gaps = tuple(_gap(name, rows, hindcast, lifetimes) for name in spec.forecasters)
    return LiveReport(
        cfg.sweep,
        len(stored),
        len(rows),
        late,
        gaps,
        _by_regime(spec.forecasters, rows, _sweep_rows(cfg.sweep, state, store)),
    )


def _sweep_rows(sweep: str, state: State, store) -> list:
    scores = series_scores(sweep, state, store)
    return [] if scores is None else scores.rows


def _lifetimes(bundle) -> dict:
    if bundle is None:
        return {}
    markets = {m.id: m for m in bundle.markets}
    lives = {}
    for r in bundle.resolutions:
        try:
            lives[r.market_id] = replay.cutoffs.lifetime(
                markets[r.market_id], r, bundle.prices.get(r.market_id, ())
            )
        except CutoffError:
            continue
    return lives


def fraction(life, t0) -> float | None:
    """The lifetime fraction of t0 on the cutoff rules' scale (1.0: a day before resolution)."""

    span = (life.end - ONE_DAY - life.start).total_seconds()
    return None if span <= 0 else (t0 - life.start).total_seconds() / span


def _gap(name: str, rows: list, hindcast: list, lifetimes: dict) -> Gap:
    def briers(source) -> dict:
        return {
            (r.market_id, r.t0, r.repeat): r.brier
            for r in source
            if r.forecaster == name and r.brier is not None
        }

    live_b, hind_b = briers(rows), briers(hindcast)
    keys = sorted(set(live_b) & set(hind_b))
    if not keys:
        return Gap(name, 0, 0, None, None, None, None, None, None)
    diffs = np.array([live_b[k] - hind_b[k] for k in keys])
    fractions = [f for m, t0, _ in keys if m in lifetimes and (f := fraction(lifetimes[m], t0))]
    low, high = _interval(name, [m for m, _, _ in keys], diffs)
    return Gap(
        name,
        len(keys),
        len({m for m, _, _ in keys}),
        float(np.mean(fractions)) if fractions else None,
        float(np.mean([live_b[k] for k in keys])),
        float(np.mean([hind_b[k] for k in keys])),
        float(diffs.mean()),
        low,
        high,
    )


def _interval(name: str, markets: list[str], diffs) -> tuple[float | None, float | None]:
    codes, n = scoring.bootstrap.market_codes(markets)
    if n < 2:
        return None, None  # one market: no spread to resample
    rng = scoring.bootstrap.rng_for(0, f"live-gap:{name}")
    weights = scoring.bootstrap.draw_weights(n, scoring.bootstrap.REPLICATES, rng)
    found = scoring.bootstrap.percentile_interval(
        scoring.bootstrap.replicate_means(weights, codes, diffs)
    )
    return (found.low, found.high) if found else (None, None)


def _by_regime(forecasters, live_rows: list, sweep_rows: list) -> tuple[RegimeRow, ...]:
    out = []
    for name in forecasters:
        mine = [r.brier for r in live_rows if r.forecaster == name and r.brier is not None]
        regimes = sorted({r.regime for r in sweep_rows if r.forecaster == name})
        for regime in regimes:
            hind = [
                r.brier
                for r in sweep_rows
                if r.forecaster == name and r.regime == regime and r.brier is not None
            ]
            out.append(RegimeRow(name, regime, len(hind), _mean(hind), len(mine), _mean(mine)))
    return tuple(out)


def _mean(values: list) -> float | None:
    return float(np.mean(values)) if values else None


# -- text -----------------------------------------------------------------------------------------
def text(r: LiveReport) -> str:
    lines = [
        f"live arm of sweep {r.sweep!r}: {r.live_forecasts} live forecast(s) stored, "
        f"{r.scored} scored (resolved markets), {r.late} made at or after resolution (unscored)",
        "",
        "backtest–live gap (same markets, same t0 → same lifetime fraction; "
        "gap = live − hindcast Brier, 95% market-clustered bootstrap)",
        f"{'forecaster':<24} {'pairs':>5} {'mkts':>4} {'frac':>5} {'live':>7} {'hind':>7} "
        f"{'gap':>8}  interval",
    ]
    for g in r.gaps:
        interval = f"[{_f(g.low)}, {_f(g.high)}]" if g.low is not None else "n/a (< 2 markets)"
        lines.append(
            f"{g.forecaster:<24} {g.pairs:>5} {g.markets:>4} {_f(g.fraction, 2):>5} "
            f"{_f(g.live_brier):>7} {_f(g.hindcast_brier):>7} {_f(g.gap):>8}  {interval}"
        )
    lines += ["", "hindcast Brier by regime (the sweep's rows) against live Brier"]
    lines.append(f"{'forecaster':<24} {'regime':<8} {'n':>5} {'hind':>7} {'live n':>6} {'live':>7}")
    for x in r.regimes:
        lines.append(
            f"{x.forecaster:<24} {x.regime:<8} {x.hindcast_n:>5} {_f(x.hindcast_brier):>7} "
            f"{x.live_n:>6} {_f(x.live_brier):>7}"
        )
    return "\n".join(lines)


def _f(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"
