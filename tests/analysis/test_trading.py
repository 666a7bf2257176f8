"""The trading simulation (issue 17, item 4) on crafted scored rows: hand-computed P&L with fees,
a NO trade and skipped rows; the market control's P&L is exactly minus its fees; drawdown in t0
order; position limits; the fee schedule and its override."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from hindcast.analysis.fees import FeeSchedule, load_fees
from hindcast.analysis.trading import COLUMNS, TradingStrategy, max_drawdown, simulate_trading
from hindcast.errors import ConfigError
from hindcast.scoring.aggregate import ScoredRow
from tests.helpers import at

FLAT = FeeSchedule(0.1, (("free", 0.0),), origin="test")  # 10% rate, topic "free" has none
NO_FEES = FeeSchedule(0.0, origin="test")


def row(
    market: str,
    day: int,
    p,
    price,
    outcome: float,
    *,
    forecaster: str = "f",
    topic: str = "politics",
    repeat: int = 0,
) -> ScoredRow:
    return ScoredRow(
        forecaster,
        market,
        at(f"2025-01-{day:02d}T00:00:00"),
        "f=0.5",
        topic,
        p,
        None if p is not None else "failed",
        outcome,
        price,
        repeat=repeat,
    )


def table(result) -> dict[str, dict]:
    return {r[0]: dict(zip(COLUMNS, r)) for r in result.finding.rows}


def crafted() -> list[ScoredRow]:
    return [
        row("m1", 1, 0.8, 0.5, 1.0),  # YES at 0.5: 200 shares, fee 200·0.1·0.25 = 5, wins: +95
        row("m2", 2, 0.2, 0.6, 1.0),  # NO at 0.4: 250 shares, fee 250·0.1·0.24 = 6, loses: −106
        row("m3", 3, 0.52, 0.5, 0.0),  # edge 0.02: no trade
        row("m4", 4, 0.9, None, 1.0),  # no price before t0: not traded, counted
        row("m5", 5, None, 0.3, 1.0),  # a failed forecast: not traded, counted
        row("m6", 6, 0.1, 0.25, 0.0, topic="free"),
    ]  # NO at 0.75, no fee: 133.33 shares, +33.33


def test_hand_computed_pnl_with_fees_a_no_trade_and_skipped_rows():
    result = simulate_trading(
        crafted(), TradingStrategy("edge", edge=0.05, max_position=100.0), FLAT
    )
    got = table(result)["f"]
    pnl = 95.0 - 106.0 + 100.0 / 3.0
    assert (got["positions"], got["traded"], got["no_edge"], got["no_price"], got["failed"]) == (
        6,
        3,
        1,
        1,
        1,
    )
    assert got["fees"] == pytest.approx(11.0) and got["capital"] == pytest.approx(311.0)
    assert got["pnl"] == pytest.approx(pnl) and got["roc"] == pytest.approx(pnl / 311.0)
    assert got["hit_rate"] == pytest.approx(2 / 3) and got["max_drawdown"] == pytest.approx(106.0)
    assert (
        got["pnl_low"] is None and got["roc_low"] is None
    )  # 4 markets with a tradable position: no interval
    trades = {t.market_id: t for t in result.trades}
    assert sorted(trades) == ["m1", "m2", "m6"]
    no = trades["m2"]
    assert (no.side, float(no.cost), float(no.shares), float(no.fee), float(no.payoff)) == (
        "no",
        0.4,
        250.0,
        pytest.approx(6.0),
        0.0,
    )
    assert float(no.pnl) == pytest.approx(-106.0) and float(trades["m6"].fee) == 0.0


def test_a_position_is_the_mean_of_its_valid_repeats_traded_once():
    rows = [
        row("m1", 1, 0.7, 0.5, 1.0, repeat=0),
        row("m1", 1, 0.9, 0.5, 1.0, repeat=1),
        row("m1", 1, None, 0.5, 1.0, repeat=2),
    ]
    result = simulate_trading(rows, TradingStrategy(), NO_FEES)
    (trade,) = result.trades
    assert trade.p == pytest.approx(0.8) and table(result)["f"]["positions"] == 1
    only_failed = simulate_trading(
        [row("m1", 1, None, 0.5, 1.0, repeat=r) for r in range(3)], TradingStrategy(), NO_FEES
    )
    assert table(only_failed)["f"]["failed"] == 1 and only_failed.trades == ()


def control_rows(n: int, seed: int = 3) -> list[ScoredRow]:
    draw = random.Random(seed)
    topics = ("politics", "crypto", "sports", "geopolitics", "economy", "weather-on-mars")
    rows = []
    for i in range(n):
        price = round(draw.uniform(0.01, 0.99), draw.choice((2, 3, 4)))
        rows.append(
            row(
                f"m{i:03d}",
                1 + i % 28,
                price,
                price,
                float(draw.random() < price),
                forecaster="market",
                topic=draw.choice(topics),
            )
        )
    return rows + [row("m999", 2, None, None, 1.0, forecaster="market")]


@pytest.mark.parametrize(
    "strategy",
    [TradingStrategy("edge", max_position=100.0), TradingStrategy("kelly", max_position=37.3)],
)
def test_the_market_control_pnl_is_exactly_minus_its_fees(strategy):
    result = simulate_trading(control_rows(200), strategy, load_fees())
    got = table(result)["market"]
    assert got["fees"] > 1.0 and got["pnl"] == -got["fees"]  # exactly, not approximately
    assert (
        got["traded"] == 200
        and got["no_price"] == 1
        and got["strategy"] == "complete set (control)"
    )
    assert got["capital"] == pytest.approx(200 * strategy.max_position + got["fees"])
    per_market: dict[str, Fraction] = {}
    for t in result.trades:  # each complete set pays exactly what it cost
        per_market[t.market_id] = per_market.get(t.market_id, Fraction(0)) + t.payoff - t.stake
    assert set(per_market.values()) == {Fraction(0)} and len(per_market) == 200
    assert got["pnl_low"] < got["pnl"] < got["pnl_high"] < 0


def test_drawdown_follows_t0_order_ties_by_market_id():
    # fee-free, stake 50 at 0.5: a win is +50, a loss −50. In t0 (then id) order: −50, 0, −50 → drawdown 50;
    # in row order or by market id alone: +50, 0, −50 → 100.
    rows = [row("mb", 1, 0.9, 0.5, 1.0), row("ma", 1, 0.9, 0.5, 0.0), row("mc", 2, 0.9, 0.5, 0.0)]
    result = simulate_trading(rows, TradingStrategy(max_position=50.0), NO_FEES)
    assert table(result)["f"]["max_drawdown"] == 50.0
    later = [
        row("ma", 3, 0.9, 0.5, 1.0),
        row("mz", 1, 0.9, 0.5, 0.0),
        row("mm", 2, 0.9, 0.5, 1.0),
        row("mq", 4, 0.9, 0.5, 0.0),
        row("mr", 5, 0.9, 0.5, 0.0),
    ]
    # t0 order: mz −50, mm +50, ma +50, mq −50, mr −50 → peak 50, trough −50: 100 (market-id order gives 150)
    assert (
        table(simulate_trading(later, TradingStrategy(max_position=50.0), NO_FEES))["f"][
            "max_drawdown"
        ]
        == 100.0
    )
    assert max_drawdown(()) == 0


def test_position_limits_cap_kelly_stakes():
    rows = [row("m1", 1, 0.9, 0.5, 1.0), row("m2", 2, 0.2, 0.6, 0.0)]
    # full Kelly f* = (b − c)/(1 − c): YES 0.4/0.5 = 0.8, NO (0.8 − 0.4)/0.6 = 2/3; a quarter of 1000
    capped = {
        t.market_id: float(t.stake)
        for t in simulate_trading(
            rows, TradingStrategy("kelly", max_position=100.0), NO_FEES
        ).trades
    }
    assert capped == {"m1": 100.0, "m2": 100.0}
    loose = {
        t.market_id: float(t.stake)
        for t in simulate_trading(
            rows, TradingStrategy("kelly", max_position=500.0), NO_FEES
        ).trades
    }
    assert loose == {"m1": pytest.approx(200.0), "m2": pytest.approx(1000 * 0.25 * 0.4 / 0.6)}
    flat = {
        t.market_id: float(t.stake)
        for t in simulate_trading(rows, TradingStrategy("edge", max_position=30.0), NO_FEES).trades
    }
    assert flat == {"m1": 30.0, "m2": 30.0}


def test_no_trade_at_a_price_of_zero_or_one_nor_without_edge():
    rows = [row("m1", 1, 0.5, 0.0, 1.0), row("m2", 2, 0.5, 1.0, 1.0), row("m3", 3, 0.55, 0.5, 1.0)]
    got = table(simulate_trading(rows, TradingStrategy(edge=0.05), NO_FEES))["f"]
    assert (got["untradable"], got["no_edge"], got["traded"], got["pnl"]) == (2, 1, 0, 0.0)
    assert got["roc"] is None and got["hit_rate"] is None


def test_intervals_from_five_markets_and_reproducible():
    rows = [row(f"m{i}", i + 1, 0.8, 0.5, float(i % 3 != 0)) for i in range(8)]
    first, second = (simulate_trading(rows, TradingStrategy(), FLAT) for _ in range(2))
    got = table(first)["f"]
    assert (
        got["pnl_low"] is not None
        and got["pnl_low"] <= got["pnl_high"]
        and got["roc_low"] <= got["roc_high"]
    )
    assert first.to_json() == second.to_json()
    assert table(simulate_trading(rows[:4], TradingStrategy(), FLAT))["f"]["pnl_low"] is None


def test_shipped_fee_schedule_is_polymarkets_published_rule():
    fees = load_fees()
    assert "docs.polymarket.com/trading/fees" in fees.source and fees.exponent == 1.0
    assert (
        fees.rate("politics"),
        fees.rate("crypto"),
        fees.rate("sports"),
        fees.rate("geopolitics"),
    ) == (0.04, 0.07, 0.03, 0.0)
    assert (
        fees.rate("Economy") == 0.05 and fees.rate("never-heard-of-it") == fees.default_rate == 0.05
    )
    assert float(100 * fees.per_share(0.3, "politics")) == pytest.approx(100 * 0.04 * 0.3 * 0.7)


def test_a_fee_file_replaces_the_schedule(tmp_path):
    path = tmp_path / "fees.toml"
    path.write_text("default_rate = 0.02\nexponent = 2\n[rates]\nSports = 0\n")
    fees = load_fees(path)
    assert fees.rate("sports") == 0.0 and fees.rate("politics") == 0.02 and fees.origin == str(path)
    assert float(fees.per_share(0.5, "politics")) == pytest.approx(0.02 * 0.0625)
    (tmp_path / "none.toml").write_text("default_rate = 0\n")
    result = simulate_trading(
        control_rows(20), TradingStrategy(), load_fees(tmp_path / "none.toml")
    )
    assert table(result)["market"]["pnl"] == 0.0 and table(result)["market"]["fees"] == 0.0


@pytest.mark.parametrize(
    "text, says",
    [
        ("default_rate = 'five'\n", "default_rate = 'five' is not a rate"),
        ("default_rate = 0.05\n[rates]\ncrypto = 1.5\n", "rates.crypto = 1.5 is not a rate"),
        ("default_rate = 0.05\nexponent = 0\n", "exponent = 0 is not a positive number"),
        ("[rates]\ncrypto = 0.07\n", "needs default_rate"),
        ("default_rate = 0.05\nrate = 0.07\n", "unknown key(s) rate"),
        ("default_rate = = 0.05\n", "fees.toml"),
    ],
)
def test_a_malformed_fee_file_is_one_error_naming_it(tmp_path, text, says):
    path = tmp_path / "fees.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_fees(path)
    assert (
        str(path) in str(caught.value)
        and says in str(caught.value)
        and "\n" not in str(caught.value)
    )
    with pytest.raises(ConfigError, match="missing.toml"):
        load_fees(tmp_path / "missing.toml")


def test_bad_strategy_parameters_are_refused():
    for bad in (
        TradingStrategy("martingale"),
        TradingStrategy(edge=1.0),
        TradingStrategy(kelly_fraction=0.0),
        TradingStrategy(max_position=-1.0),
        TradingStrategy(bankroll=float("inf")),
    ):
        with pytest.raises(ConfigError):
            simulate_trading([], bad, NO_FEES)
