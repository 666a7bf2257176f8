"""Rich rendering for the terminal (stdout for results, stderr for progress)."""

from __future__ import annotations

import sys

COLUMNS = ("forecaster", "n forecasts", "failed", "n markets", "Brier [95% CI]", "market Brier",
           "Brier − market [95% CI]", "skill vs market", "tokens in / out", "cost (USD)")


def out_console():
    from rich.console import Console

    return Console(file=sys.stdout, width=None if sys.stdout.isatty() else 200)


def err_console():
    from rich.console import Console

    return Console(file=sys.stderr)


def number(value, digits: int = 4) -> str:
    if value is None:
        return "—"
    return f"{value:.3g}" if abs(value) >= 100 else f"{value:.{digits}f}"


def with_interval(value, low, high, n_markets: int | None = None, fmt=number) -> str:
    if value is None:
        return "—"
    from hindcast.api import display

    if low is None:
        too_small = n_markets is not None and display.too_few(n_markets)
        return f"{fmt(value)} ({display.TOO_SMALL})" if too_small else fmt(value)
    return f"{fmt(value)} [{fmt(low)}, {fmt(high)}]"


def cells(row) -> tuple[str, ...]:
    """The terminal row; missing intervals and costs read as in the exports, notes go below the table."""
    from hindcast.api import display

    return (_name(row), str(row.n_forecasts), str(row.n_failed),
            f"{row.n_markets} (subset)" if row.subset else str(row.n_markets),
            with_interval(row.brier, row.brier_ci_low, row.brier_ci_high, row.n_markets),
            number(row.market_brier),
            with_interval(row.brier_diff_vs_market, row.diff_ci_low, row.diff_ci_high, row.n_markets_paired, display.signed),
            number(row.skill_vs_market), display.tokens(row), display.cost(row))


def _name(row) -> str:
    return row.forecaster if row.slice == "all" else f"{row.forecaster} ({row.slice})"


def notes(board) -> list[str]:
    """One line per row that has a subset mark, a missing interval or skill, or an unknown cost."""
    from hindcast.api import display

    lines = []
    for row in board:
        text = "; ".join(n for n in (row.subset, display.notes(row)) if n)
        if text:
            lines.append(f"{_name(row)}: {text}")
    return lines


def leaderboard_table(board, title: str = "leaderboard (lower Brier is better; Brier − market < 0 beats the market; "
                                         "CIs: bootstrap over markets, none under 5)"):
    from rich.table import Table

    table = Table(title=title, caption="\n".join(notes(board)) or None, caption_justify="left")
    for column in COLUMNS:
        if column == "forecaster":
            table.add_column(column, overflow="fold", min_width=20)
        else:
            table.add_column(column, justify="right", no_wrap=column == "skill vs market")
    for row in board:
        table.add_row(*cells(row))
    return table
