"""`hindcast trade RUN` on a run database made by the test (a sweep of the shipped sample with
the baselines): --json and --trades; every figure recomputed independently from the
per-forecast table (`hindcast leaderboard --format csv`); the market control's P&L is exactly
minus its fees; a fee-file override; a malformed fee file is one line naming it, exit 1, and
nothing written."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

from tests.helpers import ROOT, run_cli

FORECASTERS = ("market", "constant", "constant:p=0.3")
# Until `trade` is registered in cli/main.py, the same entry point (`guarded`) runs the trade app alone.
STANDALONE = (
    "import sys; from hindcast.cli.main import guarded; from hindcast.cli.trade import app; "
    "sys.exit(guarded(app))"
)


def trade(*args: str, check: bool = False) -> subprocess.CompletedProcess:
    from hindcast.cli.main import app

    if any(c.name == "trade" for c in app.registered_commands):
        return run_cli("trade", *args, check=check)
    proc = subprocess.run(
        [sys.executable, "-c", STANDALONE, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"hindcast trade {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}"
        )
    return proc


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """(database, run id, the per-forecast table's rows) of a sweep of the sample
    with three baselines."""
    folder = tmp_path_factory.mktemp("trade")
    db = str(folder / "hindcast.db")
    args = [a for name in FORECASTERS for a in ("-f", name)]
    run_cli("sweep", *args, "--out", str(folder), "--db", db, check=True)
    (listed,) = json.loads(run_cli("runs", "list", "--db", db, "--json", check=True).stdout)
    run_cli(
        "leaderboard",
        listed["run"],
        "--db",
        db,
        "--format",
        "csv",
        "--out",
        str(folder / "board"),
        check=True,
    )
    with open(folder / "board" / "forecasts.csv", newline="", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    return db, listed["run"], table


def shipped_rates() -> dict:
    return tomllib.loads((ROOT / "hindcast" / "analysis" / "fees.toml").read_text(encoding="utf-8"))


def recompute(table: list[dict], stake: float, edge: float) -> dict[str, dict]:
    """The edge strategy from the per-forecast table, in plain floats, sharing
    no code with hindcast."""
    fees = shipped_rates()
    out: dict[str, dict] = defaultdict(
        lambda: {
            "traded": 0,
            "no_price": 0,
            "pnl": 0.0,
            "fees": 0.0,
            "capital": 0.0,
            "won": 0,
            "legs": 0,
        }
    )
    for r in table:
        name, acc = r["forecaster"], out[r["forecaster"]]
        if r["market_price"] == "":
            acc["no_price"] += 1
            continue
        q, p, y = float(r["market_price"]), float(r["probability"]), float(r["outcome"])
        per_share = fees["rates"].get(r["topic"], fees["default_rate"]) * q * (1 - q)
        if name == "market":  # a complete set: `stake` shares of each side
            legs = [("yes", q, stake), ("no", 1 - q, stake)]
        elif abs(p - q) > edge + 1e-12:
            side, cost = ("yes", q) if p > q else ("no", 1 - q)
            legs = [(side, cost, stake / cost)]
        else:
            continue
        acc["traded"] += 1
        for side, cost, shares in legs:
            won = y == (1.0 if side == "yes" else 0.0)
            fee = shares * per_share
            acc["pnl"] += (shares if won else 0.0) - shares * cost - fee
            acc["fees"] += fee
            acc["capital"] += shares * cost + fee
            acc["won"] += won
            acc["legs"] += 1
    return out


def test_trade_json_and_csv_match_an_independent_recomputation(run, tmp_path):
    db, run_id, table = run
    csv_path = tmp_path / "trades.csv"
    document = json.loads(
        trade(run_id, "--db", db, "--json", "--trades", str(csv_path), check=True).stdout
    )
    rows = {r["forecaster"]: r for r in document["findings"][0]["rows"]}
    assert document["run_id"] == run_id and set(rows) == set(FORECASTERS)
    assert (
        document["strategy"]["strategy"] == "edge"
        and document["fees"]["origin"] == "shipped fees.toml"
    )
    expected = recompute(table, stake=100.0, edge=0.05)
    for name in FORECASTERS:
        got, want = rows[name], expected[name]
        assert got["traded"] == want["traded"] > 0 and got["no_price"] == want["no_price"]
        for key in ("pnl", "fees", "capital"):
            assert got[key] == pytest.approx(want[key], rel=1e-9, abs=1e-9), (name, key)
        assert got["hit_rate"] == pytest.approx(want["won"] / want["legs"])
        assert got["roc"] == pytest.approx(want["pnl"] / want["capital"], rel=1e-9)
        assert got["pnl_low"] <= got["pnl_high"] and got["markets"] == 57
    assert (
        rows["market"]["pnl"] == -rows["market"]["fees"] and rows["market"]["fees"] > 0
    )  # exactly
    with open(csv_path, newline="", encoding="utf-8") as handle:
        trades = list(csv.DictReader(handle))
    assert len(trades) == len(document["trades"]) == sum(e["legs"] for e in expected.values())
    assert list(trades[0])[:11] == [
        "forecaster",
        "market",
        "t0",
        "side",
        "price",
        "p",
        "stake",
        "shares",
        "fee",
        "payoff",
        "pnl",
    ]
    for name in FORECASTERS:
        pnl = sum(float(t["pnl"]) for t in trades if t["forecaster"] == name)
        assert pnl == pytest.approx(rows[name]["pnl"], rel=1e-9, abs=1e-9)


def test_trade_is_reproducible_and_prints_a_table(run):
    db, run_id, _ = run
    first, second = (
        trade(run_id, "--db", db, "--json", "--strategy", "kelly", check=True).stdout
        for _ in range(2)
    )
    assert first == second and json.loads(first)["strategy"]["strategy"] == "kelly"
    text = trade(run_id, "--db", db, check=True).stdout
    assert (
        "complete set (control)" in text
        and "P&L [95% CI]" in text
        and "docs.polymarket.com" in text
    )


def test_a_fee_file_overrides_the_shipped_schedule(run, tmp_path):
    db, run_id, _ = run
    free = tmp_path / "free.toml"
    free.write_text('source = "no fees"\ndefault_rate = 0\n')
    document = json.loads(
        trade(run_id, "--db", db, "--json", "--fees", str(free), check=True).stdout
    )
    rows = {r["forecaster"]: r for r in document["findings"][0]["rows"]}
    assert document["fees"]["origin"] == str(free) and all(r["fees"] == 0.0 for r in rows.values())
    assert rows["market"]["pnl"] == 0.0


def test_a_malformed_fee_file_is_one_line_naming_it_exit_1_nothing_written(run, tmp_path):
    db, run_id, _ = run
    bad = tmp_path / "bad-fees.toml"
    bad.write_text("default_rate = 0.05\n[rates]\ncrypto = 'lots'\n")
    out = tmp_path / "trades.csv"
    proc = trade(run_id, "--db", db, "--fees", str(bad), "--trades", str(out))
    assert proc.returncode == 1 and proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()
    assert (
        line.startswith("hindcast: error: fee schedule ")
        and str(bad) in line
        and "rates.crypto" in line
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad-fees.toml"]


def test_usage_and_missing_run_errors(run, tmp_path):
    db, _, _ = run
    assert trade("r-000000000000", "--db", db).returncode == 1
    usage = trade("r-000000000000", "--db", db, "--strategy", "martingale")
    assert usage.returncode == 2 and "--strategy 'martingale'" in usage.stderr
    missing = trade("r-000000000000", "--db", str(tmp_path / "none.db"))
    assert missing.returncode == 1 and not Path(tmp_path / "none.db").exists()
