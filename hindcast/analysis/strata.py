"""Lifecycle × market-certainty strata, and a "defer to the market when …" rule fitted walk-forward.

Both read scored rows only (no model is called) and return `Finding` tables.

**Bands** of the market's price p at t0 (`ScoredRow.market_price`, the last point strictly
before t0), boundaries inclusive as written, compared with the literals as given:
  - consensus  p ≤ 0.1 or p ≥ 0.9        (so 0.1 and 0.9 are consensus)
  - leaning    0.1 < p < 0.3 or 0.7 < p < 0.9
  - toss-up    0.3 ≤ p ≤ 0.7              (so 0.3 and 0.7 are toss-up)
  - no price   the market had no price before t0: counted, never compared with the market.

**Strata**: per forecaster, one row per cutoff label × band (plus the margins "all"). A failure
(probability None) is counted in `n_failed` and left out of every mean, never imputed. The
forecaster's Brier is over its valid rows; the comparison with the market (difference
forecaster − market, skill 1 − Brier/market Brier) is over the paired rows (valid and priced),
with `vs_market`'s policies: market-clustered percentile intervals (`bootstrap`), none from fewer
than 5 markets, no skill ratio where the market's Brier is below 0.01.

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
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import combinations

import numpy as np

from hindcast.errors import ConfigError
from hindcast.records import RunManifest
from hindcast.scoring import Finding, ScoredRow, bootstrap, vs_market
from hindcast.timeutil import iso

TOSS_UP, LEANING, CONSENSUS, NO_PRICE, ALL = "toss-up", "leaning", "consensus", "no price", "all"
BANDS = (TOSS_UP, LEANING, CONSENSUS)
FAMILIES = ("band", "cutoff", "band×cutoff")
MIN_MARKETS = vs_market.MIN_MARKETS

STRATA_COLUMNS = (
    "forecaster",
    "cutoff",
    "band",
    "n_rows",
    "n_failed",
    "n_markets",
    "brier",
    "brier_ci_low",
    "brier_ci_high",
    "n_paired",
    "n_markets_paired",
    "forecaster_brier_paired",
    "market_brier",
    "brier_diff",
    "diff_ci_low",
    "diff_ci_high",
    "skill_vs_market",
    "skill_ci_low",
    "skill_ci_high",
    "note",
)
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
_BEFORE = re.compile(r"before=(\d+)([hdw])$")
_HOURS = {"h": 1, "d": 24, "w": 168}


def band_of(price: float | None) -> str:
    """The market-certainty band of a price at t0 (boundaries in the module docstring)."""
    if price is None:
        return NO_PRICE
    if price <= 0.1 or price >= 0.9:
        return CONSENSUS
    if 0.3 <= price <= 0.7:
        return TOSS_UP
    return LEANING


def cutoff_key(label: str) -> tuple:
    """Lifecycle order of cutoff labels: fractions ascending, then offsets before resolution
    (longest first), then explicit instants and other labels by text, "all" last."""
    if label.startswith("f="):
        try:
            return 0, float(label[2:]), label
        except ValueError:
            return 3, 0.0, label
    match = _BEFORE.match(label)
    if match:
        return 1, -int(match.group(1)) * _HOURS[match.group(2)], label
    return (4, 0.0, label) if label == ALL else (2, 0.0, label)


def _band_key(band: str) -> int:
    return (*BANDS, NO_PRICE, ALL).index(band)


# ---------------------------------------------------------------------------------------- strata


def strata(
    rows: Iterable[ScoredRow],
    replicates: int = bootstrap.REPLICATES,
    seed: int = 0,
    margins: bool = True,
) -> Finding:
    """Per forecaster × cutoff × band: counts, Brier, and the paired comparison with the market,
    with market-clustered intervals. `margins` adds the "all" rows (per
    cutoff, per band, overall)."""
    cells: dict[tuple[str, str, str], list[ScoredRow]] = defaultdict(list)
    for r in rows:
        for cutoff, band in _cell_keys(r.label, band_of(r.market_price), margins):
            cells[(r.forecaster, cutoff, band)].append(r)
    order = sorted(cells, key=lambda k: (k[0], cutoff_key(k[1]), _band_key(k[2])))
    table = tuple(_stratum(*key, cells[key], replicates, seed) for key in order)
    return Finding(
        "strata",
        "Brier against the market by cutoff × market certainty at t0",
        STRATA_COLUMNS,
        table,
        _strata_notes(),
    )


RESOLUTION_COLUMNS = ("forecaster", "resolution", *STRATA_COLUMNS[3:])
DISPUTED, RULES_AFTER, RULES_BEFORE, NEITHER = (
    "disputed",
    "rules updated at/after t0",
    "rules updated before t0",
    "neither",
)
RESOLUTION_CLASSES = (DISPUTED, RULES_AFTER, RULES_BEFORE, NEITHER, ALL)


def resolution_classes(meta, t0: datetime) -> tuple[str, ...]:
    """The resolution-metadata classes of a (market, t0): disputed; rules updated at/after t0
    (the text shown may not have existed at t0) or before it; else neither."""
    classes = []
    if meta is not None and meta.disputed:
        classes.append(DISPUTED)
    if meta is not None and meta.rules_updated_at is not None:
        classes.append(RULES_AFTER if meta.rules_updated_at >= t0 else RULES_BEFORE)
    return tuple(classes) or (NEITHER,)


def resolution_strata(
    rows: Iterable[ScoredRow], meta: dict, replicates: int = bootstrap.REPLICATES, seed: int = 0
) -> Finding:
    """Per forecaster × resolution class (a row can be in two: disputed and rules updated),
    the strata figures; `meta`: market id → MarketMeta of the run's store (missing: neither)."""
    table = _classed(
        rows,
        lambda r: resolution_classes(meta.get(r.market_id), r.t0),
        RESOLUTION_CLASSES,
        "resolution:",
        replicates,
        seed,
    )
    return Finding(
        "resolution",
        "Brier against the market by resolution metadata (disputed, rules updated)",
        RESOLUTION_COLUMNS,
        table,
        (
            "disputed: Gamma wasDisputed; rules updated: questionRulesUpdated (when: its "
            "timestamp, else an upper bound, see the README); a row can be in two classes; 'all' "
            "is every row once",
        ),
    )


