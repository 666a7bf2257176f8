"""Rich rendering for the terminal (stdout for results, stderr for progress)."""

from __future__ import annotations

import sys


def out_console():
    from rich.console import Console

    return Console(file=sys.stdout, width=None if sys.stdout.isatty() else 120)


def err_console():
    from rich.console import Console

    return Console(file=sys.stderr)


def leaderboard_table(board):
    from rich.table import Table

    from hindcast.leaderboard.export import HEADERS, SHOWN, cell

    table = Table(title="leaderboard (lower Brier is better)")
    for column in SHOWN:
        table.add_column(HEADERS[column], justify="left" if column == "forecaster" else "right")
    for row in board:
        table.add_row(*(cell(getattr(row, c)) for c in SHOWN))
    return table
