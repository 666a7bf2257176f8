"""Strata by cutoff × market certainty, recomputed independently from the per-forecast table, and
the defer-to-the-market rule fitted only on markets resolved before the split (walk-forward)."""

from __future__ import annotations

import json
import math
from datetime import timedelta
from itertools import chain, combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindcast.analysis.deferral import Rule, choose_rule, defer, median_split, split_markets
from hindcast.analysis.strata import (
    BANDS,
    CONSENSUS,
    LEANING,
    NO_PRICE,
    TOSS_UP,
    band_of,
    strata,
)
from hindcast.scoring.aggregate import ScoredRow
from tests.helpers import at

T = at("2025-06-01T00:00:00")
SPLIT = at("2025-09-01T00:00:00")
EARLY, LATE = at("2025-08-01T00:00:00"), at("2025-10-01T00:00:00")
# Dyadic prices and probabilities: every square and sum is exact, so means compare with ==.
PRICES = (0.0625, 0.25, 0.5, 0.875, 0.9375, 0.375, 0.75, None)
PROBS = (0.5, 0.25, 0.75, 0.125, None, 0.875, 1.0, 0.0, 0.625)


def row(forecaster, market, label, p, outcome, price, resolved_at=LATE, k=0, known_at=None):
    """A row of a market resolved at `resolved_at`, its outcome public at
    `known_at` (default: then)."""
    return ScoredRow(
        forecaster,
        market,
        T + timedelta(days=k),
        label,
        "politics",
        p,
        None if p is not None else "invalid",
        outcome,
        price,
        resolved_at=resolved_at,
        known_at=resolved_at if known_at is None else known_at,
    )


def crafted() -> list[ScoredRow]:
    """2 forecasters × 7 markets × 2 cutoffs, prices in every band (and none), some failures."""
    rows = []
    for f, name in enumerate(("alpha", "beta")):
        for m in range(7):
            for c, label in enumerate(("f=0.25", "f=0.75")):
                i = 3 * m + 5 * c + 2 * f
                rows.append(
                    row(
                        name,
                        f"m{m}",
                        label,
                        PROBS[i % len(PROBS)],
                        float(m % 2),
                        PRICES[(m + 3 * c) % len(PRICES)],
                        k=c,
                    )
                )
    return rows


def reference(rows, forecaster, cutoff, band) -> dict:
    """The figures of one stratum by a plain loop over the per-forecast table."""
    cell = [
        r
        for r in rows
        if r.forecaster == forecaster
        and cutoff in ("all", r.label)
        and band in ("all", band_of(r.market_price))
    ]
    valid = [r for r in cell if r.probability is not None]
    paired = [r for r in valid if r.market_price is not None]
    out = {
        "n_rows": len(cell),
        "n_failed": len(cell) - len(valid),
        "n_markets": len({r.market_id for r in cell}),
        "n_paired": len(paired),
        "n_markets_paired": len({r.market_id for r in paired}),
    }
    out["brier"] = (
        sum((r.probability - r.outcome) ** 2 for r in valid) / len(valid) if valid else None
    )
    own = sum((r.probability - r.outcome) ** 2 for r in paired) / len(paired) if paired else None
    market = (
        sum((r.market_price - r.outcome) ** 2 for r in paired) / len(paired) if paired else None
    )
    out |= {"forecaster_brier_paired": own, "market_brier": market}
    out["brier_diff"] = (
        None
        if not paired
        else sum(
            (r.probability - r.outcome) ** 2 - (r.market_price - r.outcome) ** 2 for r in paired
        )
        / len(paired)
    )
    out["skill_vs_market"] = None if not paired or market < 0.01 else 1 - own / market
    return out


