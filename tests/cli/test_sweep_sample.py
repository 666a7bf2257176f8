"""`hindcast sweep` on the shipped sample, checked against an independent recomputation.

The recomputation below reads the shipped ForecastBench files with the standard library
and re-derives the documented rules (effective resolution, price stamps, cutoffs) without
calling hindcast code, so a defect in either side shows up as a mismatch.
"""

import csv
import json
import math
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from tests.helpers import SAMPLE_MARKETS, run_cli

UTC = timezone.utc
FRACTIONS = (0.25, 0.5, 0.75, 1.0)
BASELINES = ("-f", "market", "-f", "constant", "-f", "base-rate")
SOURCE = SAMPLE_MARKETS / "forecastbench"


def instant(text):
    if len(text) == 10:
        return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def independent_market_briers():
    markets = [
        json.loads(line) for line in SOURCE.joinpath("markets.jsonl").read_text().splitlines()
    ]
    points = {m["id"]: {} for m in markets}
    for row in csv.DictReader(SOURCE.joinpath("prices_daily.csv").open()):
        t = (
            instant(row["fetched_at_commit_time"])
            if row["method"] == "v1_value_at_fetch"
            else instant(row["date"]) + timedelta(days=1)
        )
        points[row["condition_id"]][t] = float(row["p_yes"])
    rows = {}
    for m in markets:
        for f in m["freeze_points"]:
            points[m["id"]][instant(f["freeze_datetime"])] = f["freeze_value"]
        eff = min(instant(m["resolution_date"]), instant(m["resolution_first_seen"]))
        opened = m["market_info_open_datetime"]
        start = instant(opened) if opened not in (None, "N/A") else min(points[m["id"]])
        last = eff - timedelta(days=1)
        for f in FRACTIONS:
            t0 = start + timedelta(seconds=math.floor(int((last - start).total_seconds()) * f))
            before = [t for t in points[m["id"]] if t < t0]
            rows[(m["id"], t0)] = (points[m["id"]][max(before)] - m["resolved_to"]) ** 2, eff
    return rows


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    proc = run_cli(
        "sweep", *BASELINES, "--out", str(out), "--db", str(out / "hindcast.db"), check=True
    )
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    return out, folder, proc


def leaderboard(folder):
    return {row["forecaster"]: row for row in csv.DictReader((folder / "leaderboard.csv").open())}


def test_sweep_covers_at_least_50_real_markets_at_4_fractions(sweep):
    _, folder, proc = sweep
    board = leaderboard(folder)
    assert set(board) == {"market", "constant", "base-rate"}
    for row in board.values():
        assert int(row["n_markets"]) >= 50 and int(row["n_forecasts"]) == 4 * int(row["n_markets"])
    assert "skill vs market" in proc.stdout and "base-rate" in proc.stdout


def test_leaderboard_csv_has_one_row_per_forecaster_with_the_columns(sweep):
    _, folder, _ = sweep
    rows = list(csv.DictReader((folder / "leaderboard.csv").open()))
    assert [r["forecaster"] for r in rows].count("market") == 1 and len(rows) == 3
    for column in (
        "forecaster",
        "n_forecasts",
        "n_markets",
        "brier",
        "market_brier",
        "skill_vs_market",
    ):
        assert column in rows[0]
    assert (folder / "leaderboard.md").read_text().count("| market |") == 1


def test_market_baseline_brier_equals_an_independent_recomputation(sweep):
    _, folder, _ = sweep
    expected = independent_market_briers()
    board = leaderboard(folder)
    mean = sum(b for b, _ in expected.values()) / len(expected)
    assert int(board["market"]["n_forecasts"]) == len(expected)
    assert float(board["market"]["brier"]) == pytest.approx(mean, rel=1e-12)
    assert float(board["constant"]["market_brier"]) == pytest.approx(mean, rel=1e-12)
    assert float(board["constant"]["brier"]) == pytest.approx(0.25, rel=1e-12)


def test_no_stored_forecast_stands_at_or_after_its_markets_effective_resolution(sweep):
    out, _, _ = sweep
    expected = independent_market_briers()
    effective = {market: eff for (market, _), (_, eff) in expected.items()}
    with sqlite3.connect(out / "hindcast.db") as db:
        rows = db.execute(
            "SELECT market_id, t0, probability FROM forecasts WHERE forecaster = 'market'"
        ).fetchall()
    assert len(rows) == len(expected)
    for market_id, t0, probability in rows:
        assert instant(t0) < effective[market_id]
        assert (market_id, instant(t0)) in expected
        assert probability is not None


def test_a_second_sweep_resumes_and_repeats_nothing_and_the_csv_is_byte_identical(sweep, tmp_path):
    out, folder, _ = sweep
    before = (folder / "leaderboard.csv").read_bytes()
    again = run_cli(
        "sweep", *BASELINES, "--out", str(out), "--db", str(out / "hindcast.db"), check=True
    )
    assert "(resumed)" in again.stdout and "0 made now" in again.stdout
    fresh = run_cli(
        "sweep",
        *BASELINES,
        "--out",
        str(tmp_path),
        "--db",
        str(tmp_path / "hindcast.db"),
        check=True,
    )
    assert (tmp_path / folder.name / "leaderboard.csv").read_bytes() == before
    assert "(new)" in fresh.stdout


def test_a_cutoff_after_resolution_exits_non_zero_naming_the_market(tmp_path):
    proc = run_cli(
        "sweep",
        *BASELINES,
        "--at",
        "2026-06-01T00:00:00Z",
        "--out",
        str(tmp_path),
        "--db",
        str(tmp_path / "hindcast.db"),
    )
    assert proc.returncode == 1
    assert "is at or after market 0x" in proc.stderr and "effective resolution" in proc.stderr
    assert not (tmp_path / "hindcast.db").exists() or _forecast_count(tmp_path) == 0


def _forecast_count(out):
    with sqlite3.connect(out / "hindcast.db") as db:
        return db.execute("SELECT count(*) FROM forecasts").fetchone()[0]


def test_bad_options_fail_with_a_usage_error(tmp_path):
    assert (
        run_cli(
            "sweep",
            *BASELINES,
            "--fractions",
            "0.5,x",
            "--out",
            str(tmp_path),
            "--db",
            str(tmp_path / "hindcast.db"),
        ).returncode
        == 2
    )
    proc = run_cli(
        "sweep", "-f", "oracle", "--out", str(tmp_path), "--db", str(tmp_path / "hindcast.db")
    )
    assert proc.returncode == 1 and "unknown forecaster 'oracle'" in proc.stderr
