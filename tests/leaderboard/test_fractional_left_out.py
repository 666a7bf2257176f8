"""The leaderboard says how many fractional outcomes (Manifold MKT, ForecastBench PROB) accuracy
left out: a last CSV column `n_fractional_left_out` (the columns before it keep their order) and
a note beside the row wherever the notes are shown (console, markdown, HTML)."""

from __future__ import annotations

import csv
import io
from datetime import datetime, timezone

from hindcast.leaderboard import display
from hindcast.leaderboard.export import COLUMNS, to_csv
from hindcast.scoring.aggregate import ScoredRow, summarise

T = datetime(2026, 1, 1, tzinfo=timezone.utc)
# (probability, outcome): two fractional outcomes among five, one forecast failed
CASES = [(0.9, 1.0), (0.8, 0.73), (0.3, 0.0), (0.6, 0.5), (None, 0.2)]


def rows() -> list[ScoredRow]:
    return [
        ScoredRow("f", f"m{i}", T, "f=1", "t", p, None if p is not None else "bad", o, None)
        for i, (p, o) in enumerate(CASES)
    ]


def test_the_count_of_fractional_outcomes_left_out_is_a_last_csv_column():
    row = summarise("f", "all", rows(), replicates=10, seed=0)
    # valid rows only: 0.73 and 0.5 are fractional; the failed row's 0.2 is in no score at all
    assert row.n_fractional_left_out == 2
    assert COLUMNS[-1] == "n_fractional_left_out" and COLUMNS[-2] == "unpriced"
    record = next(csv.DictReader(io.StringIO(to_csv([row]))))
    assert record["n_fractional_left_out"] == "2" and float(record["accuracy"]) == 1.0


def test_the_notes_say_how_many_were_left_out_and_nothing_when_none_were():
    row = summarise("f", "all", rows(), replicates=10, seed=0)
    assert "accuracy over binary outcomes: 2 fractional outcomes left out" in display.notes(row)
    binary = [r for r in rows() if r.outcome in (0.0, 1.0)]
    plain = summarise("f", "all", binary, replicates=10, seed=0)
    assert plain.n_fractional_left_out == 0 and "fractional" not in display.notes(plain)
