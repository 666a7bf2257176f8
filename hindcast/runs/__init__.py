"""The run store (SQLite, PostgreSQL): every forecast, error and retrieval, with provenance. The
face other packages import (loaded on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # what mypy sees; at run time each name loads on first use (`lazy`)
    from hindcast.runs import manifest
    from hindcast.runs.analyses import AnalysisStore
    from hindcast.runs.batch import add_many, claim_many, release_many
    from hindcast.runs.reading import stored_forecasts
    from hindcast.runs.store import (
        HELD,
        TAKEN,
        Detail,
        ForecastRow,
        RunStore,
        db_file,
        db_url,
        forecast_row,
        open_store,
        stored_details,
    )

_WHERE = {
    "add_many": "batch",
    "AnalysisStore": "analyses",
    "claim_many": "batch",
    "release_many": "batch",
    "forecast_row": "store",
    "db_file": "store",
    "Detail": "store",
    "db_url": "store",
    "ForecastRow": "store",
    "HELD": "store",
    "manifest": "manifest",
    "open_store": "store",
    "RunStore": "store",
    "stored_details": "store",
    "stored_forecasts": "reading",
    "TAKEN": "store",
}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy(__name__, _WHERE, modules=("manifest",))
