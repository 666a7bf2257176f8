"""The frozen document archive: ingest, snapshots, the index and the t0-bound retriever. The face other packages import (loaded on first use)."""

from __future__ import annotations

from hindcast.faces import lazy

_WHERE = {
    "build": "build",
    "build_index": "index",
    "check_recorded": "ann",
    "check_source": "layout",
    "distributed": "distributed",
    "embed": "embed",
    "FORMATS": "readers",
    "freeze": "snapshot",
    "get_embedder": "embed",
    "ingest": "ingest",
    "latest": "snapshot",
    "layout": "layout",
    "open_index": "index",
    "open_snapshot": "snapshot",
    "pending": "index",
    "retriever": "retriever",
    "snapshot": "snapshot",
    "snapshot_dir": "layout",
    "TimeBoundRetriever": "retriever",
    "verify_snapshot": "snapshot",
}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy(
    __name__,
    _WHERE,
    modules=(
        "build",
        "distributed",
        "embed",
        "ingest",
        "layout",
        "retriever",
        "snapshot",
    ),
)