EVIDENCE_COLUMNS = ("forecaster", "evidence", *STRATA_COLUMNS[3:])
EVIDENCE_CLASSES = ("present", "absent", "not labelled", ALL)


def evidence_strata(
    rows: Iterable[ScoredRow],
    labels: Mapping[tuple[str, datetime], str],
    notes: Sequence[str] = (),
    replicates: int = bootstrap.REPLICATES,
    seed: int = 0,
) -> Finding:
    """Per forecaster × evidence stratum (`labels`: (market id, t0) → "present" | "absent", from
    `hindcast.audit`'s fixed procedure; a row without one: "not labelled"), the strata figures."""
    table = _classed(
        rows,
        lambda r: (labels.get((r.market_id, r.t0), "not labelled"),),
        EVIDENCE_CLASSES,
        "evidence:",
        replicates,
        seed,
    )
    return Finding(
        "evidence",
        "Brier against the market by decisive evidence in the archive before t0 (a fixed "
        "procedure, not the forecaster's own retrieval)",
        EVIDENCE_COLUMNS,
        table,
        tuple(notes),
    )


def _classed(rows, classes_of, order: tuple[str, ...], prefix: str, replicates: int, seed: int):
    """Per forecaster × class (`classes_of(row)`, each row also in "all"), the strata figures."""
    cells: dict[tuple[str, str], list[ScoredRow]] = defaultdict(list)
    for r in rows:
        for name in (*classes_of(r), ALL):
            cells[(r.forecaster, name)].append(r)
    keys = sorted(cells, key=lambda k: (k[0], order.index(k[1])))
    return tuple(
        (f, name, *_stratum(f, ALL, prefix + name, cells[(f, name)], replicates, seed)[3:])
        for f, name in keys
    )


def resolution_of_runs(rows: Iterable[ScoredRow], manifests: Sequence[RunManifest]) -> Finding:
    """`resolution_strata` against the market store versions the runs recorded."""
    from pathlib import Path

    from hindcast.markets import open_version

    meta: dict = {}
    for manifest in manifests:
        recorded = manifest.market_store
        meta |= open_version(Path(recorded["root"]), recorded["version"]).bundle.meta
    return resolution_strata(rows, meta)


