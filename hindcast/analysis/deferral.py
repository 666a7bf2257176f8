"""A "defer to the market when …" rule fitted walk-forward on the strata's bands and cutoffs.

It reads scored rows only (no model is called) and returns a `Finding` table.

**Defer**: a market is a training market when its outcome was public (`known_at`, the instant
the outcome became public — not the effective resolution `resolved_at`, which may be earlier)
strictly before the split instant, a test market otherwise (t0 plays no part; a market without
that instant is in neither). On each forecaster's paired training rows the rule minimising
the total Brier is chosen from a family — `band`: defer in a set of bands; `cutoff`: defer at a
set of cutoffs; `band×cutoff`: defer in a band set at a cutoff set — then applied unchanged to the
paired test rows. Ties go to the rule deferring fewer training rows, then to fewer bands, then to
the earlier bands and cutoffs. A cutoff seen only in the test period is never deferred at (the
cutoff families), as no training row chose it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import combinations

import numpy as np

from hindcast.analysis.strata import (
    BANDS,
    MIN_MARKETS,
    band_key,
    band_of,
    cutoff_key,
    ends,
)
from hindcast.errors import ConfigError
from hindcast.scoring import Finding, ScoredRow, bootstrap
from hindcast.timeutil import iso

FAMILIES = ("band", "cutoff", "band×cutoff")

DEFER_COLUMNS = (
    "forecaster",
    "rule",
    "train_markets",
    "train_rows",
    "test_markets",
    "test_rows",
    "test_failed",
    "n_deferred",
    "forecaster_brier",
    "deferred_brier",
    "market_brier",
    "gain",
    "gain_ci_low",
    "gain_ci_high",
    "deferred_vs_market",
    "dvm_ci_low",
    "dvm_ci_high",
    "note",
)


@dataclass(frozen=True)
class Rule:
    """Defer to the market on rows whose band is in `bands` (None: any band) and whose cutoff is in
    `cutoffs` (None: any cutoff). `gain`: change in the training Brier sum (≤ 0)."""

    bands: tuple[str, ...] | None
    cutoffs: tuple[str, ...] | None
    gain: float = 0.0
    n_deferred: int = 0

    def applies(self, row: ScoredRow) -> bool:
        return (self.bands is None or band_of(row.market_price) in self.bands) and (
            self.cutoffs is None or row.label in self.cutoffs
        )

    def describe(self) -> str:
        if self.n_deferred == 0:
            return "never defer"
        parts = [
            f"band in {{{', '.join(self.bands)}}}" if self.bands not in (None, BANDS) else "",
            f"cutoff in {{{', '.join(self.cutoffs)}}}" if self.cutoffs is not None else "",
        ]
        return (
            "defer when " + " and ".join(p for p in parts if p)
            if any(parts)
            else "always defer (every priced row)"
        )


def split_markets(
    rows: Iterable[ScoredRow], split: datetime
) -> tuple[set[str], set[str], set[str]]:
    """(training, test, undated) market ids: training when the market's instant (`market_instants`)
    is strictly before `split`, test at or after it, undated without one."""
    instants = market_instants(rows)
    undated = {m for m, t in instants.items() if t is None}
    train = {m for m, t in instants.items() if t is not None and t < split}
    return train, set(instants) - train - undated, undated


def market_instants(rows: Iterable[ScoredRow]) -> dict[str, datetime | None]:
    """Each market's instant its outcome became public: the latest `known_at` of its rows (all of
    one market's rows carry the same one), None when any of its rows has none."""
    latest: dict[str, datetime | None] = {}
    for r in rows:
        seen = latest.get(r.market_id, r.known_at)
        latest[r.market_id] = None if seen is None or r.known_at is None else max(seen, r.known_at)
    return latest


