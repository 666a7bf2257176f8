"""The frozen document archive: ingest, snapshots, the index and the t0-bound retriever. The face
other packages import (loaded on first use)."""

from __future__ import annotations

# isort: skip_file
# fmt: off
from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # each name loads from its module on first use (hindcast.faces.lazy)
    from hindcast.archive import (build, distributed, embed, fanout, ingest, layout, shards,
        shipped, snapshot)
    from hindcast.archive.ann_index import check_recorded
    from hindcast.archive.embed import get_embedder
    from hindcast.archive.index import IndexReader, build_index, open_index, pending
    from hindcast.archive.layout import check_source, snapshot_dir
    from hindcast.archive.readers import FORMATS
    from hindcast.archive.retriever import TimeBoundRetriever
    from hindcast.archive.snapshot import Snapshot, freeze, latest, open_snapshot, verify_snapshot

__all__ = ["FORMATS", "IndexReader", "Snapshot", "TimeBoundRetriever", "build", "build_index",
    "check_recorded", "check_source", "distributed", "embed", "fanout", "freeze", "get_embedder",
    "ingest", "latest", "layout", "open_index", "open_snapshot", "pending", "shards", "shipped",
    "snapshot", "snapshot_dir", "verify_snapshot"]
# fmt: on
__getattr__, __dir__ = lazy(__name__, __file__)
