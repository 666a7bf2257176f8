"""Ingest inputs into an archive's draft: Parquet partitions `source=…/month=YYYY-MM` by
creation month, malformed rows to a rejects file (`file:line: reason`).

An input is identified by its **content** (sha256) and format, never by its base name:
its chunks are `<format>-<name>-<sha16>-NNNNN.parquet` and its rejects
`rejects/<source>/<name>-<sha16>.rejects.txt`. Two files with the same name and different
content (`d1/news.jsonl`, `d2/news.jsonl`, or an inbox file replaced under its name) are two
inputs and both are kept; the same content again leaves the same files (idempotent).
Freezing (`hindcast.archive.snapshot`) merges and de-duplicates each partition by id.

Writes are two-phase: every input is read in full into a private staging folder first
(streamed in constant memory: rows buffered per month and flushed every `chunk_rows`);
only when all of them were read is anything moved into the draft and the rejects folder.
A failed read (a truncated dump, a corrupt file) leaves the draft, the rejects files and
the archive folder exactly as they were.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from hindcast import frozen
from hindcast.archive import docs, layout
from hindcast.archive.lines import Reject
from hindcast.archive.readers import FORMATS, read_documents
from hindcast.errors import ArchiveInputError, FrozenError
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
    sha256: str = ""

    @property
    def read(self) -> int:
        return self.written + self.rejected


def ingest(
    inputs: Iterable[Path], source: str, fmt: str, archive: Path, chunk_rows: int = CHUNK_ROWS
) -> list[IngestSummary]:
    """Ingest every input into `archive`'s draft, all or nothing (see the module doc)."""
    archive = Path(archive)
    with staging_area(archive) as staging:
        staged = [
            stage(Path(p), source, fmt, layout.draft_dir(archive), archive, staging, chunk_rows)
            for p in inputs
        ]
        for item in staged:
            item.commit()
    return [item.summary for item in staged]


class staging_area:
    """A private folder inside the archive for one ingest; removed afterwards, and the
    archive folder too if this ingest created it, failed, and left it empty."""

    def __init__(self, archive: Path):
        self.archive, self.created = archive, not archive.exists()

    def __enter__(self) -> Path:
        self.archive.mkdir(parents=True, exist_ok=True)
        self.path = Path(tempfile.mkdtemp(prefix=".ingest-", dir=self.archive))
        return self.path

    def __exit__(self, kind, *exc) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        if kind is not None and self.created:
            try:
                self.archive.rmdir()  # only if empty: never anything another process put there
            except OSError:
                pass


def stage(
    path: Path,
    source: str,
    fmt: str,
    root: Path,
    archive: Path,
    staging: Path,
    chunk_rows: int = CHUNK_ROWS,
) -> "Staged":
    """Read one input in full into `staging`; nothing outside `staging` is touched."""
    refuse_frozen(root)
    layout.check_source(source)
    digest = input_digest(path, fmt)
    key = input_key(path, fmt, digest)
    area = Path(tempfile.mkdtemp(prefix="input-", dir=staging))
    writer = _ChunkWriter(area, source, key, chunk_rows)
    summary = IngestSummary(str(path), sha256=digest)
    log = _RejectLog(area / "rejects.txt")
    with log:
        for item in read_documents(path, fmt):
            _take(item, writer, log, summary)
    writer.flush_all()
    rejects = layout.rejects_file(archive, source, input_name(path, digest))
    summary.rejects_path = rejects if summary.rejected else None
    return Staged(
        summary, area, Path(root), source, key, log.path if summary.rejected else None, rejects
    )


@dataclass
class Staged:
    """One input read in full into its staging folder, ready to be moved into place."""

    summary: IngestSummary
    area: Path
    root: Path
    source: str
    key: str
    rejects_tmp: Path | None
    rejects: Path

    def commit(self) -> None:
        self.commit_chunks()
        self.commit_rejects()

    def commit_chunks(self) -> None:
        """Move the chunks into the partition tree, then drop this input's stale chunks (a
        different chunk size may have left more)."""
        placed = set()
        for part in sorted(self.area.glob("source=*/month=*/*.parquet")):
            final = self.root / part.relative_to(self.area)
            final.parent.mkdir(parents=True, exist_ok=True)
            part.replace(final)
            placed.add(final)
        for old in self.root.glob(f"source={self.source}/month=*/{self.key}-*.parquet"):
            if old not in placed:
                old.unlink()

    def commit_rejects(self) -> None:
        """The rejects file into place, or removed when this input has none."""
        if self.rejects_tmp is None:
            self.rejects.unlink(missing_ok=True)
            return
        self.rejects.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(self.rejects_tmp), str(self.rejects))


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
        raise FrozenError(
            f"{root} is a frozen snapshot; ingest into the archive draft and freeze a new snapshot"
        )


def input_digest(path: Path, fmt: str) -> str:
    """The sha256 of an input's bytes (its identity), after checking the format and the file."""
    if fmt not in FORMATS:
        raise ArchiveInputError(f"{path}: unknown format {fmt!r} (use {', '.join(FORMATS)})")
    if not Path(path).is_file():
        raise ArchiveInputError(f"{path}: no such input file")
    return frozen.sha256_file(Path(path))


def input_name(path: Path, digest: str) -> str:
    """`<base name>-<first 16 hex digits of its sha256>`: readable, and unique by content."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", f"{Path(path).name}-{digest[:16]}")


def input_key(path: Path, fmt: str, digest: str) -> str:
    return f"{fmt}-{input_name(path, digest)}"


class _ChunkWriter:
    """Per-month row buffers, flushed to numbered chunk files below a staging folder."""

    def __init__(self, root: Path, source: str, key: str, chunk_rows: int):
        self.root, self.source, self.key, self.chunk_rows = Path(root), source, key, chunk_rows
        self.buffers: dict[str, list[dict]] = {}
        self.counts: dict[str, int] = {}

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
            path = (
                layout.partition_dir(self.root, self.source, month)
                / f"{self.key}-{number:05d}.parquet"
            )
            docs.write_parquet(docs.to_table(rows), path)

    def flush_all(self) -> None:
        for month in sorted(self.buffers):
            self.flush(month)


class _RejectLog:
    """The rejects of one input, written to a staging file (absent when none)."""

    def __init__(self, path: Path):
        self.path = path
        self.handle: TextIO | None = None

    def __enter__(self) -> "_RejectLog":
        return self

    def write(self, reject: Reject) -> None:
        if self.handle is None:
            self.handle = self.path.open("w", encoding="utf-8")
        self.handle.write(f"{reject}\n")

    def __exit__(self, *exc) -> None:
        if self.handle is not None:
            self.handle.close()