def _cell_keys(label: str, band: str, margins: bool) -> list[tuple[str, str]]:
    if not margins:
        return [(label, band)]
    return [(label, band), (label, ALL), (ALL, band), (ALL, ALL)]


def _stratum(
    forecaster: str, cutoff: str, band: str, rows: list[ScoredRow], replicates: int, seed: int
) -> tuple:
    valid = [r for r in rows if r.probability is not None]
    paired = [r for r in valid if r.market_price is not None]
    key = f"strata|{forecaster}|{cutoff}|{band}"
    brier, brier_ci = _mean_ci(
        [r.market_id for r in valid],
        [r.brier for r in valid],
        replicates,
        bootstrap.rng_for(seed, key + "|brier"),
    )
    vs = vs_market.compare_to_market(
        [r.market_id for r in paired],
        np.array([r.brier for r in paired], float),
        np.array([r.market_brier for r in paired], float),
        replicates,
        bootstrap.rng_for(seed, key + "|market"),
    )
    return (
        forecaster,
        cutoff,
        band,
        len(rows),
        len(rows) - len(valid),
        len({r.market_id for r in rows}),
        brier,
        *_ends(brier_ci),
        len(paired),
        vs.n_markets_paired,
        vs.forecaster_brier_paired,
        vs.market_brier,
        vs.brier_diff_vs_market,
        vs.diff_ci_low,
        vs.diff_ci_high,
        vs.skill_vs_market,
        vs.skill_ci_low,
        vs.skill_ci_high,
        _stratum_note(band, valid, vs),
    )


def _stratum_note(band: str, valid: list[ScoredRow], vs: vs_market.VsMarket) -> str | None:
    if band == NO_PRICE:
        return "no market price before t0: not compared with the market"
    notes = [
        vs_market.ci_note(len({r.market_id for r in valid}), vs.n_markets_paired),
        None if vs.n_markets_paired == 0 else vs.skill_note,
    ]
    if not valid:
        notes = ["every forecast failed: no Brier"]
    return "; ".join(n for n in notes if n) or None


def _strata_notes() -> tuple[str, ...]:
    return (
        (
            "bands of the market price p at t0: consensus p ≤ 0.1 or p ≥ 0.9; leaning 0.1 < p < "
            "0.3 or 0.7 < p < 0.9; toss-up 0.3 ≤ p ≤ 0.7; no price: none before t0 (not compared "
            "with the market)"
        ),
        "failures (no probability) are counted in n_failed and left out of every mean, never "
        "imputed",
        (
            "brier: over the valid rows; brier_diff = forecaster − market and skill = 1 − "
            "Brier/market Brier over the paired rows (valid, with a market price); negative "
            "brier_diff: the forecaster beat the market"
        ),
        (
            "95% market-clustered percentile bootstrap intervals; none from fewer than "
            f"{MIN_MARKETS} markets; no skill where the market's Brier < "
            f"{vs_market.MIN_MARKET_BRIER:g}"
        ),
        "repeats of one forecast are rows of their own, resampled with their market",
    )


# ----------------------------------------------------------------------------------------- defer


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
    return rule.gain, rule.n_deferred, len(bands), [_band_key(b) for b in bands], cutoffs


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
        *_ends(gain_ci),
        float((deferred - market).mean()),
        *_ends(dvm_ci),
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


def _mean_ci(market_ids: list[str], values: list[float], replicates: int, rng):
    """Mean and its market-clustered interval (None under MIN_MARKETS markets)."""
    if not values:
        return None, None
    codes, n = bootstrap.market_codes(market_ids)
    array = np.array(values, float)
    if vs_market.too_few(n):
        return float(array.mean()), None
    weights = bootstrap.draw_weights(n, replicates, rng)
    return float(array.mean()), bootstrap.percentile_interval(
        bootstrap.replicate_means(weights, codes, array)
    )


def _ends(interval: bootstrap.Interval | None) -> tuple[float | None, float | None]:
    return (None, None) if interval is None else (interval.low, interval.high)
