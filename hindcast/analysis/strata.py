"""Lifecycle × market-certainty strata (the "defer to the market when …" rule fitted on them:
`hindcast.analysis.deferral`).

They read scored rows only (no model is called) and return `Finding` tables.

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
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

import numpy as np

from hindcast import markets
from hindcast.records import RunManifest
from hindcast.scoring import Finding, ScoredRow, bootstrap, vs_market

TOSS_UP, LEANING, CONSENSUS, NO_PRICE, ALL = "toss-up", "leaning", "consensus", "no price", "all"
BANDS = (TOSS_UP, LEANING, CONSENSUS)
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


def band_key(band: str) -> int:
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
    order = sorted(cells, key=lambda k: (k[0], cutoff_key(k[1]), band_key(k[2])))
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

    meta: dict = {}
    for manifest in manifests:
        if (recorded := manifest.market_store) is not None:
            meta |= markets.open_version(Path(recorded.root), recorded.version).bundle.meta
    return resolution_strata(rows, meta)


def resolution_of_bundles(rows: Iterable[ScoredRow], bundles: Sequence) -> Finding:
    """`resolution_strata` against the runs' recorded market store versions, opened already
    (`replay.recorded_bundle`: the versions `resolution_of_runs` opens, in the same order)."""
    meta: dict = {}
    for bundle in bundles:
        meta |= bundle.meta
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
    brier, brier_ci = mean_ci(
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
        *ends(brier_ci),
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


def mean_ci(market_ids: list[str], values: list[float], replicates: int, rng):
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


def ends(interval: bootstrap.Interval | None) -> tuple[float | None, float | None]:
    return (None, None) if interval is None else (interval.low, interval.high)
