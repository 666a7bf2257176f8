"""The run store (SQLite, PostgreSQL): every forecast, error and retrieval, with provenance. The
face other packages import (loaded on first use)."""

from __future__ import annotations

# isort: skip_file
# fmt: off
from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # each name loads from its module on first use (hindcast.faces.lazy)
    from hindcast.runs import manifest
    from hindcast.runs.analyses import AnalysisStore
    from hindcast.runs.batch import add_many, claim_many, release_many
    from hindcast.runs.database import db_file, db_url
    from hindcast.runs.forms import (identity_form, identity_of, manifest_form, manifest_of,
        retrieval_form, retrieval_of, retrievals_form, retrievals_of)
    from hindcast.runs.reading import stored_forecasts
    from hindcast.runs.rows import Detail, StoredForecast, forecast_row, stored_details
    from hindcast.runs.store import HELD, TAKEN, RunStore, open_store

__all__ = ["AnalysisStore", "Detail", "HELD", "RunStore", "TAKEN", "add_many", "claim_many",
    "db_file", "db_url", "forecast_row", "identity_form", "identity_of", "manifest",
    "manifest_form", "manifest_of", "open_store", "release_many", "retrieval_form",
    "retrieval_of", "retrievals_form", "retrievals_of", "StoredForecast", "stored_details",
    "stored_forecasts"]
# fmt: on
__getattr__, __dir__ = lazy(__name__, __file__)