def test_every_stratum_equals_a_plain_loop_over_the_per_forecast_table():
    rows = crafted()
    table = strata(rows, replicates=200).to_json()["rows"]
    keys = {
        (r.forecaster, c, b)
        for r in rows
        for c in (r.label, "all")
        for b in (band_of(r.market_price), "all")
    }
    assert {(t["forecaster"], t["cutoff"], t["band"]) for t in table} == keys
    assert {b for _, _, b in keys} == {*BANDS, NO_PRICE, "all"}  # the crafted rows reach every band
    for t in table:
        expected = reference(rows, t["forecaster"], t["cutoff"], t["band"])
        assert {k: t[k] for k in expected} == expected, t
        if t["band"] == NO_PRICE:
            assert (
                t["market_brier"] is t["brier_diff"] is t["diff_ci_low"] is None
                and "not compared" in t["note"]
            )
        elif t["n_markets_paired"] >= 5:
            assert t["diff_ci_low"] <= t["brier_diff"] <= t["diff_ci_high"]
        else:
            assert t["diff_ci_low"] is t["diff_ci_high"] is None
            assert "n too small" in t["note"] or (
                t["n_failed"] == t["n_rows"] and "every forecast failed" in t["note"]
            )


def test_cells_come_in_lifecycle_order_and_margins_can_be_left_out():
    rows = [
        row("a", "m", label, 0.5, 1.0, 0.5)
        for label in (
            "before=1d",
            "f=1",
            "at=2025-07-01T00:00:00Z",
            "before=2w",
            "f=0.25",
            "before=36h",
        )
    ]
    table = strata(rows, margins=False, replicates=10).to_json()["rows"]
    assert [t["cutoff"] for t in table] == [
        "f=0.25",
        "f=1",
        "before=2w",
        "before=36h",
        "before=1d",
        "at=2025-07-01T00:00:00Z",
    ]
    assert "all" not in {t["band"] for t in table}


@pytest.mark.parametrize(
    ("price", "band"),
    [
        (0.0, CONSENSUS),
        (0.1, CONSENSUS),
        (math.nextafter(0.1, 1), LEANING),
        (math.nextafter(0.3, 0), LEANING),
        (0.3, TOSS_UP),
        (0.5, TOSS_UP),
        (0.7, TOSS_UP),
        (math.nextafter(0.7, 1), LEANING),
        (math.nextafter(0.9, 0), LEANING),
        (0.9, CONSENSUS),
        (1.0, CONSENSUS),
        (None, NO_PRICE),
        (1 - 0.9, CONSENSUS),
        (1 - 0.7, TOSS_UP),
    ],
)
def test_band_boundaries_are_exact(price, band):
    assert band_of(price) == band
    table = strata(
        [row("a", "m", "f=0.5", 0.5, 1.0, price)], margins=False, replicates=10
    ).to_json()["rows"]
    assert [t["band"] for t in table] == [band]


def test_failures_are_counted_never_imputed():
    rows = [
        row("a", f"m{m}", "f=0.5", p, 1.0, 0.5)
        for m, p in enumerate((0.75, None, 0.5, None, 0.25, 1.0))
    ]
    cell = strata(rows, margins=False, replicates=10).to_json()["rows"][0]
    assert (cell["n_rows"], cell["n_failed"], cell["n_paired"]) == (6, 2, 4)
    assert cell["brier"] == (0.0625 + 0.25 + 0.5625 + 0.0) / 4  # over the 4 valid rows only
    assert cell["market_brier"] == 0.25  # the market's side on the same 4 paired rows
    only_failed = strata([row("a", "m", "f=0.5", None, 1.0, 0.5)], margins=False).to_json()["rows"][
        0
    ]
    assert (
        only_failed["brier"] is only_failed["brier_diff"] is None
        and "every forecast failed" in only_failed["note"]
    )


def test_same_rows_give_the_same_bytes():
    rows = crafted()
    for make in (lambda: strata(rows), lambda: defer(rows, split=at("2025-09-01T00:00:00"))):
        assert json.dumps(make().to_json(), sort_keys=True) == json.dumps(
            make().to_json(), sort_keys=True
        )


# ---------------------------------------------------------------------------------------- defer


