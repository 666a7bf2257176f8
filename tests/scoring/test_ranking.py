"""The board is ranked by a metric's declared direction (`metrics.METRICS`), not a hard-coded
Brier: lower-is-better metrics ascend, higher-is-better ones descend, missing values go last;
the default (Brier) order is the one the board always had."""

from datetime import timedelta

import pytest

from hindcast.errors import ConfigError
from hindcast.scoring import metrics
from hindcast.scoring.aggregate import LeaderboardRow, ScoredRow, leaderboard, ranked
from tests.helpers import at

T = at("2025-10-01T00:00:00")


def _rows() -> list[ScoredRow]:
    """`bold` has the better Brier but (one confident miss) the worse log score than `hedger`;
    `broken` failed every forecast."""
    rows = []
    for i in range(10):
        outcome = float(i % 2)
        bold = 1e-6 if i == 0 else (0.999999 if outcome else 1e-6)
        bold = 1 - bold if i == 0 else bold  # market m0: confidently wrong
        for name, p in (("bold", bold), ("hedger", 0.5), ("broken", None)):
            rows.append(
                ScoredRow(
                    name,
                    f"m{i}",
                    T + timedelta(days=i),
                    "f=1",
                    "politics",
                    p,
                    None if p is not None else "timeout",
                    outcome,
                    0.5,
                )
            )
    return rows


def _names(board) -> list[str]:
    return [r.forecaster for r in board]


def test_default_ranking_is_brier_lowest_first_as_before():
    board = leaderboard(_rows(), replicates=20)
    assert _names(board) == ["bold", "hedger", "broken"]
    assert board == sorted(
        board, key=lambda r: (r.slice, r.brier is None, r.brier or 0.0, r.forecaster)
    )


def test_a_higher_is_better_metric_ranks_highest_first():
    board = leaderboard(_rows(), replicates=20, rank_by="log_score")
    assert [round(r.log_score, 2) for r in board[:2]] == [-0.69, -1.38]
    assert _names(board) == ["hedger", "bold", "broken"]
    assert _names(leaderboard(_rows(), replicates=20, rank_by="accuracy")) == [
        "bold",
        "hedger",
        "broken",
    ]


def test_every_declared_metric_is_a_board_column_and_ranks_by_its_direction():
    board = leaderboard(_rows(), replicates=20)
    for name, metric in metrics.METRICS.items():
        assert name in LeaderboardRow.__dataclass_fields__
        values = [getattr(r, name) for r in ranked(board, name) if getattr(r, name) is not None]
        assert values == sorted(values, reverse=metric.higher_is_better)
        assert getattr(ranked(board, name)[-1], name) is None  # `broken` has no value: last


def test_an_unknown_ranking_metric_is_refused():
    with pytest.raises(ConfigError, match="unknown metric 'brierr'"):
        leaderboard(_rows(), replicates=20, rank_by="brierr")
