"""What a forecaster would have earned trading against the market price at t0 (issue 17, item 4).

From scored rows only (no model is called). Policies:
- one POSITION per (forecaster, market, t0), settled at the outcome. Its probability p is the
  mean of the valid repeats stored for that key (a failed repeat is counted, never filled in); a
  key whose repeats all failed is counted `failed` and not traded;
- the price is the market's YES price at t0 (`ScoredRow.market_price`, the last point strictly
  before t0): a key without one is counted `no_price`; a price of exactly 0 or 1 is counted
  `untradable` (no one sells at it);
- `edge` strategy: buy YES when p − price > edge, NO when price − p > edge, a flat stake of
  `max_position` dollars; `kelly`: the same trigger, a stake of fraction·f*·bankroll capped at
  `max_position`, with f* = (b − c)/(1 − c) for belief b and share price c of the side bought
  (YES: b = p, c = price; NO: b = 1 − p, c = 1 − price). The bankroll does not compound: every
  stake is sized on the starting bankroll (positions overlap in time; none is settled before
  the next is opened in a replay);
- fees from a schedule (`fees.toml`, Polymarket's published taker rule by default):
  shares × rate(topic) × (price·(1 − price))^exponent, paid in cash on top of the stake
  (the same per share on either side: the formula is symmetric in the price);
- the ZERO-EDGE CONTROL is the `market` forecaster (p = price): at every key it has a price, it
  buys a complete set, `max_position` shares of YES at the price and as many of NO at 1 − price.
  The set costs `max_position` and pays `max_position` whatever the outcome, so its gross P&L is
  0 in every outcome and its P&L is minus its fees: exactly, because a position is accounted in
  exact rationals (`fractions.Fraction` of the stored floats), rounded to a float once, and
  totals are correctly rounded sums (`math.fsum`) of those. A
  control whose P&L is not −fees means the settlement or the pricing of a side is wrong; its
  fees show the cost of trading these markets with no information at the strategy's scale;
- figures: P&L, capital deployed (stakes + fees), return on capital = P&L / capital, hit rate
  (share of trades whose side won), maximum drawdown of the cumulative P&L of positions ordered
  by t0 (ties by market id), and 95% market-clustered bootstrap intervals of P&L and return on
  capital (every market with a tradable position is a cluster, traded or not); none from fewer
  than `vs_market.MIN_MARKETS` markets.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction

import numpy as np

from hindcast.analysis.books import Book, div, exact, legs_book, rounded, side_cost
from hindcast.analysis.fees import FeeSchedule
from hindcast.errors import ConfigError
from hindcast.scoring import MIN_MARKETS, Finding, bootstrap
from hindcast.timeutil import iso

CONTROL = "market"  # the forecaster traded as the zero-edge control
STRATEGIES = ("edge", "kelly")
EDGE_NOISE = 1e-12  # a difference within this of the edge is the edge (not more than it)
COLUMNS = tuple(
    "forecaster strategy positions traded no_edge no_price failed untradable markets capital "
    "fees pnl pnl_low pnl_high roc roc_low roc_high hit_rate max_drawdown".split()
)
TRADE_COLUMNS = tuple(
    "forecaster market t0 side price p stake shares fee payoff pnl yes_price outcome".split()
)


# ---- the strategy -------------------------------------------------------------------------------
@dataclass(frozen=True)
class TradingStrategy:
    kind: str = "edge"
    edge: float = 0.05
    kelly_fraction: float = 0.25
    max_position: float = 100.0  # dollars per position (the control's complete set costs this)
    bankroll: float = 1000.0  # Kelly stakes are fractions of it (not compounded)

    def problem(self) -> str | None:
        """Why these parameters cannot be used, or None."""
        checks = (
            (
                self.kind in STRATEGIES,
                f"--strategy {self.kind!r}: use one of {', '.join(STRATEGIES)}",
            ),
            (0.0 <= self.edge < 1.0, f"--edge {self.edge!r}: needs 0 ≤ edge < 1"),
            (
                0.0 < self.kelly_fraction <= 1.0,
                f"--kelly-fraction {self.kelly_fraction!r}: needs 0 < f ≤ 1",
            ),
            (
                0.0 < self.max_position < math.inf,
                f"--max-position {self.max_position!r}: needs a positive amount",
            ),
            (
                0.0 < self.bankroll < math.inf,
                f"--bankroll {self.bankroll!r}: needs a positive amount",
            ),
        )
        return next((message for ok, message in checks if not ok), None)

    def label(self) -> str:
        if self.kind == "kelly":
            return f"kelly {self.kelly_fraction:g}, edge > {self.edge:g}, cap {self.max_position:g}"
        return f"edge > {self.edge:g}, stake {self.max_position:g}"

    def stake(self, belief: float, cost: float) -> float:
        """Dollars on a side believed at `belief` whose share costs `cost`."""
        if self.kind == "edge":
            return self.max_position
        return min(
            self.kelly_fraction * (belief - cost) / (1.0 - cost) * self.bankroll, self.max_position
        )

    def to_json(self) -> dict:
        return {
            "strategy": self.kind,
            "edge": self.edge,
            "kelly_fraction": self.kelly_fraction,
            "max_position": self.max_position,
            "bankroll": self.bankroll,
            "control": CONTROL,
        }


# ---- positions and trades -----------------------------------------------------------------------
@dataclass(frozen=True)
class Position:
    """One (forecaster, market, t0): the mean of its valid repeats, the price at t0, the outcome."""

    forecaster: str
    market_id: str
    t0: datetime
    topic: str
    p: float | None
    price: float | None
    outcome: float
    repeats: int
    failed_repeats: int

    def status(self) -> str:
        if self.price is None:
            return "no_price"
        if self.p is None:
            return "failed"
        return "untradable" if self.price in (0.0, 1.0) else "open"


@dataclass(frozen=True)
class Trade:
    forecaster: str
    market_id: str
    t0: datetime
    side: str  # "yes" | "no"
    cost: Fraction  # price of one share of the side bought
    p: float
    yes_price: float
    outcome: float
    stake: Fraction
    shares: Fraction
    fee: Fraction
    payoff: Fraction

    @property
    def pnl(self) -> Fraction:
        return self.payoff - self.stake - self.fee

    @property
    def won(self) -> bool:
        return self.outcome == (1.0 if self.side == "yes" else 0.0)

    def row(self) -> tuple:
        """The CSV/JSON record (TRADE_COLUMNS); money and shares as floats."""
        return (
            self.forecaster,
            self.market_id,
            iso(self.t0),
            self.side,
            float(self.cost),
            self.p,
            float(self.stake),
            float(self.shares),
            float(self.fee),
            float(self.payoff),
            float(self.pnl),
            self.yes_price,
            self.outcome,
        )


def positions(rows: Iterable) -> list[Position]:
    """Scored rows → one Position per (forecaster, market, t0), in
    (forecaster, t0, market) order."""
    groups: dict[tuple, list] = defaultdict(list)
    for row in rows:
        groups[(row.forecaster, row.market_id, row.t0)].append(row)
    made = [_position(key, group) for key, group in groups.items()]
    return sorted(made, key=lambda pos: (pos.forecaster, pos.t0, pos.market_id))


def _position(key: tuple, group: list) -> Position:
    valid = [r.probability for r in group if r.probability is not None]
    first = group[0]
    p = math.fsum(valid) / len(valid) if valid else None
    return Position(
        *key, first.topic, p, first.market_price, first.outcome, len(group), len(group) - len(valid)
    )


def open_trades(
    position: Position, strategy: TradingStrategy, fees: FeeSchedule
) -> tuple[Trade, ...]:
    """The trades of one open position: none (no edge), one side, or the control's complete set."""
    if position.forecaster == CONTROL:
        return complete_set(position, strategy.max_position, fees)
    side = _side(position.p, position.price, strategy.edge)
    if side is None:
        return ()
    belief, cost = _side_terms(side, position.p, position.price)
    stake = strategy.stake(belief, float(cost))
    return (_trade(position, side, cost, Fraction(stake) / cost, fees),) if stake > 0 else ()