def median_split(rows: Iterable[ScoredRow]) -> datetime | None:
    """A default split: the median dated market's instant (the (M // 2)-th of M in order, from 0),
    so about half the markets train and the rest test. None: no market has a resolution instant."""
    instants = sorted(t for t in market_instants(rows).values() if t is not None)
    return instants[len(instants) // 2] if instants else None


def choose_rule(train: Sequence[ScoredRow], family: str = "band") -> Rule:
    """The rule of `family` minimising the Brier of the paired training rows (ties: fewer deferred
    rows, fewer bands, earlier bands, earlier cutoffs). Exact: the objective is a sum over rows."""
    _check_family(family)
    paired = [r for r in train if r.probability is not None and r.market_price is not None]
    band_sets = (
        [None] if family == "cutoff" else [s for k in range(4) for s in combinations(BANDS, k)]
    )
    candidates = [
        _best_cutoffs(bands, paired) if family != "band" else _rule(bands, None, paired)
        for bands in band_sets
    ]
    return min(candidates, key=_rule_rank)


def _check_family(family: str) -> None:
    if family not in FAMILIES:
        raise ConfigError(f"unknown deferral rule family {family!r} (known: {', '.join(FAMILIES)})")


def _best_cutoffs(bands: tuple[str, ...] | None, paired: list[ScoredRow]) -> Rule:
    """For a fixed band set, the cutoff set minimising the sum: each cutoff whose deferral strictly
    lowers it (the sum is additive over cutoffs, so this is the exact minimum with fewest rows)."""
    labels = sorted({r.label for r in paired}, key=cutoff_key)
    chosen = tuple(c for c in labels if _rule(bands, (c,), paired).gain < 0.0)
    return _rule(bands, chosen, paired)


def _rule(bands, cutoffs, paired: list[ScoredRow]) -> Rule:
    probe = Rule(bands, cutoffs)
    deltas = [r.market_brier - r.brier for r in paired if probe.applies(r)]
    return Rule(bands, cutoffs, math.fsum(deltas), len(deltas))


def _rule_rank(rule: Rule) -> tuple:
    bands = BANDS if rule.bands is None else rule.bands
    cutoffs = [cutoff_key(c) for c in rule.cutoffs or ()]
    return rule.gain, rule.n_deferred, len(bands), [band_key(b) for b in bands], cutoffs


def defer(
    rows: Iterable[ScoredRow],
    split: datetime,
    family: str = "band",
    replicates: int = bootstrap.REPLICATES,
    seed: int = 0,
    min_markets: int = MIN_MARKETS,
) -> Finding:
    """Per forecaster: the deferral rule chosen on markets whose outcome was public before `split`,
    scored on the markets public at or after it (forecaster, deferred and market Brier on paired
    test rows, and market-clustered intervals on the paired differences)."""
    _check_family(family)
    rows = list(rows)
    train_ids, test_ids, undated = split_markets(rows, split)
    by_forecaster: dict[str, list[ScoredRow]] = defaultdict(list)
    for r in rows:
        by_forecaster[r.forecaster].append(r)
    table = tuple(
        _defer_row(
            name, by_forecaster[name], train_ids, test_ids, family, replicates, seed, min_markets
        )
        for name in sorted(by_forecaster)
    )
    return Finding(
        "defer",
        f"Defer to the market when … (rule family: {family}; split at {iso(split)})",
        DEFER_COLUMNS,
        table,
        _defer_notes(split, family, min_markets, undated),
    )


def _defer_row(
    name: str,
    rows: list[ScoredRow],
    train_ids: set[str],
    test_ids: set[str],
    family: str,
    replicates: int,
    seed: int,
    min_markets: int,
) -> tuple:
    train = [r for r in rows if r.market_id in train_ids]
    test = [r for r in rows if r.market_id in test_ids]
    train_paired, test_paired = _paired(train), _paired(test)
    n_train, n_test = (
        len({r.market_id for r in train_paired}),
        len({r.market_id for r in test_paired}),
    )
    head = (name,)
    counts = (
        n_train,
        len(train_paired),
        n_test,
        len(test_paired),
        sum(r.probability is None for r in test),
    )
    if n_train < min_markets:
        note = (
            f"too few training markets: {n_train} with a paired row (< {min_markets}); no rule "
            "chosen"
        )
        return (*head, None, *counts, *([None] * 10), note)
    rule = choose_rule(train_paired, family)
    if not test_paired:
        return (
            *head,
            rule.describe(),
            *counts,
            *([None] * 10),
            "no test market with a paired row: no figure",
        )
    return (
        *head,
        rule.describe(),
        *counts,
        *_test_figures(name, rule, test_paired, replicates, seed, min_markets),
    )


def _paired(rows: list[ScoredRow]) -> list[ScoredRow]:
    return [r for r in rows if r.probability is not None and r.market_price is not None]


def _test_figures(
    name: str, rule: Rule, test: list[ScoredRow], replicates: int, seed: int, min_markets: int
) -> tuple:
    own = np.array([r.brier for r in test], float)
    market = np.array([r.market_brier for r in test], float)
    applies = np.array([rule.applies(r) for r in test], bool)
    deferred = np.where(applies, market, own)
    ids = [r.market_id for r in test]
    few = len(set(ids)) < min_markets
    rng = bootstrap.rng_for(seed, f"defer|{name}")
    gain_ci, dvm_ci = (
        (None, None)
        if few
        else _two_intervals(ids, deferred - own, deferred - market, replicates, rng)
    )
    note = f"too few test markets: {len(set(ids))} (< {min_markets}), no interval" if few else None
    return (
        int(applies.sum()),
        float(own.mean()),
        float(deferred.mean()),
        float(market.mean()),
        float((deferred - own).mean()),
        *ends(gain_ci),
        float((deferred - market).mean()),
        *ends(dvm_ci),
        note,
    )


def _two_intervals(ids: list[str], first: np.ndarray, second: np.ndarray, replicates: int, rng):
    """Intervals of two paired means from the same market draws."""
    codes, n = bootstrap.market_codes(ids)
    weights = bootstrap.draw_weights(n, replicates, rng)
    return tuple(
        bootstrap.percentile_interval(bootstrap.replicate_means(weights, codes, v))
        for v in (first, second)
    )


def _defer_notes(
    split: datetime, family: str, min_markets: int, undated: set[str]
) -> tuple[str, ...]:
    notes = [
        (
            f"training markets: outcome public (known_at) before {iso(split)}; test markets: at "
            "or after it (a market is in one period only; t0 plays no part)"
        ),
        (
            f"rule family {family!r}: the rule minimising the Brier of the paired training rows, "
            "applied unchanged to the test rows; ties: fewer deferred training rows, then fewer "
            "and earlier bands and cutoffs"
        ),
        (
            "figures on paired test rows (valid probability and a market price); failures "
            "counted in test_failed, never imputed nor deferred"
        ),
        "gain = deferred − forecaster Brier (negative: deferring helped); deferred_vs_market "
        "= deferred − market",
        (
            f"no rule from fewer than {min_markets} training markets; no interval from fewer "
            f"than {min_markets} test markets (95% market-clustered percentile bootstrap)"
        ),
    ]
    if undated:
        notes.append(
            f"{len(undated)} market{'' if len(undated) == 1 else 's'} without the instant its "
            "outcome became public: in neither period"
        )
    return tuple(notes)


# ---------------------------------------------------------------------------------------- shared
