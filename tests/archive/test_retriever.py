"""TimeBoundRetriever on the Reddit fixture: exact-t0 exclusion, edits, threads, counters,
months after month(t0) never opened, every returned row re-checked."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hindcast.archive import layout, shards
from hindcast.archive.index import open_index
from hindcast.archive.retriever import RetrievalError, TimeBoundRetriever
from hindcast.errors import LeakageError
from hindcast.timeutil import from_unix

from .conftest import fixture_module

fx = fixture_module()
JAN, FEB, DAY = fx.JAN, fx.FEB, fx.DAY


def at(seconds: int):
    return from_unix(seconds)


def ids(documents) -> list[str]:
    return [d.id for d in documents]


def test_thread_stops_at_t0_and_drops_text_edited_at_or_after_t0(reddit_archive):
    _, snap = reddit_archive
    strict = TimeBoundRetriever(snap, at(JAN + 20 * DAY))
    assert ids(strict.thread("t3_s1")) == ["t3_s1", "t1_c1", "t1_c3"]
    loose = TimeBoundRetriever(snap, at(JAN + 20 * DAY), edit_policy="ignore")
    assert ids(loose.thread("t3_s1")) == ["t3_s1", "t1_c1", "t1_c2", "t1_c3"]


def test_thread_includes_later_month_comments_only_before_t0(reddit_archive):
    _, snap = reddit_archive
    assert ids(TimeBoundRetriever(snap, at(FEB + 2 * DAY)).thread("t3_s1"))[-1] == "t1_c5"
    later = TimeBoundRetriever(snap, at(FEB + 2 * DAY + 1))
    assert ids(later.thread("t3_s1")) == ["t3_s1", "t1_c1", "t1_c2", "t1_c3", "t1_c5", "t1_c7"]
    assert TimeBoundRetriever(snap, at(JAN + 4 * DAY)).thread("t3_s1") == []


def test_read_applies_the_boundary_and_the_edit_policy(reddit_archive):
    _, snap = reddit_archive
    assert (
        TimeBoundRetriever(snap, at(JAN + 4 * DAY)).read("t3_s1") is None
    )  # created exactly at t0
    assert TimeBoundRetriever(snap, at(JAN + 4 * DAY + 1)).read("t3_s1").title.startswith("Senate")
    assert (
        TimeBoundRetriever(snap, at(JAN + 20 * DAY)).read("t3_s2") is None
    )  # edited exactly at t0
    assert TimeBoundRetriever(snap, at(JAN + 20 * DAY + 1)).read("t3_s2") is not None
    assert TimeBoundRetriever(snap, at(FEB + 20 * DAY)).read("t3_s3") is None  # unknown edit time
    assert (
        TimeBoundRetriever(snap, at(FEB + 20 * DAY), edit_policy="ignore").read("t3_s3") is not None
    )
    assert TimeBoundRetriever(snap, at(FEB + 20 * DAY)).read("t3_nope' OR '1'='1") is None


def test_counters_measured_after_t0_are_blanked(reddit_archive):
    _, snap = reddit_archive
    early = TimeBoundRetriever(snap, at(JAN + 5 * DAY)).read("t3_s1")
    late = TimeBoundRetriever(snap, at(JAN + 6 * DAY)).read("t3_s1")
    assert (early.score, early.num_comments) == (None, None)
    assert (late.score, late.num_comments) == (120, 14)


@pytest.mark.parametrize("mode", ["vector", "text", "hybrid"])
def test_search_is_bounded_and_full(reddit_archive, mode):
    _, snap = reddit_archive
    retriever = TimeBoundRetriever(snap, at(JAN + 30 * DAY))
    eligible = {"t3_s1", "t1_c1", "t1_c2", "t3_s2", "t1_c3", "t3_s4", "t3_s6", "t3_s8", "t1_c5"}
    query = "bill" if mode == "text" else "the bill passed"
    hits = retriever.search(query, k=20, mode=mode)
    assert {h.doc.id for h in hits} <= eligible
    if mode != "text":
        assert {h.doc.id for h in hits} == eligible
        assert len(retriever.search(query, k=9, mode=mode)) == 9
    else:
        assert {h.doc.id for h in hits} == {"t3_s1", "t1_c5"}
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_bad_mode_and_k_are_refused(reddit_archive):
    retriever = TimeBoundRetriever(reddit_archive[1], at(FEB))
    with pytest.raises(RetrievalError, match="mode"):
        retriever.search("x", mode="fuzzy")
    for k in (0, -3, 2.5, True, 10**9, "5", None):
        with pytest.raises(RetrievalError, match="k must be an integer from 1 to 1000"):
            retriever.search("x", k=k)
    with pytest.raises(RetrievalError, match="query must be a string"):
        retriever.search(None, k=3, mode="text")
    with pytest.raises(RetrievalError, match="document id must be a string"):
        retriever.read(5)


def test_approx_search_needs_an_approximate_index_and_valid_settings(tmp_path, reddit_archive):
    from hindcast.archive import ann, ann_index
    from hindcast.archive.snapshot import open_snapshot

    archive, snap = reddit_archive
    copy = open_snapshot(_copy_archive(archive, tmp_path / "copy"), snap.id)
    reader = open_index(copy)
    if "ann" in reader.info:  # another test may have built one on the shared fixture
        del reader.info["ann"]
    with pytest.raises(
        RetrievalError, match=r"has no approximate index; run `hindcast archive embed --approx`$"
    ) as err:
        TimeBoundRetriever(copy, at(FEB + 20 * DAY), index=reader, vector_search="approx")
    assert "\n" not in str(err.value)
    for bad in (
        {"vector_search": "fuzzy"},
        {"vector_search": None},
        {"nprobe": 0},
        {"nprobe": 2.5},
        {"nprobe": True},
    ):
        with pytest.raises(RetrievalError, match="vector search|nprobe"):
            TimeBoundRetriever(copy, at(FEB + 20 * DAY), index=reader, **bad)
    ann_index.build(reader.root)
    built = open_index(copy)
    approx = TimeBoundRetriever(
        copy, at(FEB + 20 * DAY), index=built, vector_search="approx", nprobe=1
    )
    exact = TimeBoundRetriever(copy, at(FEB + 20 * DAY), index=built)
    assert (
        approx.nprobe == 1
        and TimeBoundRetriever(copy, at(FEB), index=built, vector_search="approx").nprobe
        == ann.NPROBE
    )
    eligible = len(exact.search("the bill passed", k=50, mode="vector"))
    assert len(approx.search("the bill passed", k=50, mode="vector")) == eligible  # never short


def _copy_archive(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def test_months_after_t0_are_never_opened(tmp_path, reddit_archive):
    archive, snap = reddit_archive
    t0 = at(JAN + 25 * DAY)
    full = TimeBoundRetriever(snap, t0)
    expected = {
        m: ids(h.doc for h in full.search("bill shutdown", k=5, mode=m))
        for m in ("vector", "text", "hybrid")
    }
    copy = _copy_archive(archive, tmp_path / "copy")
    from hindcast.archive.snapshot import open_snapshot

    csnap = open_snapshot(copy, snap.id)
    root = open_index(csnap).root
    shutil.rmtree(root / "lance" / f"{layout.month_table('2024-02')}.lance")  # physically gone
    shutil.rmtree(layout.vector_chunk_dir(root, "2024-02"))
    part = layout.partition_dir(csnap.path, "reddit", "2024-02") / layout.PART_NAME
    part.chmod(0o644)
    part.unlink()
    cut = TimeBoundRetriever(csnap, t0, index=open_index(csnap))
    for mode, want in expected.items():
        assert ids(h.doc for h in cut.search("bill shutdown", k=5, mode=mode)) == want
    assert ids(cut.thread("t3_s1")) == ids(full.thread("t3_s1"))
    assert cut.read("t1_c7") is None
    assert cut.index.opened == {"2024-01"}


@pytest.mark.parametrize("mode", ["vector", "text", "hybrid"])
def test_a_row_slipping_past_the_time_cut_raises_leakage(reddit_archive, monkeypatch, mode):
    retriever = TimeBoundRetriever(reddit_archive[1], at(JAN + 5 * DAY), edit_policy="ignore")
    monkeypatch.setattr(
        shards.Months, "_cut", lambda self, data: data.created_us.size
    )  # a broken cut (where every shard cuts its months): every row
    with pytest.raises(LeakageError, match="not before t0"):
        retriever.search("bill", k=20, mode=mode)


def test_a_row_slipping_past_the_filter_raises_leakage(reddit_archive, monkeypatch):
    retriever = TimeBoundRetriever(reddit_archive[1], at(JAN + 5 * DAY))
    monkeypatch.setattr(retriever, "_filter", lambda: "created_us > 0")
    with pytest.raises(LeakageError):
        retriever.thread("t3_s1")


def test_cli_search_prints_json_hits(reddit_archive):
    archive, snap = reddit_archive
    hindcast = str(Path(sys.executable).parent / "hindcast")
    out = subprocess.run(
        [
            hindcast,
            "archive",
            "search",
            "--archive",
            str(archive),
            "--snapshot",
            snap.id,
            "--t0",
            "2024-01-21T00:00:01Z",
            "--query",
            "bill",
            "--mode",
            "text",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    by_id = {r["id"]: r for r in rows}
    assert sorted(by_id) == ["t1_c5", "t3_s1"] and rows[0]["score"] >= rows[1]["score"]
    assert (
        by_id["t3_s1"]["created_at"] == "2024-01-05T00:00:00Z"
        and by_id["t3_s1"]["source"] == "r/politics"
    )
    assert by_id["t3_s1"]["title"] == "Senate passes stopgap funding bill"
    bad = subprocess.run(
        [
            hindcast,
            "archive",
            "search",
            "--archive",
            str(archive),
            "--t0",
            "2024-01-21",
            "--query",
            "bill",
            "--mode",
            "nope",
        ],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1 and "search mode 'nope'" in bad.stderr


def test_a_document_deleted_after_t0_is_served_as_it_stood_at_t0(reddit_archive):
    """c3's body was removed by the time it was retrieved (6 d + 36 h): at a t0 before that
    retrieval the deletion is post-t0 information, so the comment is not marked deleted."""
    _, snap = reddit_archive
    early = TimeBoundRetriever(snap, at(JAN + 6 * DAY + 3600)).read("t1_c3")
    assert (early.deleted, early.retrieved_at, early.score) == (False, None, None)
    assert [
        d.deleted
        for d in TimeBoundRetriever(snap, at(JAN + 6 * DAY + 3600)).thread("t3_s1")
        if d.id == "t1_c3"
    ] == [False]
    late = TimeBoundRetriever(snap, at(JAN + 8 * DAY)).read("t1_c3")
    assert late.deleted is True and late.retrieved_at == at(JAN + 6 * DAY + 36 * 3600)


def test_an_edit_instant_after_t0_is_not_served_under_the_ignore_policy(reddit_archive):
    _, snap = reddit_archive
    early = TimeBoundRetriever(snap, at(JAN + 20 * DAY), edit_policy="ignore").read("t1_c2")
    assert (early.edit_state, early.edited_at) == ("unknown", None)
    late = TimeBoundRetriever(snap, at(JAN + 26 * DAY), edit_policy="ignore").read("t1_c2")
    assert (late.edit_state, late.edited_at) == ("at", at(JAN + 25 * DAY))
