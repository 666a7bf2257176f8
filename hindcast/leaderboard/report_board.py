"""The report's leaderboard tables (the run's board, the regime board): the headline columns,
the rows' notes below them, the other columns in a second, collapsed table. Rendering only."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from hindcast.leaderboard import display
from hindcast.leaderboard.report_html import sortable, td


def _with(value: str, interval: str) -> str:
    if interval == "—" or value == "—":
        return value
    return f"{value} ({interval})" if interval == display.TOO_SMALL else f"{value} {interval}"


# What the leaderboard shows at a glance (it fits a 1280 px window): the headline comparison
# first, each value with its interval in one cell; the rows' notes go below the table and the
# other columns into a second table (collapsed).
HEADLINE = (  # header, the row's sort field, its text
    (
        "Brier − market [95% CI]",
        "brier_diff_vs_market",
        lambda r: _with(display.signed(r.brier_diff_vs_market), display.diff_ci(r)),
    ),
    ("Brier [95% CI]", "brier", lambda r: _with(display.number(r.brier), display.brier_ci(r))),
    ("market Brier", "market_brier", lambda r: display.number(r.market_brier)),
    ("skill vs market", "skill_vs_market", lambda r: display.number(r.skill_vs_market)),
    (
        "n markets",
        "n_markets",
        lambda r: f"{r.n_markets} (subset)" if r.subset else str(r.n_markets),
    ),
    ("n forecasts", "n_forecasts", lambda r: str(r.n_forecasts)),
    ("failed", "n_failed", lambda r: str(r.n_failed)),
)
MORE_COLUMNS = (
    "forecaster",
    "slice",
    "n_paired",
    "skill_ci",
    "log_score",
    "accuracy",
    "mean_abs_diff_market",
    "ece",
    "tokens",
    "requests",
    "retries",
    "cost",
)


def board_table(board: Sequence, table_id: str) -> str:
    """The headline columns of a board, its rows' notes below it, the other
    columns in a second table."""
    return (
        headline_table(board, table_id)
        + board_notes(board, f"{table_id}-notes")
        + f'<details class="more"><summary>More columns: {escape(_more_headers())}</summary>'
        + _columns_table(board, f"{table_id}-more", MORE_COLUMNS)
        + "</details>"
    )


def headline_table(board: Sequence, table_id: str) -> str:
    sliced = any(r.slice != "all" for r in board)
    headers = [
        ("forecaster", True),
        *([("slice", True)] if sliced else []),
        *[(h, False) for h, _, _ in HEADLINE],
    ]
    rows = [
        [
            _name_cell(r),
            *([td(r.slice, text=True)] if sliced else []),
            *[td(getattr(r, key), text_of(r)) for _, key, text_of in HEADLINE],
        ]
        for r in board
    ]
    return sortable(headers, rows, table_id)


def _name_cell(row) -> str:
    """The forecaster, at most two lines tall (the full name in its title
    and in the notes below)."""
    name = escape(row.forecaster)
    return (
        f'<td class="text name" data-value="{name}" title="{name}"><span '
        f'class="clamp">{name}</span></td>'
    )


def board_cell(row, key: str) -> str:
    column = display.COLUMNS[key]
    value = column.text(row) if column.sort is None else getattr(row, column.sort)
    return td(value, column.text(row), column.is_text)


def _columns_table(board: Sequence, table_id: str, keys: Sequence[str]) -> str:
    columns = [c for c in keys if c != "slice" or any(r.slice != "all" for r in board)]
    rows = [[board_cell(r, key) for key in columns] for r in board]
    return sortable(
        [(display.COLUMNS[c].header, display.COLUMNS[c].is_text) for c in columns], rows, table_id
    )


def _more_headers() -> str:
    return ", ".join(
        display.COLUMNS[c].header for c in MORE_COLUMNS if c not in ("forecaster", "slice")
    )


def board_notes(board: Sequence, list_id: str) -> str:
    """One line per row that has a note (subset, no interval, skill not shown, cost unknown)."""
    items = [
        f"<li><b>{escape(_row_name(r))}</b>: {escape(text)}</li>"
        for r in board
        if (text := "; ".join(n for n in (r.subset, display.notes(r)) if n))
    ]
    return f'<ul class="board-notes" id="{list_id}">{"".join(items)}</ul>' if items else ""


def _row_name(row) -> str:
    return row.forecaster if row.slice == "all" else f"{row.forecaster} ({row.slice})"
