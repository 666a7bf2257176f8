"""Headlines ingest → frozen snapshot: determinism, idempotence, verification, refusal to write."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hindcast.archive import layout
from hindcast.archive.ingest import ingest
from hindcast.archive.snapshot import build_snapshot, freeze, open_snapshot, verify_snapshot
from hindcast.errors import ArchiveIntegrityError
from hindcast.timeutil import from_unix, month_key

from .conftest import write_jsonl

HINDCAST = str(Path(sys.executable).parent / "hindcast")


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([HINDCAST, "archive", *args], capture_output=True, text=True)


def _flip_byte(path: Path, offset: int = 100) -> None:
    os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def test_all_shared_headlines_partitioned_by_creation_month(headlines_archive, headline_files):
    archive, snapshot_id = headlines_archive
    expected = {}
    for path in headline_files:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            expected[row["id"]] = month_key(from_unix(row["created_utc"]))
    snap = open_snapshot(archive, snapshot_id)
    seen = {}
    for source, month in snap.partitions:
        assert source == "headlines"
        for row in pq.read_table(snap.partition_files(month)[0]).to_pylist():
            assert month_key(row["created_at"]) == month
            seen[row["id"]] = month
    assert seen == expected
    assert len(seen) == 46_809


def test_build_is_byte_for_byte_deterministic_and_idempotent(
    tmp_path, headline_files, headlines_archive
):
    first_archive, first_id = headlines_archive
    again = build_snapshot(
        list(reversed(headline_files[:3])) + headline_files[3:], "headlines", "headlines", tmp_path
    )
    assert again == first_id
    first = _tree(layout.snapshot_dir(first_archive, first_id))
    assert _tree(layout.snapshot_dir(tmp_path, again)) == first
    assert build_snapshot(headline_files, "headlines", "headlines", tmp_path) == first_id
    assert [p.name for p in layout.snapshots_dir(tmp_path).iterdir()] == [first_id]


def test_different_content_gives_a_different_id(tmp_path, headline_files, headlines_archive):
    assert (
        build_snapshot(headline_files[:2], "headlines", "headlines", tmp_path)
        != headlines_archive[1]
    )


def test_cli_verify_passes_then_detects_one_changed_byte(tmp_path, headline_files):
    snapshot_id = build_snapshot(headline_files[:2], "headlines", "headlines", tmp_path)
    ok = _cli("verify", "--archive", str(tmp_path), "--snapshot", snapshot_id)
    assert ok.returncode == 0, ok.stderr
    part = next(layout.snapshot_dir(tmp_path, snapshot_id).rglob("part-0.parquet"))
    _flip_byte(part)
    bad = _cli("verify", "--archive", str(tmp_path))
    assert bad.returncode == 1
    assert "changed: source=headlines/month=" in bad.stderr and bad.stderr.startswith(
        "hindcast: error:"
    )


def test_verify_reports_missing_and_extra_files(tmp_path, headline_files):
    snapshot_id = build_snapshot(headline_files[:2], "headlines", "headlines", tmp_path)
    root = layout.snapshot_dir(tmp_path, snapshot_id)
    parts = sorted(root.rglob("part-0.parquet"))
    parts[0].unlink()
    (root / "source=headlines" / "stray.parquet").write_bytes(b"x")
    problems = verify_snapshot(tmp_path, snapshot_id)
    assert any(p.startswith("missing: ") for p in problems)
    assert "extra: source=headlines/stray.parquet" in problems
    with pytest.raises(ArchiveIntegrityError, match="does not match its manifest"):
        open_snapshot(tmp_path, snapshot_id)


def test_writing_into_a_frozen_snapshot_is_refused(tmp_path, headline_files):
    snapshot_id = build_snapshot(headline_files[:1], "headlines", "headlines", tmp_path)
    root = layout.snapshot_dir(tmp_path, snapshot_id)
    part = next(root.rglob("part-0.parquet"))
    assert not os.stat(part).st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    refused = _cli(
        "ingest",
        str(headline_files[1]),
        "--source",
        "x",
        "--format",
        "headlines",
        "--archive",
        str(tmp_path),
        "--snapshot",
        snapshot_id,
    )
    assert refused.returncode == 1 and "frozen" in refused.stderr
    assert verify_snapshot(tmp_path, snapshot_id) == []


def test_malformed_headlines_go_to_rejects_with_file_line_reason(tmp_path):
    good = {
        "id": "h1",
        "created_utc": 1759285380,
        "title": "Shutdown looms",
        "source": "AP News",
        "kind": "news_headline",
        "archive_file": "news/2025/10/01/04-23.md",
    }
    path = write_jsonl(
        tmp_path / "news_x.jsonl",
        [
            good,
            "{not json",
            {**good, "id": "h2", "created_utc": "yesterday"},
            {**good, "id": "h3", "title": None},
            [1, 2],
            {**good, "id": "h4", "created_utc": 1761955200},
        ],
    )
    summary = ingest([path], "headlines", "headlines", tmp_path / "arc")[0]
    assert (summary.written, summary.rejected, summary.read) == (2, 4, 6)
    assert summary.months == {"2025-10": 1, "2025-11": 1}
    lines = summary.rejects_path.read_text().splitlines()
    assert [line.split(":")[1] for line in lines] == ["2", "3", "4", "5"]
    assert lines[0].startswith(f"{path}:2: invalid JSON")
    assert "created_utc is 'yesterday'" in lines[1] and "missing field 'title'" in lines[2]


def test_reingest_into_the_draft_is_idempotent_and_freezes_to_the_same_id(tmp_path, headline_files):
    archive = tmp_path / "arc"
    ingest(headline_files[:2], "headlines", "headlines", archive, chunk_rows=1000)
    before = _tree(layout.draft_dir(archive))
    ingest(headline_files[:2], "headlines", "headlines", archive, chunk_rows=1000)
    assert _tree(layout.draft_dir(archive)) == before
    assert freeze(archive) == build_snapshot(
        headline_files[:2], "headlines", "headlines", tmp_path / "other"
    )


def test_duplicate_rows_across_inputs_are_merged_once(tmp_path):
    row = {"id": "h1", "created_utc": 1759285380, "title": "Same", "source": "AP News"}
    a = write_jsonl(tmp_path / "a.jsonl", [row])
    b = write_jsonl(tmp_path / "b.jsonl", [row, {**row, "id": "h2"}])
    snapshot_id = build_snapshot([a, b], "headlines", "headlines", tmp_path / "arc")
    part = next(layout.snapshot_dir(tmp_path / "arc", snapshot_id).rglob("part-0.parquet"))
    assert sorted(pq.read_table(part).column("id").to_pylist()) == ["h1", "h2"]


NEWS = {
    "id": "n1",
    "created_at": "2025-10-01T00:00:00Z",
    "title": "Senate vote set",
    "text": "The vote is on Friday.",
    "retrieved_at": "2025-10-02T00:00:00Z",
}


def test_a_refetched_document_whose_text_changed_is_refused_at_freeze_naming_it(tmp_path):
    """Issue 36, item 7: the re-fetch (after a t0 of, say, 2025-10-10) changed the text without
    an edited_at; freezing either version alone would be wrong at some t0, merging silently
    served the later text at a t0 before it. Refused, both fetches named, nothing written."""
    late = {**NEWS, "text": "The vote passed 52-48.", "retrieved_at": "2025-10-20T00:00:00Z"}
    a = write_jsonl(tmp_path / "a.jsonl", [NEWS])
    b = write_jsonl(tmp_path / "b.jsonl", [late])
    archive = tmp_path / "arc"
    assert [s.written for s in ingest([a, b], "news", "news", archive)] == [1, 1]
    before = _tree(archive)
    with pytest.raises(ArchiveIntegrityError) as caught:
        freeze(archive)
    message = str(caught.value)
    assert "document id 'n1' has two versions in source=news/month=2025-10" in message
    assert "2025-10-02T00:00:00+00:00" in message and "2025-10-20T00:00:00+00:00" in message
    assert "different text" in message and "\n" not in message
    assert _tree(archive) == before  # no snapshot, no LATEST


def test_a_refetch_that_changed_only_its_counters_is_one_document(tmp_path):
    later = {**NEWS, "retrieved_at": "2025-10-20T00:00:00Z"}
    a = write_jsonl(tmp_path / "a.jsonl", [NEWS])
    b = write_jsonl(tmp_path / "b.jsonl", [later])
    snapshot_id = build_snapshot([a, b], "news", "news", tmp_path / "arc")
    part = next(layout.snapshot_dir(tmp_path / "arc", snapshot_id).rglob("part-0.parquet"))
    rows = pq.read_table(part).to_pylist()
    assert [(r["id"], r["text"]) for r in rows] == [("n1", NEWS["text"])]


def test_freeze_of_an_empty_draft_is_an_error(tmp_path):
    with pytest.raises(ArchiveIntegrityError, match="nothing to freeze"):
        freeze(tmp_path)


def test_a_failed_reingest_leaves_the_draft_as_it_was(tmp_path, dump_files):
    from hindcast.archive.lines import ArchiveInputError

    archive = tmp_path / "arc"
    ingest(dump_files[:1], "reddit", "pushshift", archive)
    before = _tree(layout.draft_dir(archive))
    broken = tmp_path / dump_files[0].name
    broken.write_bytes(dump_files[0].read_bytes()[:-40] + b"\x00" * 40)
    with pytest.raises(ArchiveInputError, match="corrupt zstandard"):
        ingest([broken], "reddit", "pushshift", archive)
    assert _tree(layout.draft_dir(archive)) == before
