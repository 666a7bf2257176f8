"""Where everything of an archive lives. Pure paths: nothing here reads or writes.

```
ARCHIVE/
  draft/source=S/month=YYYY-MM/<fmt>-<name>-<sha16>-00000.parquet
                                                            mutable ingest area (inputs by content)
  rejects/<source>/<name>-<sha16>.rejects.txt               file:line: reason, one a line
  snapshots/<snapshot-id>/manifest.json                     frozen, content-addressed
  snapshots/<snapshot-id>/source=S/month=YYYY-MM/part-0.parquet
  LATEST                                                    newest frozen snapshot id
  index/<snapshot-id>/<embedder>/index.json                 derived from a snapshot (embeddings)
  index/<snapshot-id>/<embedder>/vectors/month=YYYY-MM/     chunk-NNNNN.npy while embedding
                                                            (resumable), then
                                                            vectors/created_us/edit_us.npy (time
                                                            order) and codes/scales.npy (int8 first
                                                            stage, scan.py) and text/*.npy
                                                            (time-sorted BM25 postings, text.py)
  index/<snapshot-id>/<embedder>/vectors/month=YYYY-MM/ann/ optional IVF of the month (`archive
                                                            embed --approx`): centroids, offsets,
                                                            positions, codes, scales, edit_us in
                                                            list order, meta.json (ann_month)
  index/<snapshot-id>/<embedder>/lance/                     LanceDB: one table per month (m_YYYY_MM)
  vectors/<snapshot-id>/<embedder>/vectors.npy, manifest.json
                                                            optional: vectors shipped with the
                                                            archive, used by the index build when
                                                            their digests match (shipped.py)
```

The index lives beside the snapshot, not inside it: a frozen snapshot never changes, and
an index can be rebuilt from it (with another model) at any time.
"""

from __future__ import annotations

import re
from pathlib import Path

_MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
_SOURCE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
PART_NAME = "part-0.parquet"


def check_source(source: str) -> str:
    if not _SOURCE.match(source):
        raise ValueError(f"source name {source!r}: use letters, digits, '.', '_' or '-'")
    return source


def check_month(month: str) -> str:
    if not _MONTH.match(month):
        raise ValueError(f"month {month!r} is not YYYY-MM")
    return month


def partition_dir(root: Path, source: str, month: str) -> Path:
    return Path(root) / f"source={check_source(source)}" / f"month={check_month(month)}"


def parse_partition(rel: Path) -> tuple[str, str]:
    """`source=S/month=M/...` → (S, M)."""
    source_part, month_part = rel.parts[0], rel.parts[1]
    if not (source_part.startswith("source=") and month_part.startswith("month=")):
        raise ValueError(f"{rel} is not below source=…/month=…")
    return source_part[len("source=") :], month_part[len("month=") :]


def draft_dir(archive: Path) -> Path:
    return Path(archive) / "draft"


def rejects_file(archive: Path, source: str, input_name: str) -> Path:
    return Path(archive) / "rejects" / check_source(source) / f"{input_name}.rejects.txt"


def snapshots_dir(archive: Path) -> Path:
    return Path(archive) / "snapshots"


def snapshot_dir(archive: Path, snapshot_id: str) -> Path:
    return snapshots_dir(archive) / snapshot_id


def latest_file(archive: Path) -> Path:
    return Path(archive) / "LATEST"


def index_dir(archive: Path, snapshot_id: str, embedder: str) -> Path:
    return Path(archive) / "index" / snapshot_id / embedder


def index_parent(archive: Path, snapshot_id: str) -> Path:
    return Path(archive) / "index" / snapshot_id


def vector_chunk_dir(index: Path, month: str) -> Path:
    return Path(index) / "vectors" / f"month={check_month(month)}"


def lance_dir(index: Path) -> Path:
    return Path(index) / "lance"


def month_table(month: str) -> str:
    """LanceDB table name of one month: `m_2025_10`."""
    return "m_" + check_month(month).replace("-", "_")


def month_end_us(month: str) -> int:
    """The first microsecond after `month` (YYYY-MM), UTC."""
    from datetime import datetime, timezone

    year, number = map(int, check_month(month).split("-"))
    year, number = (year + 1, 1) if number == 12 else (year, number + 1)
    end = datetime(year, number, 1, tzinfo=timezone.utc) - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return end.days * 86_400_000_000
