"""`hindcast leaderboard` and `hindcast sweep` as a user types them."""

from __future__ import annotations

import polars as pl
import pytest

from tests.helpers import run_cli


def test_leaderboard_of_two_runs_writes_each_format_and_reports_the_matched_rows(tmp_path, swept):
    url, ids = swept
    proc = run_cli(
        "leaderboard",
        ids["wide"],
        ids["narrow"],
        "--db",
        url,
        "--out",
        str(tmp_path),
        "--format",
        "parquet",
        "--format",
        "html",
        check=True,
    )
    assert "2 runs compared on their 40 matched (market, t0) rows" in proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "forecasts.parquet",
        "leaderboard.parquet",
        "report.html",
    ]
    assert pl.read_parquet(tmp_path / "forecasts.parquet").height == 40 * 5
    assert "Brier by lifetime fraction" in (tmp_path / "report.html").read_text()


def test_leaderboard_by_topic_writes_every_format_by_default(tmp_path, swept):
    url, ids = swept
    run_cli(
        "leaderboard", ids["wide"], "--db", url, "--out", str(tmp_path), "--by", "topic", check=True
    )
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(
        [f"leaderboard.{f}" for f in ("csv", "json", "parquet", "md")]
        + [f"forecasts.{f}" for f in ("csv", "json", "parquet")]
        + ["report.html"]
    )
    board = pl.read_csv(tmp_path / "leaderboard.csv")
    assert board["slice"].str.starts_with("topic=").all()
    assert "| slice |" in (tmp_path / "leaderboard.md").read_text()


def test_unknown_run_format_or_slice_exit_1_with_one_line(tmp_path, swept):
    url, ids = swept
    cases = [
        (["r-nope"], "no run 'r-nope'"),
        ([ids["wide"], "--format", "xlsx"], "unknown format(s) 'xlsx'"),
        ([ids["wide"], "--by", "weekday"], "unknown slice 'weekday'"),
        ([ids["wide"], "--baseline", "oracle"], "unknown baseline 'oracle'"),
    ]
    for args, message in cases:
        proc = run_cli("leaderboard", *args, "--db", url, "--out", str(tmp_path))
        assert proc.returncode == 1 and message in proc.stderr and "Traceback" not in proc.stderr, (
            args
        )


def test_sweep_writes_the_html_report_next_to_the_csv_and_markdown(tmp_path):
    run_cli(
        "sweep",
        "--out",
        str(tmp_path),
        "--db",
        str(tmp_path / "hindcast.db"),
        "--limit",
        "5",
        "-f",
        "market",
        "-f",
        "constant",
        check=True,
    )
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert {"leaderboard.csv", "leaderboard.md", "report.html"} <= {
        p.name for p in folder.iterdir()
    }
    assert "<h2>Leaderboard</h2>" in (folder / "report.html").read_text()


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """(database URL, run id) of a small real sweep, its database named explicitly."""
    from hindcast.runs.store import RunStore

    folder = tmp_path_factory.mktemp("small")
    url = f"sqlite:///{folder / 'hindcast.db'}"
    run_cli(
        "sweep",
        "--out",
        str(folder),
        "--db",
        url,
        "-f",
        "market",
        "-f",
        "constant",
        "-f",
        "base-rate",
        "--fractions",
        "0.5,1.0",
        "--limit",
        "8",
        check=True,
    )
    (run,) = RunStore(url).runs()
    return url, run.id


def _db_copy(url: str, folder):
    """A copy of the swept run database, by absolute path (a plain path, no sqlite:/// URL)."""
    import shutil

    folder.mkdir()
    return shutil.copy(url.removeprefix("sqlite:///"), folder / "copy.db")


def test_leaderboard_json_is_one_document_with_every_column_and_the_paths(tmp_path, small):
    import json
    from dataclasses import fields

    from hindcast.scoring.aggregate import LeaderboardRow

    url, rid = small
    proc = run_cli(
        "leaderboard",
        rid,
        "--db",
        url,
        "--out",
        str(tmp_path / "out"),
        "--format",
        "csv",
        "--json",
        check=True,
    )
    document = json.loads(proc.stdout)  # nothing but the document on stdout
    assert document["runs"] == [rid] and {r["forecaster"] for r in document["rows"]} == {
        "market",
        "constant",
        "base-rate",
    }
    assert all(list(r) == [f.name for f in fields(LeaderboardRow)] for r in document["rows"])
    assert set(document["paths"]) == {"leaderboard.csv", "forecasts.csv"}
    assert all(__import__("pathlib").Path(p).is_file() for p in document["paths"].values())
    board = pl.read_csv(document["paths"]["leaderboard.csv"])
    assert sorted(board["brier"].to_list()) == sorted(r["brier"] for r in document["rows"])


def test_leaderboard_reads_a_plain_path_and_writes_only_its_exports(tmp_path, small):
    """--db takes a path as well as a URL; run in an empty folder, nothing appears there."""
    url, rid = small
    db = _db_copy(url, tmp_path / "db")
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_cli(
        "leaderboard",
        rid,
        "--db",
        str(db),
        "--out",
        str(tmp_path / "out"),
        "--format",
        "md",
        cwd=empty,
        check=True,
    )
    assert "leaderboard.md" in proc.stdout and (tmp_path / "out" / "leaderboard.md").is_file()
    assert not list(empty.iterdir())
    assert sorted(p.name for p in (tmp_path / "db").iterdir()) == ["copy.db"]


def test_leaderboard_database_defaults_to_HINDCAST_DB(tmp_path, small):
    url, rid = small
    db = _db_copy(url, tmp_path / "db")
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_cli(
        "leaderboard",
        rid,
        "--out",
        str(tmp_path / "out"),
        "--format",
        "csv",
        "--json",
        cwd=empty,
        env={"HINDCAST_DB": str(db)},
        check=True,
    )
    assert __import__("json").loads(proc.stdout)["runs"] == [rid] and not list(empty.iterdir())


def test_leaderboard_never_creates_a_run_database(tmp_path):
    """No database where --db (or the default runs/hindcast.db) points: one
    line, exit 1, no file."""
    empty = tmp_path / "empty"
    empty.mkdir()
    for args in (
        [],
        ["--db", str(tmp_path / "nowhere" / "h.db")],
        ["--db", f"sqlite:///{tmp_path / 'h2.db'}"],
    ):
        proc = run_cli(
            "leaderboard",
            "r-any",
            "--out",
            str(tmp_path / "out"),
            *args,
            cwd=empty,
            env={"HINDCAST_DB": None},
        )
        assert proc.returncode == 1 and proc.stderr.startswith(
            "hindcast: error: no run database at "
        ), proc.stderr
        assert len(proc.stderr.splitlines()) == 1
        assert not list(empty.iterdir()) and sorted(p.name for p in tmp_path.iterdir()) == [
            "empty"
        ], args
