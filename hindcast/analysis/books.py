"""A trading position's book — (P&L, fees, capital), each rounded to a float once — by exact
integer arithmetic: the values `fractions.Fraction` accounting gives, without its cost.

Every input is a float, so every input is exactly a ratio of integers (`float.as_integer_ratio`);
sums and products of ratios stay exact as (numerator, denominator) pairs of Python integers with
a positive denominator, left unreduced. A pair becomes a float by Python's integer true division,
which is correctly rounded — the same float as `float(Fraction(numerator, denominator))`, whose
value it is (a reduced fraction has the same quotient)."""

from __future__ import annotations

from dataclasses import dataclass

Ratio = tuple[int, int]  # (numerator, denominator > 0): exact, unreduced
ZERO: Ratio = (0, 1)
ONE: Ratio = (1, 1)


@dataclass(frozen=True)
class Book:
    """One position's legs summed exactly, then each total rounded once."""

    pnl: float
    fees: float
    capital: float  # stakes + fees
    legs: tuple[str, ...]  # the sides bought ("yes" / "no"), in order


def exact(x: float) -> Ratio:
    return x.as_integer_ratio()


def add(a: Ratio, b: Ratio) -> Ratio:
    if a[1] == b[1]:
        return a[0] + b[0], a[1]
    return a[0] * b[1] + b[0] * a[1], a[1] * b[1]


def sub(a: Ratio, b: Ratio) -> Ratio:
    return add(a, (-b[0], b[1]))


def mul(a: Ratio, b: Ratio) -> Ratio:
    return a[0] * b[0], a[1] * b[1]


def div(a: Ratio, b: Ratio) -> Ratio:
    """a / b for b > 0."""
    return a[0] * b[1], a[1] * b[0]


def rounded(a: Ratio) -> float:
    return a[0] / a[1]


def side_cost(side: str, price: float) -> Ratio:
    """The exact price of one share of a side: YES the price, NO exactly 1 − price."""
    yes = exact(price)
    return yes if side == "yes" else sub(ONE, yes)


def side_pays(side: str, outcome: float) -> Ratio:
    """What one share of a side pays: YES the outcome, NO exactly 1 − outcome."""
    o = exact(outcome)
    return o if side == "yes" else sub(ONE, o)


def legs_book(
    legs: tuple[tuple[str, Ratio], ...], price: float, outcome: float, fee: float
) -> Book:
    """The book of `legs` ((side, shares) each) of one position at this YES price and outcome,
    `fee` dollars per share (either side): stake = shares × cost, fee = shares × fee,
    payoff = shares × what a share pays, P&L = payoff − stake − fee."""
    pnl, fees, capital = ZERO, ZERO, ZERO
    per_share = exact(fee)
    for side, shares in legs:
        stake, paid = mul(shares, side_cost(side, price)), mul(shares, per_share)
        payoff = mul(shares, side_pays(side, outcome))
        pnl = add(pnl, sub(sub(payoff, stake), paid))
        fees, capital = add(fees, paid), add(capital, add(stake, paid))
    return Book(rounded(pnl), rounded(fees), rounded(capital), tuple(side for side, _ in legs))
