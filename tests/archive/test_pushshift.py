"""The Reddit dump reader on real-format .zst fixtures: fields, edits,
deletions, rejects, memory."""

from __future__ import annotations

import tracemalloc

import pytest
import zstandard

from hindcast.archive.ingest import ingest
from hindcast.archive.lines import ArchiveInputError, Reject, numbered_lines
from hindcast.archive.readers import read_documents
from hindcast.timeutil import from_unix

from .conftest import fixture_module

fx = fixture_module()


def _docs(path):
    items = list(read_documents(path, "pushshift"))
    return {d.id: d for d in items if not isinstance(d, Reject)}, [
        r for r in items if isinstance(r, Reject)
    ]


def test_fixture_needs_the_long_window(dump_files):
    with pytest.raises(zstandard.ZstdError):
        zstandard.ZstdDecompressor().stream_reader(dump_files[0].open("rb")).read()
    assert sum(1 for _ in numbered_lines(dump_files[0])) == 9


def test_submissions_fields_edits_deletions(dump_files):
    docs, rejects = _docs(dump_files[0])
    assert sorted(docs) == ["t3_s1", "t3_s2", "t3_s3", "t3_s4", "t3_s5", "t3_s6", "t3_s8"]
    s1 = docs["t3_s1"]
    assert (s1.source, s1.kind, s1.thread_id, s1.text) == (
        "r/politics",
        "reddit_submission",
        "t3_s1",
        "Vote was 77-19.",
    )
    assert s1.created_at == from_unix(fx.JAN + 4 * fx.DAY) and s1.edit_state == "never"
    assert s1.retrieved_at == from_unix(
        fx.JAN + 4 * fx.DAY + 36 * 3600
    )  # counters are from the 2nd fetch
    assert (s1.score, s1.num_comments) == (120, 14)
    assert s1.url == "https://www.reddit.com/r/politics/comments/s1/x/"
    assert (docs["t3_s2"].edit_state, docs["t3_s2"].edited_at) == (
        "at",
        from_unix(fx.JAN + 20 * fx.DAY),
    )
    assert docs["t3_s3"].edit_state == "unknown" and docs["t3_s5"].edit_state == "unknown"
    assert docs["t3_s4"].deleted and docs["t3_s4"].text == "" and docs["t3_s4"].title
    old = docs["t3_s8"]
    assert (old.edit_state, old.retrieved_at, old.source) == (
        "at",
        from_unix(fx.JAN + 15 * fx.DAY),
        "r/economics",
    )
    assert [(r.line, r.reason.split(":")[0]) for r in rejects] == [
        (5, "invalid JSON"),
        (8, "created_utc is None, expected unix seconds"),
    ]


def test_comments_link_to_submissions(dump_files):
    docs, rejects = _docs(dump_files[1])
    assert sorted(docs) == ["t1_c1", "t1_c2", "t1_c3", "t1_c4", "t1_c5"]
    c2 = docs["t1_c2"]
    assert (c2.thread_id, c2.parent_id, c2.kind, c2.title) == (
        "t3_s1",
        "t1_c1",
        "reddit_comment",
        "",
    )
    assert c2.edit_state == "at" and docs["t1_c4"].edit_state == "unknown"
    assert docs["t1_c3"].deleted and docs["t1_c3"].text == ""
    assert [r.line for r in rejects] == [4, 7]
    assert "parent_id 'bogus_parent'" in rejects[1].reason


def test_ingest_counts_and_rejects_file(tmp_path, dump_files):
    summaries = ingest(dump_files, "reddit", "pushshift", tmp_path)
    assert [(s.written, s.rejected) for s in summaries] == [(7, 2), (5, 2), (2, 1)]
    assert summaries[2].months == {"2024-02": 2}
    lines = summaries[2].rejects_path.read_text().splitlines()
    assert lines == [f"{dump_files[2]}:3: created_utc is 'soon', expected unix seconds"]


def test_corrupt_stream_is_an_input_error(tmp_path, dump_files):
    bad = tmp_path / "RS_2024-03.zst"
    bad.write_bytes(dump_files[0].read_bytes()[:-40] + b"\x00" * 40)
    with pytest.raises(ArchiveInputError, match="RS_2024-03.zst"):
        list(read_documents(bad, "pushshift"))


def _rows(n: int):
    for i in range(n):
        yield fx.comment(f"m{i}", fx.JAN + i, "s1", "t3_s1", f"comment number {i} " + "words " * 20)


def _peak(tmp_path, n: int) -> int:
    path = fx.write_zst(tmp_path / f"RC_2024-01-{n}.zst", _rows(n), window_log=31, level=1)
    tracemalloc.start()
    summary = ingest([path], "reddit", "pushshift", tmp_path / f"arc{n}", chunk_rows=500)[0]
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert summary.written == n
    return peak


def test_ingest_memory_does_not_grow_with_input_size(tmp_path):
    small, large = _peak(tmp_path, 2_000), _peak(tmp_path, 16_000)
    assert large < 1.5 * small, (small, large)
