"""Frozen archive snapshots: merge the draft's partitions, hash them, publish atomically.

A snapshot is `ARCHIVE/snapshots/<id>/source=S/month=M/part-0.parquet` plus a manifest
with the sha256 of every partition file. The id is derived from those hashes alone
(`a-` + 16 hex digits), so the same documents always give the same id, and freezing them
twice writes nothing new. Frozen files are made read-only; `verify` reports any changed,
missing or extra file, and ingesting into a frozen snapshot is refused.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hindcast import frozen
from hindcast.archive import docs, layout
from hindcast.archive.ingest import IngestSummary, stage, staging_area
from hindcast.errors import ArchiveIntegrityError

FORMAT = "hindcast-archive-snapshot/1"


@dataclass(frozen=True)
class Snapshot:
    """An opened, verified snapshot: its id, folder and (source, month) partitions."""

    id: str
    path: Path
    archive: Path
    partitions: tuple[tuple[str, str], ...]

    @property
    def months(self) -> tuple[str, ...]:
        return tuple(sorted({month for _, month in self.partitions}))

    def partition_files(self, month: str) -> list[Path]:
        """The partition files of one month (every source). The only way files are found."""
        return [
            layout.partition_dir(self.path, s, m) / layout.PART_NAME
            for s, m in self.partitions
            if m == month
        ]


def build_snapshot(inputs: list[Path], source: str, fmt: str, archive_dir: Path) -> str:
    """Ingest `inputs` (format `fmt`) as `source` and freeze exactly them; return the snapshot id.

    Deterministic and idempotent: the same inputs give the same files and the same id.
    Malformed rows go to `archive_dir/rejects/<source>/<input name>-<sha16>.rejects.txt`.
    """
    return ingest_and_freeze(inputs, source, fmt, archive_dir)[0]


def ingest_and_freeze(
    inputs: list[Path], source: str, fmt: str, archive_dir: Path
) -> tuple[str, list[IngestSummary]]:
    archive_dir = Path(archive_dir)
    archive_dir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".build-", dir=archive_dir))
    try:
        with staging_area(archive_dir) as staging:
            staged = [stage(Path(p), source, fmt, scratch, archive_dir, staging) for p in inputs]
            for item in staged:
                item.commit_chunks()
            snapshot_id = freeze(archive_dir, scratch)
            for item in staged:
                item.commit_rejects()
        return snapshot_id, [item.summary for item in staged]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def freeze(archive: Path, draft: Path | None = None) -> str:
    """Freeze the draft (default `archive/draft`) as a snapshot, make it LATEST, return its id."""
    draft = Path(draft) if draft is not None else layout.draft_dir(archive)
    partitions = draft_partitions(draft)
    if not partitions:
        raise ArchiveIntegrityError(f"{draft}: nothing to freeze (ingest some input first)")
    staging = frozen.staging_dir(layout.snapshots_dir(archive))
    try:
        snapshot_id = _write_snapshot(draft, partitions, staging)
        frozen.publish(staging, layout.snapshot_dir(archive, snapshot_id))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    frozen.write_text_atomic(layout.latest_file(archive), snapshot_id + "\n")
    return snapshot_id


def draft_partitions(draft: Path) -> list[tuple[str, str]]:
    found = {
        layout.parse_partition(p.relative_to(draft))
        for p in Path(draft).glob("source=*/month=*/*.parquet")
    }
    return sorted(found)


def _write_snapshot(draft: Path, partitions: list[tuple[str, str]], staging: Path) -> str:
    counts: dict[str, int] = {}
    seen: dict[str, str] = {}
    for source, month in partitions:
        rows = _merged_rows(draft, source, month, seen)
        docs.write_parquet(
            docs.to_table(rows), layout.partition_dir(staging, source, month) / layout.PART_NAME
        )
        counts[f"source={source}/month={month}"] = len(rows)
    snapshot_id = snapshot_id_of(frozen.file_hashes(staging))
    frozen.write_manifest(
        staging,
        {
            "format": FORMAT,
            "snapshot": snapshot_id,
            "rows": counts,
            "documents": sum(counts.values()),
        },
    )
    _make_read_only(staging)
    return snapshot_id


# measured when fetched, not part of what a document said: a re-fetch may differ in these alone
FETCH_FIELDS = frozenset({"retrieved_at", "score", "num_comments"})


def _merged_rows(draft: Path, source: str, month: str, seen: dict[str, str]) -> list[dict]:
    """All rows of one draft partition, one per id; an id in two partitions is an error, and so
    are two versions of one document (see `_one_version`)."""
    folder = layout.partition_dir(draft, source, month)
    here = f"source={source}/month={month}"
    found = [(f.name, r) for f in sorted(folder.glob("*.parquet")) for r in _draft_rows(f)]
    _one_version(found, f"{here} of {draft}")
    rows = docs.dedupe([r for _, r in found])
    for row in rows:
        other = seen.setdefault(row["id"], here)
        if other != here:
            raise ArchiveIntegrityError(
                f"document id {row['id']!r} is in both {other} and {here} of {draft}"
            )
    return rows


def _one_version(found: list[tuple[str, dict]], where: str) -> None:
    """Rows of one id must say the same (every field but FETCH_FIELDS): a document fetched twice
    whose text, title, edit or deletion state changed is refused, naming both fetches. Keeping
    either would be wrong at some t0 (the later text may postdate t0; the snapshot keeps one
    text per id), and merging silently would hide it."""
    first: dict[str, tuple[str, dict]] = {}
    for name, row in found:
        kept = first.setdefault(row["id"], (name, row))
        if _content(kept[1]) != _content(row):
            raise ArchiveIntegrityError(
                f"document id {row['id']!r} has two versions in {where}: fetched "
                f"{_fetched(kept[1])} ({kept[0]}) and {_fetched(row)} ({name}), with different "
                f"{', '.join(_differing(kept[1], row))}; nothing was frozen: remove one "
                "version's input from the draft and ingest it without that document"
            )


def _content(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in FETCH_FIELDS}


def _differing(a: dict, b: dict) -> list[str]:
    return sorted(k for k in _content(a) if a[k] != b.get(k))


def _fetched(row: dict) -> str:
    return row["retrieved_at"].isoformat() if row.get("retrieved_at") else "(no fetch instant)"


def _draft_rows(path: Path) -> list[dict]:
    """The rows of one draft chunk; an unreadable chunk is an error naming it."""
    import pyarrow as pa

    try:
        return docs.read_parquet(path).to_pylist()
    except (pa.ArrowException, ValueError) as exc:
        raise ArchiveIntegrityError(
            f"{path}: unreadable draft chunk ({str(exc).splitlines()[0]}); "
            "delete it and ingest its input again"
        ) from None


def snapshot_id_of(hashes: dict[str, str]) -> str:
    text = "".join(f"{name}\t{digest}\n" for name, digest in sorted(hashes.items()))
    return "a-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def _make_read_only(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            os.chmod(path, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)


def latest(archive: Path) -> str:
    try:
        return layout.latest_file(archive).read_text(encoding="utf-8").strip()
    except FileNotFoundError as exc:
        raise ArchiveIntegrityError(
            f"{archive} has no frozen snapshot (no LATEST); run `hindcast archive freeze`"
        ) from exc


def verify_snapshot(archive: Path, snapshot_id: str | None = None) -> list[str]:
    """Every difference between a snapshot (LATEST by default) and its manifest; [] when intact."""
    path = _existing(archive, snapshot_id or latest(archive))
    problems = frozen.verify(path)
    manifest = frozen.read_manifest(path)
    if not problems and snapshot_id_of(manifest.get("files", {})) != path.name:
        problems.append(f"manifest: its files do not hash to the snapshot id {path.name}")
    return problems


def open_snapshot(archive: Path, snapshot_id: str | None = None) -> Snapshot:
    """Open a snapshot (LATEST by default) after verifying every file against the manifest."""
    snapshot_id = snapshot_id or latest(archive)
    path = _existing(archive, snapshot_id)
    problems = verify_snapshot(archive, snapshot_id)
    if problems:
        raise ArchiveIntegrityError(
            f"snapshot {snapshot_id} in {archive} does not match its manifest: "
            + "; ".join(problems)
        )
    names = frozen.read_manifest(path)["files"]
    partitions = tuple(sorted({layout.parse_partition(Path(n)) for n in names}))
    return Snapshot(snapshot_id, path, Path(archive), partitions)


def _existing(archive: Path, snapshot_id: str) -> Path:
    path = layout.snapshot_dir(archive, snapshot_id)
    if not path.is_dir():
        raise ArchiveIntegrityError(f"{archive} has no snapshot {snapshot_id!r}")
    return path
