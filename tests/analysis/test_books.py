"""A position's book by exact integer arithmetic (`analysis.books`, used by `trading`) against
plain `fractions.Fraction` accounting written out here, on random positions: the same floats to
the bit (P&L, fees, capital), the same sides, the same no-trade decisions."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from hindcast.analysis.fees import FeeSchedule
from hindcast.analysis.trading import Position, TradingStrategy, position_book
from tests.helpers import at

FEES = FeeSchedule(0.05, (("crypto", 0.07), ("free", 0.0)), origin="test")
SQUARED = FeeSchedule(0.25, exponent=2.0, origin="test")


def reference(position: Position, strategy: TradingStrategy, fees: FeeSchedule):
    """(pnl, fees, capital, sides) of the position's trades in Fractions, or None: no trade."""
    price, p, o = Fraction(position.price), position.p, Fraction(position.outcome)
    rate = dict(fees.rates).get(position.topic, fees.default_rate)
    fee = Fraction(rate * (position.price * (1.0 - position.price)) ** fees.exponent)
    if position.forecaster == "market":
        legs = [("yes", Fraction(strategy.max_position)), ("no", Fraction(strategy.max_position))]
    else:
        if p - position.price > strategy.edge + 1e-12:
            side, belief, cost = "yes", p, price
        elif position.price - p > strategy.edge + 1e-12:
            side, belief, cost = "no", 1.0 - p, 1 - price
        else:
            return None
        stake = strategy.max_position
        if strategy.kind == "kelly":
            kelly = strategy.kelly_fraction * (belief - float(cost)) / (1.0 - float(cost))
            stake = min(kelly * strategy.bankroll, strategy.max_position)
        if not stake > 0:
            return None
        legs = [(side, Fraction(stake) / cost)]
    pnl = paid = capital = Fraction(0)
    for side, shares in legs:
        cost = price if side == "yes" else 1 - price
        pays = o if side == "yes" else 1 - o
        pnl += shares * pays - shares * cost - shares * fee
        paid += shares * fee
        capital += shares * cost + shares * fee
    return float(pnl), float(paid), float(capital), tuple(side for side, _ in legs)


def random_position(rng: random.Random) -> Position:
    price = rng.choice([rng.random(), round(rng.random(), 3), 0.5, 1e-9, 1 - 1e-9])
    p = rng.choice([rng.random(), price + rng.choice([0.05, -0.05, 0.3]), 0.0, 1.0])
    return Position(
        rng.choice(["market", "f", "g"]),
        f"m{rng.randrange(50)}",
        at("2025-01-01T00:00:00"),
        rng.choice(["crypto", "free", "politics"]),
        min(max(p, 0.0), 1.0),
        price,
        rng.choice([0.0, 1.0, rng.random()]),
        1,
        0,
    )


@pytest.mark.parametrize(
    "strategy",
    [
        TradingStrategy(),
        TradingStrategy("kelly", max_position=37.3),
        TradingStrategy("kelly", edge=0.0, kelly_fraction=1.0, max_position=1e6, bankroll=3.7),
        TradingStrategy(edge=0.2, max_position=0.1),
    ],
)
@pytest.mark.parametrize("fees", [FEES, SQUARED])
def test_books_equal_fraction_accounting_to_the_bit(strategy, fees):
    rng = random.Random(f"{strategy}{fees.exponent}")
    traded = 0
    for _ in range(2000):
        position = random_position(rng)
        got, want = position_book(position, strategy, fees), reference(position, strategy, fees)
        if want is None:
            assert got is None
            continue
        traded += 1
        assert got is not None and (got.pnl, got.fees, got.capital, got.legs) == want
        assert all(repr(a) == repr(b) for a, b in zip((got.pnl, got.fees, got.capital), want))
    assert traded > 500
