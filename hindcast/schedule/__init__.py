"""The re-run service: scheduled, incremental hindcasts as markets resolve and dumps arrive.

config (hindcast.toml) · state (the service's tables in the run database) · lock (one
instance) · logs (JSON lines) · jobs (pull, inbox, sweeps, export) · sweeps (incremental
batch series) · service (`once`, and `run` on APScheduler) · status · live (the live arm:
open markets forecast now, scored on resolution; livelog, its hash chain; live_report, the
backtest–live gap).
"""

from __future__ import annotations

# isort: skip_file
# fmt: off
from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # each name loads from its module on first use (hindcast.faces.lazy)
    from hindcast.schedule import live, live_report, livelog, status
    from hindcast.schedule.config import load
    from hindcast.schedule.service import running, serve

__all__ = ["live", "live_report", "livelog", "load", "running", "serve", "status"]
# fmt: on
__getattr__, __dir__ = lazy(__name__, __file__)