def complete_set(position: Position, shares: float, fees: FeeSchedule) -> tuple[Trade, ...]:
    """`shares` of YES and of NO: costs `shares` in all, pays `shares` whatever the outcome."""
    n = Fraction(shares)
    return tuple(
        _trade(position, side, _side_terms(side, position.p, position.price)[1], n, fees)
        for side in ("yes", "no")
    )


def _side(p: float, price: float, edge: float) -> str | None:
    """The side whose edge is MORE than `edge`: by more than float noise (EDGE_NOISE), so that
    p = 0.55 at a price of 0.5 does not trade at an edge of 0.05 (0.55 − 0.5 =
    0.05000000000000004)."""
    if p - price > edge + EDGE_NOISE:
        return "yes"
    return "no" if price - p > edge + EDGE_NOISE else None


def _side_terms(side: str, p: float | None, price: float) -> tuple[float | None, Fraction]:
    """(belief in the side, exact price of one share of it): NO's share costs exactly 1 − price."""
    if side == "yes":
        return p, Fraction(price)
    return (None if p is None else 1.0 - p), 1 - Fraction(price)


def _trade(
    position: Position, side: str, cost: Fraction, shares: Fraction, fees: FeeSchedule
) -> Trade:
    fee = shares * fees.per_share(position.price, position.topic)
    return Trade(
        position.forecaster,
        position.market_id,
        position.t0,
        side,
        cost,
        position.p,
        position.price,
        position.outcome,
        shares * cost,
        shares,
        fee,
        shares * (Fraction(position.outcome) if side == "yes" else 1 - Fraction(position.outcome)),
    )


