"""Rich rendering for the terminal (stdout for results, stderr for progress)."""

from __future__ import annotations

import sys

COLUMNS = ("forecaster", "n forecasts", "failed", "n markets", "Brier [95% CI]", "market Brier (same rows)",
           "skill vs market [95% CI]")


def out_console():
    from rich.console import Console

    return Console(file=sys.stdout, width=None if sys.stdout.isatty() else 170)


def err_console():
    from rich.console import Console

    return Console(file=sys.stderr)


def number(value, digits: int = 4) -> str:
    if value is None:
        return "—"
    return f"{value:.3g}" if abs(value) >= 100 else f"{value:.{digits}f}"


def with_interval(value, low, high) -> str:
    if value is None:
        return "—"
    return number(value) if low is None else f"{number(value)} [{number(low)}, {number(high)}]"


def cells(row) -> tuple[str, ...]:
    return (row.forecaster if row.slice == "all" else f"{row.forecaster} ({row.slice})", str(row.n_forecasts),
            str(row.n_failed), str(row.n_markets), with_interval(row.brier, row.brier_ci_low, row.brier_ci_high),
            number(row.market_brier), with_interval(row.skill_vs_market, row.skill_ci_low, row.skill_ci_high))


def leaderboard_table(board, title: str = "leaderboard (lower Brier is better; CIs: bootstrap over markets)"):
    from rich.table import Table

    table = Table(title=title)
    for column in COLUMNS:
        if column == "forecaster":
            table.add_column(column, overflow="fold", min_width=24)
        else:
            table.add_column(column, justify="right")
    for row in board:
        table.add_row(*cells(row))
    return table
