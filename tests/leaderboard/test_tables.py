"""Which rows a leaderboard ranks: one run whole, several runs on their
matched (market, t0) rows."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hindcast.leaderboard.tables import LeaderboardError, combine, forecast_records, fraction_of
from hindcast.scoring.aggregate import leaderboard


def keys(rows):
    return {(r.market_id, r.t0) for r in rows}


def test_one_run_is_ranked_on_all_its_rows(wide):
    combined = combine([wide])
    assert len(combined.rows) == len(wide.rows) == 360
    assert combined.matched_keys == len(keys(wide.rows)) == 120
    assert "all 120 (market, t0) rows" in combined.note()
    assert {r.forecaster for r in combined.rows} == {"market", "constant", "base-rate"}


def test_several_runs_are_compared_only_on_rows_every_forecaster_has(wide, narrow):
    combined = combine([wide, narrow])
    shared = keys(wide.rows) & keys(narrow.rows)
    assert keys(combined.rows) == shared and combined.matched_keys == len(shared) == 40
    assert [(m.keys, m.matched) for m in combined.runs] == [(120, 40), (40, 40)]
    assert (
        "40 matched (market, t0) rows" in combined.note()
        and f"{wide.run_id}: 40 of 120" in combined.note()
    )
    per_forecaster = {}
    for r in combined.rows:
        per_forecaster.setdefault(r.forecaster, set()).add((r.market_id, r.t0))
    assert all(k == shared for k in per_forecaster.values())


def test_a_name_in_several_runs_is_qualified_by_run_and_a_unique_name_is_not(wide, narrow):
    names = {r.forecaster for r in combine([wide, narrow]).rows}
    assert names == {
        f"market@{wide.run_id}",
        f"market@{narrow.run_id}",
        f"base-rate@{wide.run_id}",
        f"base-rate@{narrow.run_id}",
        "constant",
    }
    board = leaderboard(combine([wide, narrow]).rows, replicates=50)
    # the same forecaster on the same matched rows of two runs of the same data scores the same
    brier = {r.forecaster: r.brier for r in board}
    assert brier[f"market@{wide.run_id}"] == brier[f"market@{narrow.run_id}"]


def test_matching_drops_a_key_when_one_forecaster_lacks_it(wide, narrow):
    dropped = sorted(keys(narrow.rows))[0]
    partial = replace(
        narrow,
        rows=[
            r
            for r in narrow.rows
            if not (r.forecaster == "market" and (r.market_id, r.t0) == dropped)
        ],
    )
    combined = combine([wide, partial])
    assert dropped not in keys(combined.rows) and combined.matched_keys == 39


def test_rows_come_in_one_canonical_order_whatever_the_run_order(wide, narrow):
    a, b = combine([wide, narrow]).rows, combine([narrow, wide]).rows
    assert a == b and a == sorted(a, key=lambda r: (r.forecaster, r.market_id, r.t0))


def test_a_run_given_twice_or_no_rows_is_an_error(wide):
    with pytest.raises(LeaderboardError, match="more than once"):
        combine([wide, wide])
    with pytest.raises(LeaderboardError, match="no scored rows"):
        combine([replace(wide, rows=[])])
    with pytest.raises(LeaderboardError, match="no run"):
        combine([])


def test_the_per_forecast_record_carries_everything_to_recompute(wide):
    record = forecast_records(combine([wide]))[0]
    row = combine([wide]).rows[0]
    assert record["run_id"] == wide.run_id and record["fraction"] == fraction_of(row.label)
    assert record["brier"] == (record["probability"] - record["outcome"]) ** 2
    assert record["market_brier"] == (record["market_price"] - record["outcome"]) ** 2
    assert record["t0"].endswith("Z") and set(record) >= {"regime", "coverage", "topic", "error"}
    assert record["repeat"] == row.repeat == 0


@pytest.mark.parametrize(
    "label, fraction",
    [
        ("f=0.25", 0.25),
        ("f=1.0", 1.0),
        ("at=2025-10-10T00:00:00Z", None),
        ("d=7d", None),
        ("f=x", None),
    ],
)
def test_fraction_of_a_label(label, fraction):
    assert fraction_of(label) == fraction