# ---- the simulation -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Trading:
    finding: Finding
    opened: tuple[Position, ...]  # the tradable positions, in (forecaster, t0, market) order
    strategy: TradingStrategy
    fees: FeeSchedule

    @property
    def findings(self) -> tuple[Finding, ...]:
        return (self.finding,)

    @property
    def trades(self) -> tuple[Trade, ...]:
        """Every trade, in position order (each a `Trade` of exact fractions)."""
        return tuple(t for p in self.opened for t in open_trades(p, self.strategy, self.fees))

    def to_json(self) -> dict:
        return {
            "strategy": self.strategy.to_json(),
            "fees": self.fees.to_json(),
            "findings": [self.finding.to_json()],
            "trades": [dict(zip(TRADE_COLUMNS, t.row())) for t in self.trades],
        }


def simulate_trading(
    rows: Iterable,
    strategy: TradingStrategy,
    fees: FeeSchedule,
    *,
    seed: int = 0,
    replicates: int = bootstrap.REPLICATES,
) -> Trading:
    """Trade every forecaster of `rows` (ScoredRows) against the market price at t0."""
    problem = strategy.problem()
    if problem is not None:
        raise ConfigError(problem)
    by_forecaster: dict[str, list[Position]] = defaultdict(list)
    for position in positions(rows):
        by_forecaster[position.forecaster].append(position)
    results = [
        _forecaster(name, held, strategy, fees, seed, replicates)
        for name, held in sorted(by_forecaster.items())
    ]
    finding = Finding(
        "trading",
        "Trading against the market price at t0",
        COLUMNS,
        tuple(r for r, _ in results),
        _notes(strategy, fees, by_forecaster),
    )
    return Trading(finding, tuple(p for _, opened in results for p in opened), strategy, fees)


def _forecaster(
    name: str,
    held: list[Position],
    strategy: TradingStrategy,
    fees: FeeSchedule,
    seed: int,
    replicates: int,
) -> tuple[tuple, list[Position]]:
    counts = {"no_price": 0, "failed": 0, "untradable": 0, "no_edge": 0}
    tradable, books, won = [], {}, []
    for position in held:
        status = position.status()
        if status != "open":
            counts[status] += 1
            continue
        tradable.append(position)
        book = position_book(position, strategy, fees)
        counts["no_edge"] += book is None
        if book is not None:
            books[(position.t0, position.market_id)] = (book.pnl, book.fees, book.capital)
            won += _won(book, position.outcome)
    label = "complete set (control)" if name == CONTROL else strategy.label()
    row = _row(name, label, len(held), counts, tradable, books, won, seed, replicates)
    return row, tradable


def position_book(position: Position, strategy: TradingStrategy, fees: FeeSchedule) -> Book | None:
    """The book of an open position's trades (None: no trade), by exact integer arithmetic:
    the values of `position_books(open_trades(position, strategy, fees))`."""
    fee = fees.per_share_value(position.price, position.topic)
    if position.forecaster == CONTROL:
        n = exact(strategy.max_position)
        return legs_book((("yes", n), ("no", n)), position.price, position.outcome, fee)
    side = _side(position.p, position.price, strategy.edge)
    if side is None:
        return None
    cost = side_cost(side, position.price)
    belief = position.p if side == "yes" else 1.0 - position.p
    stake = strategy.stake(belief, rounded(cost))
    if not stake > 0:
        return None
    shares = div(exact(stake), cost)
    return legs_book(((side, shares),), position.price, position.outcome, fee)


def _won(book: Book, outcome: float) -> list[bool]:
    """Per leg, whether its side won (binary outcomes only: a fractional one has no winner)."""
    if outcome not in (0.0, 1.0):
        return []
    return [outcome == (1.0 if side == "yes" else 0.0) for side in book.legs]