def planted() -> list[ScoredRow]:
    """Training markets (resolved before the split): the market beats the forecaster at toss-ups
    (a: 0.25 vs 0.390625), the forecaster beats it at consensus (b: 0 vs 0.00390625). Test markets
    (resolved after the split, their t0s the same as the training ones'): the opposite, by far (c:
    0 vs 0.390625; d: 0.5625 vs 0.00390625). Fitted on every row, the rule would defer at consensus
    and never at toss-ups; fitted on the training markets only, it defers at toss-ups only."""
    rows = []
    for m in range(6):
        rows.append(row("f", f"a{m}", "f=0.5", 0.625, 0.0, 0.5, resolved_at=EARLY))
        rows.append(row("f", f"b{m}", "f=0.5", 1.0, 1.0, 0.9375, resolved_at=EARLY))
        rows.append(row("f", f"c{m}", "f=0.5", 1.0, 1.0, 0.375, resolved_at=LATE))
        rows.append(row("f", f"d{m}", "f=0.5", 0.25, 1.0, 0.9375, resolved_at=LATE))
    return rows


def test_the_rule_is_chosen_on_training_markets_only_and_scored_on_test_markets():
    rows = planted()
    assert (
        choose_rule(rows).describe() == f"defer when band in {{{CONSENSUS}}}"
    )  # what leakage would pick
    finding = defer(rows, SPLIT, replicates=200)
    (result,) = finding.to_json()["rows"]
    assert result["rule"] == f"defer when band in {{{TOSS_UP}}}"
    assert (result["train_markets"], result["test_markets"], result["n_deferred"]) == (12, 12, 6)
    own = (6 * 0.0 + 6 * 0.5625) / 12  # the rows of c and d
    deferred = (
        6 * 0.390625 + 6 * 0.5625
    ) / 12  # toss-up test rows take the market's 0.375 on a Yes
    assert (result["forecaster_brier"], result["deferred_brier"]) == (own, deferred)
    assert result["market_brier"] == (6 * 0.390625 + 6 * 0.00390625) / 12
    assert (
        result["gain"] == deferred - own
        and result["gain_ci_low"] <= result["gain"] <= result["gain_ci_high"]
    )


def test_a_market_resolved_exactly_at_the_split_is_a_test_market_and_t0_plays_no_part():
    rows = [
        row("f", "x", "f=0.5", 0.5, 1.0, 0.5, resolved_at=SPLIT, k=-400),
        row("f", "y", "f=0.5", 0.5, 1.0, 0.5, resolved_at=SPLIT - timedelta(seconds=1), k=400),
        row("f", "z", "f=0.5", 0.5, 1.0, 0.5, resolved_at=None),
    ]
    assert split_markets(rows, SPLIT) == ({"y"}, {"x"}, {"z"})


def test_a_market_resolved_before_the_split_but_public_after_it_is_a_test_market():
    """Planted: the test markets (c, d) resolved before the split, their outcomes public only
    after it. Split by the effective resolution they would train the rule (and pick consensus);
    split by `known_at` they are test markets and the rule is the one of the training markets."""
    rows = [
        r
        if r.market_id[0] in "ab"
        else ScoredRow(
            **{**{f: getattr(r, f) for f in r.__slots__}, "resolved_at": EARLY, "known_at": LATE}
        )
        for r in planted()
    ]
    assert split_markets(rows, SPLIT)[0] == {f"{c}{m}" for c in "ab" for m in range(6)}
    (result,) = defer(rows, SPLIT, replicates=50).to_json()["rows"]
    assert result["rule"] == f"defer when band in {{{TOSS_UP}}}"
    assert (result["train_markets"], result["test_markets"]) == (12, 12)
    assert median_split(rows) == LATE


