"""`hindcast markets pull --venue kalshi` as a user runs it (a subprocess) against the shipped fake
over 127.0.0.1: counts, the stderr warning, one error line and an unchanged store on a broken
listing; then a sweep of the mixed Polymarket + Kalshi store with market, constant and base-rate,
exported by `hindcast leaderboard --by venue`."""

from __future__ import annotations

import csv
import json
from datetime import datetime
from decimal import Decimal

import pytest

from hindcast.markets.fake_kalshi import FakeKalshi, json_reply, serve
from hindcast.markets.store import open_version
from tests.helpers import run_cli
from tests.markets.kalshi_support import polymarket_store, tree


@pytest.fixture
def fake() -> FakeKalshi:
    return FakeKalshi.generate(live=6, historical=5)


def pull(url: str, store, *extra: str):
    return run_cli(
        "markets", "pull", "--venue", "kalshi", "--kalshi-url", url, "--store", str(store), *extra
    )


def test_pull_prints_the_counts_and_says_on_stderr_that_fewer_were_stored(fake, tmp_path):
    polymarket_store(tmp_path / "store")
    with serve(fake) as url:
        proc = pull(url, tmp_path / "store", "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    counts = summary["counts"]
    assert (counts["listed"], counts["stored"], counts["skipped_total"], counts["failed"]) == (
        21,
        13,
        8,
        0,
    )
    assert (
        counts["skipped"]["not binary (market_type 'scalar')"] == 2
        and summary["stored_fewer_than_listed"]
    )
    assert (summary["listed_live"], summary["listed_historical"]) == (11, 10)
    assert summary["price_routes"] == {
        "kalshi candlesticks (live)": 7,
        "kalshi historical candlesticks": 6,
    }
    assert "warning: stored 13 of 21 listed market(s): 8 skipped, 0 failed" in proc.stderr
    assert summary["version"] == open_version(tmp_path / "store").id


def test_pull_text_names_each_skip_reason(fake, tmp_path):
    with serve(fake) as url:
        proc = pull(url, tmp_path / "store")
    assert proc.returncode == 0, proc.stderr
    assert (
        "pulled 13 Kalshi market(s)" in proc.stdout
        and "2 × result may still change (status 'disputed')" in proc.stdout
    )
    assert (
        "listed 21: 11 live (settled since the cutoff 2026-09-01T00:00:00Z), 10 historical"
        in proc.stdout
    )
    listed = run_cli("markets", "list", "--store", str(tmp_path / "store"), env={"COLUMNS": "200"})
    long = next(m for m in fake.markets if m.ticker.startswith("KXFAKEH-LONG"))
    assert (
        listed.returncode == 0 and f"kalshi:{long.ticker} " in listed.stdout
    )  # whole: the prefixes are alike


@pytest.mark.parametrize("case", ["stuck cursor", "unknown envelope", "422"])
def test_a_broken_listing_is_one_error_line_naming_the_url_and_the_store_is_unchanged(
    fake, tmp_path, case
):
    store = tmp_path / "store"
    polymarket_store(store)
    before = tree(store)
    if case == "stuck cursor":
        fake.stuck_cursor = True
        fake.faults["/historical/markets"] = [json_reply({"markets": [], "cursor": "4"})]
    elif case == "unknown envelope":
        fake.faults["/historical/markets"] = [json_reply({"data": [], "next_cursor": None})]
    else:
        fake.faults["/historical/markets"] = [json_reply({"error": "unprocessable"}, 422)]
    with serve(fake) as url:
        proc = pull(url, store)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith("hindcast: error: ") and f"{url}/historical/markets" in lines[0]
    assert tree(store) == before


def test_options_of_the_other_venue_are_refused(tmp_path):
    proc = run_cli(
        "markets",
        "pull",
        "--venue",
        "kalshi",
        "--gamma-url",
        "http://127.0.0.1:9",
        "--store",
        str(tmp_path),
    )
    assert (
        proc.returncode == 2
        and "--gamma-url" in proc.stderr
        and not tmp_path.joinpath("LATEST").exists()
    )


def test_a_sweep_of_a_mixed_store_is_exported_with_a_per_venue_slice(fake, tmp_path):
    store, runs = tmp_path / "store", tmp_path / "runs"
    polymarket_store(store)
    with serve(fake) as url:
        assert pull(url, store).returncode == 0
    sweep = run_cli(
        "sweep",
        "--store",
        str(store),
        "-f",
        "market",
        "-f",
        "constant",
        "-f",
        "base-rate",
        "--out",
        str(runs),
        "--db",
        str(runs / "h.db"),
        "--json",
    )
    assert sweep.returncode == 0, sweep.stderr
    run_id = json.loads(sweep.stdout)["run_id"]
    board = run_cli(
        "leaderboard",
        run_id,
        "--db",
        str(runs / "h.db"),
        "--out",
        str(tmp_path / "lb"),
        "--by",
        "venue",
        "--format",
        "csv,md",
    )
    assert board.returncode == 0, board.stderr
    rows = list(csv.DictReader(open(tmp_path / "lb" / "leaderboard.csv", encoding="utf-8")))
    slices = {(r["slice"], r["forecaster"]): r for r in rows}
    forecasters = ("market", "constant", "base-rate")
    assert set(slices) == {(f"venue={v}", f) for v in ("polymarket", "kalshi") for f in forecasters}
    assert slices[("venue=kalshi", "market")]["n_markets"] == "13"
    assert "venue=kalshi" in (tmp_path / "lb" / "leaderboard.md").read_text(encoding="utf-8")
    check_kalshi_prices_at_t0(fake, tmp_path / "lb" / "forecasts.csv")


def check_kalshi_prices_at_t0(fake: FakeKalshi, path) -> None:
    """Every Kalshi market price in the export is the fake's last candle that closed strictly
    before t0 (close, else previous), computed here from the fake's candle table."""
    seen = 0
    for row in csv.DictReader(open(path, encoding="utf-8")):
        if not row["market_id"].startswith("kalshi:") or row["forecaster"] != "market":
            continue
        t0 = datetime.fromisoformat(row["t0"].replace("Z", "+00:00")).timestamp()
        market = fake.market(row["market_id"].removeprefix("kalshi:"))
        closed = [c for c in market.candles if c[0] < t0 and (c[1] or c[2])]
        expected = float(Decimal(closed[-1][1] or closed[-1][2]))
        assert float(row["market_price"]) == expected and float(row["probability"]) == expected
        seen += 1
    assert seen == 13 * 4  # every Kalshi market at each of the four default fractions


def test_the_readme_recipe_pulls_both_venues_sweeps_and_slices_by_venue(tmp_path):
    from tests.test_recipes import run_recipe

    out = run_recipe("pull_both_venues_fake.py", tmp_path).stdout
    assert '"listed": 30, "stored": 22' in out
    for venue in ("kalshi", "polymarket"):
        for name in ("market", "constant", "base-rate"):
            assert f"venue={venue}" in out and any(
                line.startswith(f"venue={venue}") and f" {name} " in line
                for line in out.splitlines()
            )
