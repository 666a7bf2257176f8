"""Embedders and the index build: determinism, resumability, CLI, the shipped MiniLM model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hindcast.archive import layout
from hindcast.archive.embed import HashEmbedder, MiniLMEmbedder, get_embedder
from hindcast.archive.index import build_index, open_index
from hindcast.archive.snapshot import build_snapshot, open_snapshot
from hindcast.errors import ArchiveIntegrityError


class Interrupted(RuntimeError):
    pass


class CountingEmbedder(HashEmbedder):
    """The hash embedder that counts calls and can fail on the n-th one (an interruption)."""

    def __init__(self, fail_on: int | None = None):
        super().__init__()
        self.calls, self.fail_on = 0, fail_on

    def embed(self, texts):
        self.calls += 1
        if self.calls == self.fail_on:
            raise Interrupted(f"stopped at call {self.calls}")
        return super().embed(texts)


def test_hash_embedder_is_deterministic_unit_and_lexical():
    emb = HashEmbedder()
    a, b = (
        emb.embed(["Fed cuts rates", "fed CUTS rates", "volcano erupts"]),
        emb.embed(["Fed cuts rates"]),
    )
    assert a.dtype == np.float32 and a.shape == (3, 384)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-6)
    assert a[0] @ a[1] > 0.99 and abs(a[0] @ a[2]) < 0.5
    assert not emb.embed([""]).any()
    assert get_embedder("hash").name == "hash-384" and get_embedder("hash-64").dims == 64


@pytest.fixture()
def small_snapshot(tmp_path, headline_files):
    return open_snapshot(
        tmp_path, build_snapshot(headline_files[:2], "headlines", "headlines", tmp_path)
    )


def _arrays(snap, name):
    root = open_index(snap, name).root
    return {m: np.load(layout.vector_chunk_dir(root, m) / "vectors.npy") for m in snap.months}


def test_build_resumes_after_an_interruption(tmp_path, small_snapshot):
    chunk = 500
    total_chunks = sum(-(-n // chunk) for n in [1195, 5800])
    with pytest.raises(Interrupted):
        build_index(small_snapshot, CountingEmbedder(fail_on=8), chunk_rows=chunk)
    with pytest.raises(ArchiveIntegrityError, match="incomplete"):
        open_index(small_snapshot)
    resumed = CountingEmbedder()
    info = build_index(small_snapshot, resumed, chunk_rows=chunk)
    assert resumed.calls == total_chunks - 7  # the 7 finished chunks were not embedded again
    assert info["documents"] == 1195 + 5800
    for month, vectors in _arrays(small_snapshot, "hash-384").items():
        np.testing.assert_array_equal(vectors, HashEmbedder().embed(_texts(small_snapshot, month)))
    calls = resumed.calls
    assert (
        build_index(small_snapshot, resumed)["documents"] == 6995 and resumed.calls == calls
    )  # nothing left to do


def _texts(snap, month):
    from hindcast.archive.embed import document_text
    from hindcast.archive.index import month_rows

    return [document_text(r["title"], r["text"]) for r in month_rows(snap, month)]


def test_cli_embed_then_search(tmp_path, small_snapshot):
    hindcast = str(Path(sys.executable).parent / "hindcast")
    done = subprocess.run(
        [hindcast, "archive", "embed", "--archive", str(tmp_path), "--embedder", "hash"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "6995 documents" in done.stdout
    out = subprocess.run(
        [
            hindcast,
            "archive",
            "search",
            "--archive",
            str(tmp_path),
            "--t0",
            "2025-08-02T00:00:00Z",
            "--query",
            "Trump tariffs",
            "--k",
            "3",
            "--mode",
            "vector",
        ],
        capture_output=True,
        text=True,
    )
    lines = out.stdout.splitlines()
    assert out.returncode == 0 and len(lines) == 3
    assert all(line.split("\t")[2] < "2025-08-02T00:00:00Z" for line in lines)


def test_minilm_from_the_shipped_package():
    emb = MiniLMEmbedder()
    vectors = emb.embed(
        ["The Fed cut interest rates", "Central bank lowers rates", "A cat sleeps on the sofa"]
    )
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3


def test_first_stage_codes_are_built_and_restored_when_missing(small_snapshot):
    """The build writes each month's int8 codes; an index from before them gets them on open."""
    from hindcast.archive import scan
    from hindcast.archive.retriever import TimeBoundRetriever
    from hindcast.timeutil import parse_utc

    build_index(small_snapshot, HashEmbedder())
    root, t0 = open_index(small_snapshot).root, parse_utc("2025-12-31T00:00:00Z")
    before = [
        (h.doc.id, h.score)
        for h in TimeBoundRetriever(small_snapshot, t0).search("ceasefire talks", 8, "vector")
    ]
    for month, vectors in _arrays(small_snapshot, "hash-384").items():
        folder = layout.vector_chunk_dir(root, month)
        codes, scales = scan.quantize(vectors)
        np.testing.assert_array_equal(np.load(folder / "codes.npy"), codes)
        np.testing.assert_array_equal(np.load(folder / "scales.npy"), scales)
        (folder / "codes.npy").unlink()
        (folder / "scales.npy").unlink()
    after = [
        (h.doc.id, h.score)
        for h in TimeBoundRetriever(small_snapshot, t0).search("ceasefire talks", 8, "vector")
    ]
    assert after == before and len(after) == 8
    assert all(
        (layout.vector_chunk_dir(root, m) / "codes.npy").exists() for m in small_snapshot.months
    )


def test_text_postings_are_built_and_restored_when_missing(small_snapshot):
    """The build writes each month's BM25 postings; an index from before them gets them on open."""
    import shutil

    from hindcast.archive.retriever import TimeBoundRetriever
    from hindcast.timeutil import parse_utc

    build_index(small_snapshot, HashEmbedder())
    root, t0 = open_index(small_snapshot).root, parse_utc("2025-08-20T00:00:00Z")
    before = [
        (h.doc.id, h.score)
        for h in TimeBoundRetriever(small_snapshot, t0).search("trump tariffs", 8, "text")
    ]
    for month in small_snapshot.months:
        shutil.rmtree(layout.vector_chunk_dir(root, month) / "text")
    after = [
        (h.doc.id, h.score)
        for h in TimeBoundRetriever(small_snapshot, t0).search("trump tariffs", 8, "text")
    ]
    assert after == before and len(after) == 8
    assert all(
        (layout.vector_chunk_dir(root, m) / "text" / "docs.npy").exists()
        for m in small_snapshot.months
    )
