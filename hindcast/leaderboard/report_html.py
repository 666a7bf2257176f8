"""The report's HTML building blocks: the page shell, sortable tables and their cells, and a
finding as a table. Rendering only: every value arrives computed, and every text reaches the
page through `html.escape`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from hindcast.leaderboard import assets
from hindcast.leaderboard.export import cell

TEXT = ' class="text"'


def page(title: str, sections: Sequence[str], csp: str = assets.CSP) -> str:
    """The whole page: its policy, inline style, the sections, then its one inline script."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{escape(csp)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{assets.CSS}</style></head>\n<body>"
        f"<h1>{escape(title)}</h1>\n"
        + "\n".join(sections)
        + f"\n<script>{assets.JS}</script></body></html>\n"
    )


def td(value, shown: str | None = None, text: bool = False) -> str:
    """A cell whose data-value sorts exactly (repr of floats) and whose text
    is rounded for reading."""
    raw = "" if value is None else (repr(value) if isinstance(value, float) else str(value))
    return (
        f"<td{TEXT if text else ''} "
        f'data-value="{escape(raw)}">{escape(cell(value) if shown is None else shown)}</td>'
    )


def sortable(
    headers: Sequence[tuple[str, bool]], rows: Sequence[Sequence[str]], table_id: str = ""
) -> str:
    head = "".join(f'<th{TEXT if text else ""} scope="col">{escape(h)}</th>' for h, text in headers)
    body = "".join("<tr>" + "".join(cells) + "</tr>" for cells in rows)
    ident = f' id="{table_id}"' if table_id else ""
    return (
        '<div class="scroll"><table '
        f'class="sortable"{ident}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
    )


def finding_section(finding) -> str:
    """One analysis (a hindcast.scoring.findings.Finding) as a titled table with its notes."""
    return (
        f'<section id="finding-{slug(finding.key)}" '
        f'class="finding"><h2>{escape(finding.title)}</h2>'
        f"{finding_body(finding)}</section>"
    )


def finding_body(finding) -> str:
    """A finding's notes and table (or "No rows.")."""
    notes = "".join(f'<p class="note">{escape(n)}</p>' for n in finding.notes)
    rows = [[finding_cell(v) for v in row] for row in finding.rows]
    texts = [
        all(isinstance(row[i], str) or row[i] is None for row in finding.rows)
        and bool(finding.rows)
        for i in range(len(finding.columns))
    ]
    table = sortable(list(zip(finding.columns, texts)), rows, f"finding-{slug(finding.key)}-table")
    return notes + (table if finding.rows else '<p class="note">No rows.</p>')


def finding_cell(value) -> str:
    """A finding's cell: short text kept on one line, long text (a reason, a note)
    wrapped in a wide cell."""
    cell_html = td(
        value if not isinstance(value, float) or math.isfinite(value) else None,
        number(value),
        isinstance(value, str),
    )
    return (
        cell_html.replace('<td class="text"', '<td class="text long"', 1)
        if isinstance(value, str) and len(value) > 40
        else cell_html
    )


def number(value) -> str:
    """A finding's value as read: None (or not finite) "–", floats to 4 decimals (3 significant
    digits under 0.001, thousands separated from 1,000), the rest as is."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if isinstance(value, bool) or not isinstance(value, float):
        return str(value)
    if value == 0 or 0.001 <= abs(value) < 1000:
        return f"{value:.4f}".rstrip("0").rstrip(".") if value != 0 else "0"
    return f"{value:,.1f}" if abs(value) >= 1000 else f"{value:.3g}"


def slug(key: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in key)


def notes(lines: Sequence[str]) -> str:
    return "".join(f'<p class="note">{escape(line)}</p>' for line in lines)
