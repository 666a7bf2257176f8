"""Retrieval policies on matched rows: each policy variant against the same spec under pit,
figures computed by hand on crafted rows."""

from __future__ import annotations

import pytest

from hindcast.analysis.policy_pairs import COLUMNS, pairs, policy_pairs, twin_key
from hindcast.scoring.aggregate import ScoredRow
from tests.helpers import at

T0 = at("2025-06-01T00:00:00")
PIT = "retrieval-agent:model=local,k=5"
FILTERED = "retrieval-agent:k=5.0,model=local,policy=pit+filter,detector=lexical"
CLOSED = "retrieval-agent:model=local,policy=none,k=5"
LONELY = "tool-agent:model=local,policy=none"


def row(spec: str, i: int, p: float | None) -> ScoredRow:
    return ScoredRow(
        spec,
        f"m{i}",
        T0,
        "0.5",
        "t",
        p,
        None if p is not None else "failed",
        float(i % 2),
        0.5,
        "T2",
        "n/a",
        0,
        {},
    )


def rows() -> list[ScoredRow]:
    out = [row(PIT, i, 0.6) for i in range(6)]  # Brier 0.36 on outcome 0, 0.16 on outcome 1
    out += [row(FILTERED, i, 0.7 if i % 2 else 0.3) for i in range(5)] + [
        row(FILTERED, 5, None)
    ]  # Brier 0.09
    out += [row(CLOSED, i, 0.5) for i in range(6)]  # Brier 0.25
    out += [row(LONELY, i, 0.5) for i in range(3)] + [row("market", i, 0.5) for i in range(6)]
    return out


def test_a_variant_pairs_with_the_same_spec_under_pit_in_any_parameter_order():
    assert twin_key(FILTERED) == twin_key(PIT) == twin_key(CLOSED) == twin_key(PIT + ",policy=pit")
    assert twin_key(PIT + "@r-1") != twin_key(PIT)
    assert pairs([PIT, FILTERED, CLOSED, LONELY, "market"]) == [
        (FILTERED, PIT),
        (CLOSED, PIT),
        (LONELY, None),
    ]


def test_briers_and_differences_on_matched_rows_by_hand():
    finding = policy_pairs(rows(), replicates=200)
    table = {r[0]: dict(zip(COLUMNS, r)) for r in finding.rows}
    assert list(table) == [FILTERED, CLOSED, LONELY]
    f = table[FILTERED]
    assert (
        f["policy"],
        f["twin"],
        f["n_rows"],
        f["n_failed"],
        f["n_paired"],
        f["n_markets_paired"],
    ) == (
        "pit+filter",
        PIT,
        6,
        1,
        5,
        5,
    )  # the failure at m5 is counted, and leaves the matched rows
    assert f["brier_paired"] == pytest.approx(0.09) and f["twin_brier_paired"] == pytest.approx(
        1.4 / 5
    )
    assert f["brier_diff"] == pytest.approx(0.09 - 0.28)
    assert f["diff_ci_low"] <= f["brier_diff"] <= f["diff_ci_high"] < 0
    c = table[CLOSED]
    assert (c["n_paired"], c["brier_paired"], c["twin_brier_paired"]) == (
        6,
        pytest.approx(0.25),
        pytest.approx(0.26),
    )
    assert c["brier_diff"] == pytest.approx(-0.01)
    assert table[LONELY]["twin"] is None and table[LONELY]["n_paired"] is None
    assert any("tool-agent:model=local,policy=none: no twin under pit" in n for n in finding.notes)


def test_without_a_variant_the_finding_says_so():
    finding = policy_pairs([row(PIT, 0, 0.5), row("market", 0, 0.5)])
    assert finding.rows == () and "no forecaster with policy=none or pit+filter" in finding.notes
