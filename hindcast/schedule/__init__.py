"""The re-run service: scheduled, incremental hindcasts as markets resolve and dumps arrive.

config (hindcast.toml) · state (the service's tables in the run database) · lock (one
instance) · logs (JSON lines) · jobs (pull, inbox, sweeps, export) · sweeps (incremental
batch series) · service (`once`, and `run` on APScheduler) · status · live (the live arm:
open markets forecast now, scored on resolution; livelog, its hash chain; live_report, the
backtest–live gap).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # what mypy sees; at run time each name loads on first use (`lazy`)
    from hindcast.schedule import live, live_report, livelog, status
    from hindcast.schedule.config import load
    from hindcast.schedule.service import running, serve

_WHERE = {
    "live": "live",
    "live_report": "live_report",
    "livelog": "livelog",
    "load": "config",
    "running": "service",
    "serve": "service",
    "status": "status",
}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy(__name__, _WHERE, modules=("live", "live_report", "livelog", "status"))
