"""Documents ↔ Arrow: the one Parquet schema of archive partitions, written deterministically.

Times are `timestamp[us, UTC]`. Besides the `Document` fields a row carries `collection`
(the archive source name that is also the partition key; `source` is the outlet or
subreddit a document came from) and two integer instants the retriever filters on:
`created_us` and `edit_us` (microseconds since the epoch; `edit_us` is INT64_MIN for a
never-edited text, the edit instant, or INT64_MAX for an edit at an unknown time, so that
the strict edit policy is the single comparison `edit_us < t0`).
"""

from __future__ import annotations

from pathlib import Path

from hindcast.records import Document

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def schema():
    import pyarrow as pa

    ts = pa.timestamp("us", tz="UTC")
    return pa.schema(
        [
            ("id", pa.string()),
            ("collection", pa.string()),
            ("source", pa.string()),
            ("kind", pa.string()),
            ("created_at", ts),
            ("created_us", pa.int64()),
            ("title", pa.string()),
            ("text", pa.string()),
            ("url", pa.string()),
            ("edit_state", pa.string()),
            ("edited_at", ts),
            ("edit_us", pa.int64()),
            ("retrieved_at", ts),
            ("score", pa.int64()),
            ("num_comments", pa.int64()),
            ("parent_id", pa.string()),
            ("thread_id", pa.string()),
            ("deleted", pa.bool_()),
        ]
    )


def micros(value) -> int:
    """Microseconds since the epoch of an aware datetime, exactly (no float rounding)."""
    from datetime import datetime, timezone

    delta = value - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def edit_us(doc: Document) -> int:
    if doc.edit_state == "never":
        return INT64_MIN
    if doc.edit_state == "unknown":
        return INT64_MAX
    return micros(doc.edited_at)


def to_row(doc: Document, collection: str) -> dict:
    row = {name: getattr(doc, name) for name in Document.__dataclass_fields__}
    row.update(collection=collection, created_us=micros(doc.created_at), edit_us=edit_us(doc))
    return row


def from_row(row: dict) -> Document:
    return Document(**{name: row[name] for name in Document.__dataclass_fields__})


def sort_key(row: dict) -> tuple:
    return (row["created_us"], row["id"])


def to_table(rows: list[dict]):
    """Rows sorted by (created_us, id) as an Arrow table of the archive schema."""
    import pyarrow as pa

    return pa.Table.from_pylist(sorted(rows, key=sort_key), schema())


def write_parquet(table, path: Path) -> None:
    """Byte-for-byte deterministic for equal tables (fixed options, no wall-clock metadata)."""
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(
        table,
        tmp,
        compression="zstd",
        compression_level=3,
        row_group_size=65_536,
        use_dictionary=True,
        write_statistics=True,
        store_schema=True,
    )
    tmp.replace(path)


def read_parquet(path: Path):
    import pyarrow.parquet as pq

    return pq.read_table(path, schema=schema())


def dedupe(rows: list[dict]) -> list[dict]:
    """One row per id: the one fetched last (then the greatest row), whatever the input order."""
    best: dict[str, dict] = {}
    for row in rows:
        kept = best.get(row["id"])
        if kept is None or _rank(row) > _rank(kept):
            best[row["id"]] = row
    return list(best.values())


def _rank(row: dict) -> tuple:
    fetched = row["retrieved_at"]
    return (
        fetched is not None,
        fetched.isoformat() if fetched else "",
        repr(sorted(row.items(), key=str)),
    )
