"""The frozen document archive: ingest, snapshots, the index and the t0-bound retriever. The face
other packages import (loaded on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # what mypy sees; at run time each name loads on first use (`lazy`)
    from hindcast.archive import (
        build,
        distributed,
        embed,
        fanout,
        ingest,
        layout,
        retriever,
        shards,
        shipped,
        snapshot,
    )
    from hindcast.archive.ann_index import check_recorded
    from hindcast.archive.embed import get_embedder
    from hindcast.archive.index import IndexReader, build_index, open_index, pending
    from hindcast.archive.layout import check_source, snapshot_dir
    from hindcast.archive.readers import FORMATS
    from hindcast.archive.retriever import TimeBoundRetriever
    from hindcast.archive.snapshot import Snapshot, freeze, latest, open_snapshot, verify_snapshot

_WHERE = {
    "build": "build",
    "build_index": "index",
    "check_recorded": "ann_index",
    "check_source": "layout",
    "distributed": "distributed",
    "embed": "embed",
    "fanout": "fanout",
    "FORMATS": "readers",
    "freeze": "snapshot",
    "get_embedder": "embed",
    "IndexReader": "index",
    "ingest": "ingest",
    "latest": "snapshot",
    "layout": "layout",
    "open_index": "index",
    "open_snapshot": "snapshot",
    "pending": "index",
    "retriever": "retriever",
    "shards": "shards",
    "shipped": "shipped",
    "Snapshot": "snapshot",
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
        "fanout",
        "ingest",
        "layout",
        "retriever",
        "shards",
        "shipped",
        "snapshot",
    ),
)
