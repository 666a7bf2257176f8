"""`hindcast analyze`: the stored runs' analyses, from stored forecasts
alone, as a user types it."""

import hashlib
import json

import pytest

from tests.helpers import run_cli


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("analyze")
    run_cli(
        "sweep",
        "-f",
        "market",
        "-f",
        "constant",
        "-f",
        "base-rate",
        "--limit",
        "12",
        "--out",
        str(folder),
        "--db",
        str(folder / "hindcast.db"),
        check=True,
    )
    return folder / "hindcast.db"


def _run_id(db) -> str:
    (run,) = json.loads(run_cli("runs", "list", "--db", str(db), "--json", check=True).stdout)
    return run["run"]


def test_analyze_json_holds_every_analysis_and_writes_nothing(db):
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    proc = run_cli(
        "analyze",
        _run_id(db),
        "--db",
        str(db),
        "--split",
        "2025-12-01T00:00:00Z",
        "--json",
        check=True,
    )
    document = json.loads(proc.stdout)
    keys = [f["key"] for f in document["findings"]]
    assert keys == [
        "strata",
        "resolution",
        "evidence",
        "effects",
        "aggregates",
        "trading",
        "copying",
        "policies",
        "defer",
        "calibration",
        "time-averaged",
        "relative-log",
        "pairwise-skill",
        "pairwise-pairs",
        "corp",
        "mixture",
        "convergence",
        "events",
    ]
    strata = next(f for f in document["findings"] if f["key"] == "strata")
    cells = {(r["forecaster"], r["cutoff"], r["band"]): r for r in strata["rows"]}
    # every forecast of the run lands in exactly one band of its cutoff: the "all" margin adds up
    for (forecaster, cutoff, band), row in cells.items():
        if band == "all" and cutoff != "all":
            parts = [
                r["n_rows"]
                for (f, c, b), r in cells.items()
                if f == forecaster and c == cutoff and b != "all"
            ]
            assert sum(parts) == row["n_rows"] == 12
    assert "2025-12-01" in next(f for f in document["findings"] if f["key"] == "defer")["title"]
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_analyze_tables_name_each_analysis(db):
    proc = run_cli("analyze", _run_id(db), "--db", str(db), check=True)
    assert "cutoff × market certainty" in proc.stdout and "Difficulty-adjusted Brier" in proc.stdout


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["r-000000000000"], 1, "no run 'r-000000000000'"),
        (["RUN", "--split", "soon"], 2, "--split 'soon'"),
    ],
)
def test_bad_input_is_one_line_and_an_exit_code(db, args, code, message):
    args = [_run_id(db) if a == "RUN" else a for a in args]
    proc = run_cli("analyze", *args, "--db", str(db))
    assert proc.returncode == code and message in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_missing_database_is_refused_not_created(tmp_path):
    proc = run_cli("analyze", "r-000000000000", "--db", str(tmp_path / "none.db"))
    assert (
        proc.returncode == 1
        and "no run database" in proc.stderr
        and not (tmp_path / "none.db").exists()
    )


def _band(price: float) -> str:
    """The certainty bands as docs/analysis.md states them, written again here."""
    if price <= 0.1 or price >= 0.9:
        return "consensus"
    return "toss-up" if 0.3 <= price <= 0.7 else "leaning"


def test_strata_recomputed_from_the_per_forecast_table(db, tmp_path):
    """Every (forecaster, cutoff, band) cell of `analyze` from `leaderboard --format csv`'s
    forecasts.csv in plain floats, sharing no code with hindcast."""
    import csv
    import math
    from collections import defaultdict

    run_id = _run_id(db)
    run_cli(
        "leaderboard",
        run_id,
        "--db",
        str(db),
        "--format",
        "csv",
        "--out",
        str(tmp_path),
        check=True,
    )
    with open(tmp_path / "forecasts.csv", newline="", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    cells = defaultdict(list)
    for r in table:
        if r["market_price"] != "" and r["probability"] != "":
            cells[(r["forecaster"], r["label"], _band(float(r["market_price"])))].append(r)
    document = json.loads(run_cli("analyze", run_id, "--db", str(db), "--json", check=True).stdout)
    strata = {
        (r["forecaster"], r["cutoff"], r["band"]): r
        for r in next(f for f in document["findings"] if f["key"] == "strata")["rows"]
    }
    assert cells and set(cells) == {k for k in strata if "all" not in k[1:]}
    for key, rows in cells.items():
        p = [float(r["probability"]) for r in rows]
        q = [float(r["market_price"]) for r in rows]
        y = [float(r["outcome"]) for r in rows]
        brier = math.fsum((a - b) ** 2 for a, b in zip(p, y)) / len(rows)
        market = math.fsum((a - b) ** 2 for a, b in zip(q, y)) / len(rows)
        got = strata[key]
        assert got["n_rows"] == len(rows) and got["n_markets"] == len(
            {r["market_id"] for r in rows}
        )
        assert got["brier"] == pytest.approx(brier, abs=1e-12)
        assert got["market_brier"] == pytest.approx(market, abs=1e-12)
        assert got["brier_diff"] == pytest.approx(brier - market, abs=1e-12)
