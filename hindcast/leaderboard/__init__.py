"""Exports of stored runs: leaderboards, tables, the HTML report. The face other packages import (loaded on first use)."""

from __future__ import annotations

from hindcast.faces import lazy

_WHERE = {
    "canonical": "tables",
    "check_formats": "export",
    "check_slice": "publish",
    "display": "display",
    "export_runs": "run_export",
    "findings": "findings",
    "publish": "publish",
    "recorded_snapshots": "run_export",
    "stored_details": "viewer",
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
