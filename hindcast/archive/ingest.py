"""Ingest inputs into an archive's draft: Parquet partitions `source=…/month=YYYY-MM` by
creation month, malformed rows to a rejects file (`file:line: reason`).

Streams in constant memory: rows are buffered per month and flushed every `chunk_rows`
rows to `<input-key>-NNNNN.parquet.part`; only when the whole input has been read are that
input's earlier chunks replaced by the new ones, so the same input always leaves the same
files (idempotent) and a failed read leaves the draft as it was. Freezing
(`hindcast.archive.snapshot`) later merges and de-duplicates each partition.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from hindcast import frozen
from hindcast.archive import docs, layout
from hindcast.archive.lines import Reject
from hindcast.archive.readers import FORMATS, read_documents
from hindcast.errors import FrozenError
from hindcast.timeutil import month_key

CHUNK_ROWS = 50_000


@dataclass
class IngestSummary:
    """What one input gave: rows read, written, rejected, per creation month."""

    input: str
    written: int = 0
    rejected: int = 0
    months: dict[str, int] = field(default_factory=dict)
    rejects_path: Path | None = None

    @property
    def read(self) -> int:
        return self.written + self.rejected


def ingest(inputs: Iterable[Path], source: str, fmt: str, archive: Path,
           chunk_rows: int = CHUNK_ROWS) -> list[IngestSummary]:
    """Ingest every input into `archive`'s draft (see `ingest_into`)."""
    return [ingest_into(Path(p), source, fmt, layout.draft_dir(archive),
                        layout.rejects_file(archive, source, Path(p).name), chunk_rows) for p in inputs]


def ingest_into(path: Path, source: str, fmt: str, root: Path, rejects_path: Path,
                chunk_rows: int = CHUNK_ROWS) -> IngestSummary:
    """Ingest one input into the partition tree at `root` (refused if `root` is frozen)."""
    refuse_frozen(root)
    layout.check_source(source)
    key = input_key(path, fmt)
    writer = _ChunkWriter(root, source, key, chunk_rows)
    summary = IngestSummary(str(path))
    try:
        with _RejectLog(rejects_path) as log:
            for item in read_documents(path, fmt):
                _take(item, writer, log, summary)
        writer.flush_all()
    except BaseException:
        writer.discard()
        raise
    remove_chunks(root, source, key)
    writer.commit()
    summary.rejects_path = rejects_path if summary.rejected else None
    return summary


def _take(item, writer: "_ChunkWriter", log: "_RejectLog", summary: IngestSummary) -> None:
    if isinstance(item, Reject):
        log.write(item)
        summary.rejected += 1
        return
    month = month_key(item.created_at)
    writer.add(month, docs.to_row(item, writer.source))
    summary.written += 1
    summary.months[month] = summary.months.get(month, 0) + 1


def refuse_frozen(root: Path) -> None:
    if (Path(root) / frozen.MANIFEST).exists():
        raise FrozenError(f"{root} is a frozen snapshot; ingest into the archive draft and freeze a new snapshot")


def input_key(path: Path, fmt: str) -> str:
    if fmt not in FORMATS:
        from hindcast.archive.lines import ArchiveInputError

        raise ArchiveInputError(f"{path}: unknown format {fmt!r} (use {', '.join(FORMATS)})")
    return re.sub(r"[^A-Za-z0-9_.-]", "_", f"{fmt}-{path.name}")


def remove_chunks(root: Path, source: str, key: str) -> None:
    for old in Path(root).glob(f"source={source}/month=*/{key}-*.parquet"):
        old.unlink()


class _ChunkWriter:
    """Per-month row buffers, flushed to numbered `.part` chunk files; `commit` publishes them."""

    def __init__(self, root: Path, source: str, key: str, chunk_rows: int):
        self.root, self.source, self.key, self.chunk_rows = Path(root), source, key, chunk_rows
        self.buffers: dict[str, list[dict]] = {}
        self.counts: dict[str, int] = {}
        self.written: list[Path] = []

    def add(self, month: str, row: dict) -> None:
        buffer = self.buffers.setdefault(month, [])
        buffer.append(row)
        if len(buffer) >= self.chunk_rows:
            self.flush(month)

    def flush(self, month: str) -> None:
        rows = self.buffers.pop(month, [])
        if rows:
            number = self.counts.get(month, 0)
            self.counts[month] = number + 1
            path = layout.partition_dir(self.root, self.source, month) / f"{self.key}-{number:05d}.parquet.part"
            docs.write_parquet(docs.to_table(rows), path)
            self.written.append(path)

    def flush_all(self) -> None:
        for month in sorted(self.buffers):
            self.flush(month)

    def commit(self) -> None:
        for path in self.written:
            path.replace(path.with_suffix(""))

    def discard(self) -> None:
        for path in self.written:
            path.unlink(missing_ok=True)


class _RejectLog:
    """The rejects file of one input, rewritten on every ingest of it (absent when none)."""

    def __init__(self, path: Path):
        self.path, self.handle = path, None

    def __enter__(self) -> "_RejectLog":
        self.path.unlink(missing_ok=True)
        return self

    def write(self, reject: Reject) -> None:
        if self.handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.handle = self.path.open("w", encoding="utf-8")
        self.handle.write(f"{reject}\n")

    def __exit__(self, *exc) -> None:
        if self.handle is not None:
            self.handle.close()
