"""The run store (SQLite, PostgreSQL): every forecast, error and retrieval, with provenance. The face other packages import (loaded on first use)."""

from __future__ import annotations

from hindcast.faces import lazy

_WHERE = {
    "db_file": "store",
    "db_url": "store",
    "ForecastRow": "store",
    "HELD": "store",
    "manifest": "manifest",
    "open_store": "store",
    "RunStore": "store",
    "TAKEN": "store",
}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy(__name__, _WHERE, modules=("manifest",))
