"""Exports of stored runs: leaderboards, tables, the HTML report. The face other packages import
(loaded on first use)."""

from __future__ import annotations

# isort: skip_file
# fmt: off
from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # each name loads from its module on first use (hindcast.faces.lazy)
    from hindcast.leaderboard import display, findings, publish
    from hindcast.leaderboard.export import check_formats
    from hindcast.leaderboard.publish import check_slice
    from hindcast.leaderboard.run_export import analyze_runs, export_runs, write_run
    from hindcast.leaderboard.tables import canonical

__all__ = ["analyze_runs", "canonical", "check_formats", "check_slice", "display", "export_runs",
    "findings", "publish", "write_run"]
# fmt: on
__getattr__, __dir__ = lazy(__name__, __file__)