def test_deferring_everywhere_reads_as_always_and_the_default_split_is_the_median_market():
    everywhere = [
        row("f", f"m{m}", "f=0.5", 0.0, 1.0, price) for m, price in enumerate((0.05, 0.2, 0.5))
    ]
    assert choose_rule(everywhere).describe() == "always defer (every priced row)"
    assert choose_rule(everywhere, "cutoff").describe() == "defer when cutoff in {f=0.5}"
    assert choose_rule([row("f", "m", "f=0.5", 1.0, 1.0, 0.5)]).describe() == "never defer"
    assert median_split(planted()) == LATE  # 12 markets at EARLY, 12 at LATE: the 13th instant
    assert median_split([row("f", "m", "f=0.5", 0.5, 1.0, 0.5, resolved_at=None)]) is None


def test_too_few_training_or_test_markets_say_so_and_invent_no_figure():
    rows = planted()
    few_train = [
        r for r in rows if r.market_id not in {"a0", "a1", "a2", "a3", "b0", "b1", "b2", "b3"}
    ]
    (result,) = defer(few_train, SPLIT, replicates=50).to_json()["rows"]
    assert (
        result["rule"] is None and result["deferred_brier"] is None and result["test_markets"] == 12
    )
    assert result["note"] == "too few training markets: 4 with a paired row (< 5); no rule chosen"
    few_test = [r for r in rows if r.market_id[0] in "ab" or r.market_id in {"c0", "d0"}]
    (result,) = defer(few_test, SPLIT, replicates=50).to_json()["rows"]
    assert result["deferred_brier"] is not None and result["gain_ci_low"] is None
    assert result["note"] == "too few test markets: 2 (< 5), no interval"
    (result,) = defer([r for r in rows if r.market_id[0] in "ab"], SPLIT).to_json()["rows"]
    assert (
        result["rule"] is not None
        and result["forecaster_brier"] is None
        and "no test market" in result["note"]
    )


def test_failures_in_the_test_period_are_counted_not_deferred_nor_imputed():
    rows = planted()
    failed = [row("f", f"c{m}", "f=0.25", None, 1.0, 0.5, resolved_at=LATE) for m in range(3)]
    (plain,) = defer(rows, SPLIT, replicates=50).to_json()["rows"]
    (with_failures,) = defer(rows + failed, SPLIT, replicates=50).to_json()["rows"]
    assert with_failures["test_failed"] == 3 and plain["test_failed"] == 0
    assert {k: v for k, v in with_failures.items() if k != "test_failed"} == {
        k: v for k, v in plain.items() if k != "test_failed"
    }


ROW = st.tuples(
    st.sampled_from("abcdef"),
    st.sampled_from(("f=0.25", "f=0.5", "before=7d")),
    st.sampled_from((0.0, 0.125, 0.5, 0.75, 1.0)),
    st.sampled_from((0.0, 1.0)),
    st.sampled_from((0.05, 0.2, 0.5, 0.8, 0.95)),
)


def _subsets(items):
    return chain.from_iterable(combinations(items, k) for k in range(len(items) + 1))


@settings(max_examples=60, deadline=None)
@given(st.lists(ROW, min_size=1, max_size=25))
def test_the_chosen_band_cutoff_rule_is_the_exact_minimum_over_every_band_and_cutoff_set(specs):
    rows = [row("f", m, label, p, o, price) for m, label, p, o, price in specs]
    labels = sorted({r.label for r in rows})
    brute = min(_gain(rows, Rule(b, c)) for b in _subsets(BANDS) for c in _subsets(labels))
    chosen = choose_rule(rows, "band×cutoff")
    assert chosen.gain == pytest.approx(brute, abs=1e-12)
    assert chosen.gain == pytest.approx(_gain(rows, chosen), abs=1e-12)
    band_only = min(_gain(rows, Rule(b, None)) for b in _subsets(BANDS))
    assert choose_rule(rows, "band").gain == pytest.approx(band_only, abs=1e-12)


def _gain(rows, rule) -> float:
    return math.fsum(r.market_brier - r.brier for r in rows if rule.applies(r))
