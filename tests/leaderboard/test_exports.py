"""Exports: every format reads back to the leaderboard exactly, and the
per-forecast table recomputes it."""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import polars as pl
import pytest

from hindcast.leaderboard import export
from hindcast.leaderboard.publish import publish
from hindcast.leaderboard.tables import LeaderboardError

FAST = 200  # bootstrap replicates: enough to exercise the intervals, quick to compute


@pytest.fixture(scope="module")
def published(tmp_path_factory, wide, narrow):
    folder = tmp_path_factory.mktemp("published")
    return folder, publish(
        [wide, narrow], folder, export.FORMATS, title="two runs", replicates=FAST
    )


def read(path):
    if path.suffix == ".csv":
        return pl.read_csv(path, infer_schema_length=None)
    if path.suffix == ".parquet":
        return pl.read_parquet(path)
    return pl.DataFrame(json.loads(path.read_text()), infer_schema_length=None)


def recomputed(frame: pl.DataFrame, by: str | None = None) -> dict:
    """Mean Brier per forecaster (and slice), with numpy over the table's rows in file order."""
    groups = ["forecaster"] + ([by] if by else [])
    valid = frame.filter(pl.col("probability").is_not_null())
    return {
        tuple(k): float(np.mean(g["brier"].to_numpy()))
        for k, g in valid.group_by(groups, maintain_order=True)
    }


@pytest.mark.parametrize("fmt", ["csv", "parquet", "json"])
def test_the_per_forecast_table_recomputes_the_leaderboard_brier_exactly(published, fmt):
    folder, result = published
    frame = read(folder / f"forecasts.{fmt}")
    assert frame.height == len(result.combined.rows)
    means = recomputed(frame)
    assert {k[0]: v for k, v in means.items()} == {
        r.forecaster: r.brier for r in result.board
    }  # == , not approx
    brier = ((frame["probability"] - frame["outcome"]) ** 2).to_numpy()
    assert np.array_equal(brier, frame["brier"].to_numpy(), equal_nan=True)


@pytest.mark.parametrize("by", ["topic", "fraction"])
def test_sliced_leaderboards_recompute_from_the_same_table(tmp_path, wide, by):
    result = publish([wide], tmp_path, ["csv"], title="sliced", by=by, replicates=FAST)
    frame = read(tmp_path / "forecasts.csv")
    column = {"topic": "topic", "fraction": "label"}[by]
    means = recomputed(frame, column)
    assert {(f, f"{by}={s}"): v for (f, s), v in means.items()} == {
        (r.forecaster, r.slice): r.brier for r in result.board
    }


def exported(row) -> dict:
    """A leaderboard row as exported: every field but measured wall-clock time (issue 36)."""
    kept = {k: v for k, v in asdict(row).items() if k not in ("latency_s", "mean_latency_s")}
    assert list(kept) == list(export.COLUMNS)
    return kept


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_the_leaderboard_table_reads_back_to_the_same_values(published, fmt):
    folder, result = published
    frame = read(folder / f"leaderboard.{fmt}")
    assert frame.columns == list(export.COLUMNS)
    assert frame.to_dicts() == [exported(r) for r in result.board]


def test_the_json_leaderboard_carries_rows_and_the_matching_note(published):
    folder, result = published
    data = json.loads((folder / "leaderboard.json").read_text())
    assert data["rows"] == [exported(r) for r in result.board] and data["title"] == "two runs"
    assert "40 matched (market, t0) rows" in data["notes"][0]


def test_markdown_shows_intervals_and_how_many_rows_matched(published):
    folder, result = published
    text = (folder / "leaderboard.md").read_text()
    best = result.board[0]
    assert f"[{best.brier_ci_low:.4f}, {best.brier_ci_high:.4f}]" in text and "Brier 95% CI" in text
    assert "- 2 runs compared on their 40 matched (market, t0) rows" in text


def test_every_format_is_written_with_the_per_forecast_table_alongside(published):
    folder, result = published
    assert sorted(p.name for p in result.paths.values()) == sorted(
        [f"leaderboard.{f}" for f in export.TABLE_FORMATS]
        + ["report.html"]
        + [f"forecasts.{f}" for f in ("csv", "json", "parquet")]
    )
    assert all(p.parent == folder and p.stat().st_size > 0 for p in result.paths.values())


def test_markdown_or_html_alone_still_ship_the_per_forecast_table_as_csv(tmp_path, wide):
    result = publish([wide], tmp_path, ["md"], title="t", replicates=FAST)
    assert sorted(result.paths) == ["forecasts.csv", "leaderboard.md"]


def test_exports_are_byte_reproducible_and_the_rows_do_not_depend_on_run_order(
    tmp_path, wide, narrow
):
    first = publish([wide, narrow], tmp_path / "a", export.FORMATS, title="t", replicates=FAST)
    again = publish([wide, narrow], tmp_path / "b", export.FORMATS, title="t", replicates=FAST)
    swapped = publish([narrow, wide], tmp_path / "c", export.FORMATS, title="t", replicates=FAST)
    for name, path in first.paths.items():
        assert path.read_bytes() == again.paths[name].read_bytes(), name
    for name in (
        "leaderboard.csv",
        "leaderboard.parquet",
        "forecasts.csv",
        "forecasts.parquet",
        "forecasts.json",
    ):
        assert first.paths[name].read_bytes() == swapped.paths[name].read_bytes(), name


def test_unknown_format_slice_or_baseline_is_a_precise_error(tmp_path, wide):
    with pytest.raises(
        LeaderboardError, match="unknown format.*'xlsx'.*csv, json, parquet, md, html"
    ):
        publish([wide], tmp_path, ["csv", "xlsx"], title="t")
    with pytest.raises(LeaderboardError, match="unknown slice 'weekday'"):
        publish([wide], tmp_path, ["csv"], title="t", by="weekday")
    with pytest.raises(LeaderboardError, match="unknown baseline 'oracle'"):
        publish([wide], tmp_path, ["html"], title="t", baseline="oracle")
    assert not list(tmp_path.iterdir())


def test_write_all_keeps_writing_what_sweep_writes(tmp_path, wide, published):
    _, result = published
    paths = export.write_all(result.board, tmp_path, "title", ["a note"])
    assert sorted(paths) == ["csv", "md"] and read(paths["csv"]).height == len(result.board)
    assert paths["md"].read_text().startswith("# title\n") and "- a note" in paths["md"].read_text()
