"""The analyses of issue 17 computed from scored runs, as Findings for the report, `hindcast
analyze` and the facade: strata (cutoff × market certainty), the defer-to-the-market rule and
walk-forward calibration (both split at an instant: fitted on markets resolved before it,
scored on the rest), the difficulty-adjusted comparison, aggregates of repeats, and trading
against the market at t0 (the default edge strategy and the shipped fee schedule), and
copy-the-market (forecasters shown the price, against their price-less twins)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from hindcast.analysis import (
    calibration,
    copying,
    deferral,
    effects,
    ensemble,
    load_fees,
    policy_pairs,
    strata,
    trading,
)
from hindcast.leaderboard.tables import combine
from hindcast.scoring import Finding


def collect(
    runs: Sequence, split: datetime | None = None, rows: list | None = None
) -> list[Finding]:
    """Every analysis of the scored runs (RunScores; matched on (market, t0) when several), in
    report order. `split`: the walk-forward instant (None: the median market's resolution);
    `rows`: `combine(runs).rows` when the caller has them already."""
    rows = combine(runs).rows if rows is None else rows
    split = split if split is not None else deferral.median_split(rows)
    found = [
        strata.strata(rows),
        effects.effects(rows),
        ensemble.aggregate(rows).finding,
        trading.simulate_trading(rows, trading.TradingStrategy(), load_fees()).finding,
        copying.copying(rows),
        policy_pairs.policy_pairs(rows),
    ]
    if split is None:
        return found + [_no_split("defer"), _no_split("calibration")]
    return found + [deferral.defer(rows, split), calibration.calibrate(rows, split).finding]


def with_resolution(
    found: list[Finding], runs: Sequence, rows: list | None = None, bundles: Sequence = ()
) -> list[Finding]:
    """`found` with the resolution-metadata stratum (disputed, rules updated) after the strata.
    `rows`: `combine(runs).rows` if the caller has them; `bundles`: the market store versions
    the runs recorded (`replay.recorded_bundle`), opened already (else opened here)."""
    rows = combine(runs).rows if rows is None else rows
    if bundles:
        return [*found[:1], strata.resolution_of_bundles(rows, bundles), *found[1:]]
    return [*found[:1], strata.resolution_of_runs(rows, [r.manifest for r in runs]), *found[1:]]


def excluded(notes: Sequence[str]) -> list[Finding]:
    """Rows left out before scoring (`--exclude-recalled`), as a report section (none: nothing)."""
    if not notes:
        return []
    return [
        Finding(
            "excluded",
            "Rows left out before scoring: markets a model recalls (memorisation probe)",
            ("note",),
            tuple((n,) for n in notes),
        )
    ]


def _no_split(key: str) -> Finding:
    return Finding(
        key,
        f"{key}: not computed",
        ("reason",),
        (("no market has a resolution instant to split at",),),
    )
