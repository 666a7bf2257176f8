"""`hindcast trade` end to end on a market store crafted by hand: three markets with known
prices and outcomes are imported, swept at one instant, and traded; every figure is the one
computed by hand below (edge strategy, $100 a position, a flat 4% taker rate)."""

from __future__ import annotations

import json

import pytest

from tests.helpers import run_cli

T0 = "2025-01-15T00:00:00Z"
# market id → (constant YES price every day, outcome)
MARKETS = {"0x" + "a1" * 32: (0.5, 1.0), "0x" + "a2" * 32: (0.2, 0.0), "0x" + "a3" * 32: (0.6, 0.0)}


def _market(mid: str, outcome: float) -> dict:
    return {
        "id": mid,
        "question": f"Will crafted event {mid} happen?",
        "background": "",
        "resolution_criteria": "",
        "url": f"https://polymarket.com/market/{mid}",
        "market_info_open_datetime": None,
        "market_info_close_datetime": None,
        "market_info_resolution_criteria": None,
        "text_source": "test",
        "slug": mid,
        "freeze_points": [],
        "resolved": True,
        "resolved_to": outcome,
        "resolution_date": "2025-02-01",
        "resolution_first_seen": "2025-02-01T12:00:00+00:00",
        "n_price_points": 10,
        "price_first_date": "2025-01-01",
        "price_last_date": "2025-01-10",
    }


@pytest.fixture(scope="module")
def traded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("crafted")
    (folder / "markets.jsonl").write_text(
        "".join(json.dumps(_market(m, y)) + "\n" for m, (_, y) in MARKETS.items())
    )
    rows = ["condition_id,date,p_yes,method,fetched_at_commit_time"]
    rows += [
        f"{m},2025-01-{d:02d},{p},v2_value_at_date,2025-01-{d:02d}T23:00:00+00:00"
        for m, (p, _) in MARKETS.items()
        for d in range(1, 11)
    ]
    (folder / "prices.csv").write_text("\n".join(rows) + "\n")
    (folder / "fees.toml").write_text(
        'source = "test: a flat 4% taker rate"\ndefault_rate = 0.04\n'
    )
    store, db = str(folder / "store"), str(folder / "hindcast.db")
    run_cli(
        "markets",
        "import",
        "forecastbench",
        "--markets-file",
        str(folder / "markets.jsonl"),
        "--price-history",
        str(folder / "prices.csv"),
        "--store",
        store,
        check=True,
    )
    (folder / "sweep.toml").write_text(
        f'[markets]\nstore = "store"\n[cutoffs]\nfractions = []\nat = [{T0}]\n'
        '[[forecasters]]\nspec = "market"\n[[forecasters]]\nspec = "constant:p=0.3"\n'
    )
    run_cli(
        "sweep", "--spec", str(folder / "sweep.toml"), "--db", db, "--out", str(folder), check=True
    )
    (run,) = json.loads(run_cli("runs", "list", "--db", db, "--json", check=True).stdout)
    out = run_cli(
        "trade", run["run"], "--db", db, "--fees", str(folder / "fees.toml"), "--json", check=True
    )
    document = json.loads(out.stdout)
    (finding,) = document["findings"]
    rows = finding["rows"]
    return {r["forecaster"]: r for r in rows}


def test_the_constant_forecaster_s_trades_by_hand(traded):
    # market a1: price 0.5 > 0.3 + edge → NO at 0.5: 200 shares, fee 200·0.04·0.25 = 2.0, NO loses: −102
    # market a2: 0.3 > 0.2 + edge → YES at 0.2: 500 shares, fee 500·0.04·0.16 = 3.2, YES loses: −103.2
    # market a3: 0.6 > 0.3 + edge → NO at 0.4: 250 shares, fee 250·0.04·0.24 = 2.4, NO wins 250: +147.6
    row = traded["constant:p=0.3"]
    assert row["traded"] == 3
    assert row["fees"] == pytest.approx(7.6, abs=1e-9)
    assert row["pnl"] == pytest.approx(-57.6, abs=1e-9)
    assert row["capital"] == pytest.approx(307.6, abs=1e-9)
    assert row["roc"] == pytest.approx(-57.6 / 307.6, abs=1e-12)
    assert row["hit_rate"] == pytest.approx(1 / 3, abs=1e-12)
    assert row["max_drawdown"] == pytest.approx(
        205.2, abs=1e-9
    )  # −102 then −103.2, in market order at one t0


def test_the_market_control_loses_exactly_its_fees(traded):
    # a complete set of 100 YES + 100 NO shares per market: fee 2·100·0.04·q(1−q) = 2.0 + 1.28 + 1.92
    row = traded["market"]
    assert row["fees"] == pytest.approx(5.2, abs=1e-9)
    assert row["pnl"] == -row["fees"]
