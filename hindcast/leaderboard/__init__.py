"""Exports of stored runs: leaderboards, tables, the HTML report. The face other packages import
(loaded on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # what mypy sees; at run time each name loads on first use (`lazy`)
    from hindcast.leaderboard import display, findings, publish, tables
    from hindcast.leaderboard.export import check_formats
    from hindcast.leaderboard.publish import check_slice
    from hindcast.leaderboard.run_export import analyze_runs, export_runs, write_run
    from hindcast.leaderboard.tables import canonical

_WHERE = {
    "analyze_runs": "run_export",
    "canonical": "tables",
    "check_formats": "export",
    "check_slice": "publish",
    "display": "display",
    "export_runs": "run_export",
    "findings": "findings",
    "publish": "publish",
    "tables": "tables",
    "write_run": "run_export",
}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy(
    __name__,
    _WHERE,
    modules=(
        "display",
        "findings",
        "publish",
        "tables",
    ),
)
