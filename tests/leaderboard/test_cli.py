"""`hindcast leaderboard` and `hindcast sweep` as a user types them."""

from __future__ import annotations

import polars as pl

from tests.helpers import run_cli


def test_leaderboard_of_two_runs_writes_each_format_and_reports_the_matched_rows(tmp_path, swept):
    url, ids = swept
    proc = run_cli("leaderboard", ids["wide"], ids["narrow"], "--db", url, "--out", str(tmp_path),
                   "--format", "parquet", "--format", "html", check=True)
    assert "2 runs compared on their 40 matched (market, t0) rows" in proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["forecasts.parquet", "leaderboard.parquet", "report.html"]
    assert pl.read_parquet(tmp_path / "forecasts.parquet").height == 40 * 5
    assert "Brier by lifetime fraction" in (tmp_path / "report.html").read_text()


def test_leaderboard_by_topic_writes_every_format_by_default(tmp_path, swept):
    url, ids = swept
    run_cli("leaderboard", ids["wide"], "--db", url, "--out", str(tmp_path), "--by", "topic", check=True)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted([f"leaderboard.{f}" for f in ("csv", "json", "parquet", "md")]
                           + [f"forecasts.{f}" for f in ("csv", "json", "parquet")] + ["report.html"])
    board = pl.read_csv(tmp_path / "leaderboard.csv")
    assert board["slice"].str.starts_with("topic=").all()
    assert "| slice |" in (tmp_path / "leaderboard.md").read_text()


def test_unknown_run_format_or_slice_exit_1_with_one_line(tmp_path, swept):
    url, ids = swept
    cases = [(["r-nope"], "no run 'r-nope'"), ([ids["wide"], "--format", "xlsx"], "unknown format(s) 'xlsx'"),
             ([ids["wide"], "--by", "weekday"], "unknown slice 'weekday'"),
             ([ids["wide"], "--baseline", "oracle"], "unknown baseline 'oracle'")]
    for args, message in cases:
        proc = run_cli("leaderboard", *args, "--db", url, "--out", str(tmp_path))
        assert proc.returncode == 1 and message in proc.stderr and "Traceback" not in proc.stderr, args


def test_sweep_writes_the_html_report_next_to_the_csv_and_markdown(tmp_path):
    run_cli("sweep", "--out", str(tmp_path), "--limit", "5", "-f", "market", "-f", "constant", check=True)
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert {"leaderboard.csv", "leaderboard.md", "report.html"} <= {p.name for p in folder.iterdir()}
    assert "<h2>Leaderboard</h2>" in (folder / "report.html").read_text()
