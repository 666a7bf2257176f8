"""Input rows → `Document`s, once, at the boundary. One reader per format.

A reader yields a `Document` or a `Reject` for every data row; it never skips one.
Formats: `headlines` (the shared Google-News headline JSONL), `news` (generic JSONL or
Parquet: id, created_at, title, text, url, source), `pushshift` (Reddit RS_/RC_ dumps,
see `hindcast.archive.pushshift`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from hindcast.archive import pushshift
from hindcast.archive.fields import instant_field, text_field, unix_field
from hindcast.archive.lines import Reject, json_objects
from hindcast.errors import ArchiveInputError, BadRow
from hindcast.records import Document


def parse_headline(row: dict) -> Document:
    return Document(
        id=text_field(row, "id", required=True),
        source=text_field(row, "source"),
        created_at=unix_field(row, "created_utc"),
        title=text_field(row, "title", required=True),
        kind=text_field(row, "kind") or "news_headline",
    )


def parse_news(row: dict) -> Document:
    title, text = text_field(row, "title"), text_field(row, "text")
    if not (title.strip() or text.strip()):
        raise BadRow("neither title nor text")
    edited_at = instant_field(row, "edited_at", required=False)
    return Document(
        id=text_field(row, "id", required=True),
        source=text_field(row, "source"),
        created_at=instant_field(row, "created_at"),
        title=title,
        text=text,
        url=text_field(row, "url"),
        kind=text_field(row, "kind") or "news",
        edit_state="at" if edited_at else "never",
        edited_at=edited_at,
        retrieved_at=instant_field(row, "retrieved_at", required=False),
    )


def rows_to_documents(
    path: Path, rows: Iterator[tuple[int, dict | Reject]], parse: Callable[[dict], Document]
) -> Iterator[Document | Reject]:
    for number, row in rows:
        if isinstance(row, Reject):
            yield row
            continue
        try:
            yield parse(row)
        except (BadRow, ValueError, TypeError) as exc:
            yield Reject(str(path), number, str(exc))


def parquet_rows(path: Path) -> Iterator[tuple[int, dict]]:
    """(row number, row) of a Parquet file, read a batch at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    number = 0
    try:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=8192):
            for row in batch.to_pylist():
                number += 1
                yield number, row
    except (pa.ArrowException, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise ArchiveInputError(f"{path}: no such input file") from None
        raise ArchiveInputError(
            f"{path}: not a readable Parquet file after row {number} ({exc})"
        ) from None


def read_documents(path: Path, fmt: str) -> Iterator[Document | Reject]:
    """Every row of one input as a Document or a Reject."""
    if fmt == "headlines":
        return rows_to_documents(path, json_objects(path), parse_headline)
    if fmt == "news":
        rows = parquet_rows(path) if path.suffix == ".parquet" else json_objects(path)
        return rows_to_documents(path, rows, parse_news)
    if fmt == "pushshift":
        return rows_to_documents(path, json_objects(path), pushshift.parser_for(path))
    raise ArchiveInputError(f"{path}: unknown format {fmt!r} (use headlines, news or pushshift)")


FORMATS = ("headlines", "news", "pushshift")