def _row(
    name: str,
    label: str,
    n_positions: int,
    counts: dict,
    tradable: list[Position],
    books: dict[tuple, tuple[float, float, float]],
    won: list[bool],
    seed: int,
    replicates: int,
) -> tuple:
    pnl, fees, capital = (math.fsum(b[i] for b in books.values()) for i in range(3))
    markets = sorted({p.market_id for p in tradable})
    pnl_ci, roc_ci = _intervals(name, markets, books, seed, replicates)
    return (
        name,
        label,
        n_positions,
        len(books),
        counts["no_edge"],
        counts["no_price"],
        counts["failed"],
        counts["untradable"],
        len(markets),
        capital,
        fees,
        pnl,
        *pnl_ci,
        pnl / capital if capital else None,
        *roc_ci,
        sum(won) / len(won) if won else None,
        _drawdown(books),
    )


def position_books(trades: Iterable[Trade]) -> dict[tuple, tuple[float, float, float]]:
    """(t0, market id) → (P&L, fees, capital) of its trades: summed exactly over its legs, then
    rounded once. Totals are `math.fsum`s of these (correctly rounded, order-free), so a
    control's P&L, −fees per position exactly, totals to −fees exactly."""
    legs: dict[tuple, list[Trade]] = defaultdict(list)
    for t in trades:
        legs[(t.t0, t.market_id)].append(t)
    return {
        key: (
            float(sum(t.pnl for t in group)),
            float(sum(t.fee for t in group)),
            float(sum(t.stake + t.fee for t in group)),
        )
        for key, group in legs.items()
    }


def max_drawdown(trades: Sequence[Trade]) -> float:
    """The largest fall of the cumulative P&L from an earlier peak (≥ 0; the start counts as a
    peak of 0), positions in (t0, market id) order, a position's legs summed first."""
    return _drawdown(position_books(trades))


def _drawdown(books: dict[tuple, tuple]) -> float:
    cumulative, peak, worst = 0.0, 0.0, 0.0
    for key in sorted(books):
        cumulative += books[key][0]
        peak = max(peak, cumulative)
        worst = max(worst, peak - cumulative)
    return worst


def _intervals(
    name: str, markets: list[str], books: dict[tuple, tuple], seed: int, replicates: int
) -> tuple[tuple, tuple]:
    """95% market-clustered bootstrap intervals of total P&L and of return on capital."""
    if len(markets) < MIN_MARKETS:
        return (None, None), (None, None)
    index = {m: i for i, m in enumerate(markets)}
    pnl, capital = np.zeros(len(markets)), np.zeros(len(markets))
    for (_, market_id), (position_pnl, _, position_capital) in sorted(books.items()):
        pnl[index[market_id]] += position_pnl
        capital[index[market_id]] += position_capital
    weights = bootstrap.draw_weights(
        len(markets), replicates, bootstrap.rng_for(seed, f"trading:{name}")
    )
    pnl_samples, capital_samples = weights @ pnl, weights @ capital
    with np.errstate(divide="ignore", invalid="ignore"):
        roc_samples = np.where(capital_samples > 0, pnl_samples / capital_samples, np.nan)
    return _pair(bootstrap.percentile_interval(pnl_samples)), _pair(
        bootstrap.percentile_interval(roc_samples)
    )


def _pair(interval) -> tuple:
    return (None, None) if interval is None else (interval.low, interval.high)


def _notes(strategy: TradingStrategy, fees: FeeSchedule, by_forecaster: dict) -> tuple[str, ...]:
    control = (
        "control: the 'market' forecaster buys a complete set (max_position shares of YES at the "
        "price and of NO at 1 − price) wherever it has a price: gross 0 in every outcome, so its "
        "P&L is minus its fees"
        if CONTROL in by_forecaster
        else "control: no 'market' forecaster in these rows, so no zero-edge control"
    )
    return (
        f"strategy: {strategy.label()}; bankroll {strategy.bankroll:g} (not compounded)",
        f"fees: {fees.origin}" + (f" — {fees.source}" if fees.source else ""),
        control,
        (
            "one position per (forecaster, market, t0): p is the mean of its valid repeats; all "
            "repeats failed: 'failed', not traded; no price before t0: 'no_price'; a price of 0 "
            "or 1: 'untradable'"
        ),
        (
            "capital = stakes + fees; roc = pnl / capital; hit_rate = share of trades whose side "
            "won, binary outcomes only (fractional o: YES pays o, NO 1 − o); max_drawdown "
            "over positions ordered by t0 (ties by market id)"
        ),
        (
            f"intervals: 95% market-clustered bootstrap ({bootstrap.REPLICATES} replicates), "
            f"none under {MIN_MARKETS} markets"
        ),
    )
