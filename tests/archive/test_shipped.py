"""Vectors shipped with an archive (`hindcast.archive.shipped`): used to build the index, embedding
nothing, only when the texts, the embedder and the file are what the manifest says; a snapshot
that ships vectors is searched with their embedder on every CPU. The shipped sample's own vectors
build its index without loading the model."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import datetime

import numpy as np
import pytest

from hindcast.archive import build, embed, layout, shipped
from hindcast.archive.embed import HashEmbedder, get_embedder
from hindcast.archive.index import open_index
from hindcast.archive.snapshot import build_snapshot, open_snapshot
from tests.helpers import SAMPLE_ARCHIVE

TITLES = [
    "Fed cuts interest rates again",
    "Central bank holds rates steady",
    "Volcano erupts in Iceland",
    "Election polls tighten in Ohio",
    "Interest rate futures rally",
]


class Fingerprinted:
    """A test embedder with a model fingerprint (hashed words, 32 dims) that counts its texts."""

    dims, dtype = 32, "float32"

    def __init__(self, model: str = "weights-1"):
        self.name, self.model, self.embedded = "shipped-test", model, 0

    def fingerprint(self) -> str:
        return self.model

    def embed(self, texts):
        self.embedded += len(texts)
        return HashEmbedder(self.dims).embed(texts)


def snapshot_of(tmp_path, titles, months=("2025-03", "2025-04")):
    rows = [
        {
            "id": f"{m}-{i}",
            "created_utc": int(datetime.fromisoformat(f"{m}-0{1 + i}T00:00:00+00:00").timestamp()),
            "title": t,
            "source": "test",
            "kind": "headline",
        }
        for m in months
        for i, t in enumerate(titles)
    ]
    tmp_path.mkdir(parents=True, exist_ok=True)
    inbox = tmp_path / "news.jsonl"
    inbox.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    archive = tmp_path / "archive"
    return open_snapshot(archive, build_snapshot([inbox], "headlines", "headlines", archive))


def own_vectors(snapshot, emb):
    """What the embedder itself gives for the snapshot's texts, month by month in index order."""
    from hindcast.archive.index import month_rows, month_texts

    texts = [t for m in snapshot.months for t in month_texts(month_rows(snapshot, m))]
    return HashEmbedder(emb.dims).embed(texts)


def index_vectors(snapshot, name):
    root = layout.index_dir(snapshot.archive, snapshot.id, name)
    return np.concatenate(
        [np.load(layout.vector_chunk_dir(root, m) / "vectors.npy") for m in snapshot.months]
    )


def ship(snapshot, emb):
    """Ship vectors that are NOT the embedder's own (their sign flipped): seen in the index only
    if the shipped ones were used."""
    vectors = -own_vectors(snapshot, emb)
    return shipped.write(snapshot, emb, vectors, {"by": "test"}), vectors.astype(np.float16)


def test_matching_shipped_vectors_build_the_index_and_nothing_is_embedded(tmp_path):
    snapshot, emb = snapshot_of(tmp_path, TITLES), Fingerprinted()
    where, stored = ship(snapshot, emb)
    info = build.build(snapshot, emb, chunk_rows=3)
    assert emb.embedded == 0
    np.testing.assert_array_equal(index_vectors(snapshot, emb.name), stored.astype(np.float32))
    digest = hashlib.sha256((where / "vectors.npy").read_bytes()).hexdigest()
    assert info["shipped_vectors"] == {"sha256": digest, "stored": "float16"}
    assert open_index(snapshot).info["shipped_vectors"]["sha256"] == digest


@pytest.mark.parametrize("change", ["model", "vectors file", "texts", "format"])
def test_shipped_vectors_that_do_not_match_are_not_used(tmp_path, change):
    snapshot, emb = snapshot_of(tmp_path, TITLES), Fingerprinted()
    where, _ = ship(snapshot, emb)
    if change == "model":
        emb = Fingerprinted("weights-2")
    elif change == "vectors file":
        data = bytearray((where / "vectors.npy").read_bytes())
        data[-1] ^= 1
        (where / "vectors.npy").write_bytes(bytes(data))
    elif change == "texts":  # another snapshot, given the first one's vectors under its id
        snapshot = snapshot_of(tmp_path / "other", [*TITLES[:-1], "Interest rate futures fall"])
        shutil.copytree(where, shipped.folder(snapshot) / emb.name)
    else:
        manifest = json.loads((where / "manifest.json").read_text(encoding="utf-8"))
        (where / "manifest.json").write_text(json.dumps({**manifest, "format": "other/9"}))
    info = build.build(snapshot, emb, chunk_rows=3)
    assert emb.embedded == 2 * len(TITLES) and "shipped_vectors" not in info
    np.testing.assert_array_equal(index_vectors(snapshot, emb.name), own_vectors(snapshot, emb))


def test_an_embedder_without_a_fingerprint_ships_nothing(tmp_path):
    snapshot = snapshot_of(tmp_path, TITLES)
    with pytest.raises(ValueError, match="fingerprint"):
        shipped.write(snapshot, HashEmbedder(32), own_vectors(snapshot, HashEmbedder(32)), {})


@pytest.mark.cpu_default
def test_a_snapshot_that_ships_vectors_is_searched_with_their_embedder_on_every_cpu(tmp_path):
    snapshot, emb = snapshot_of(tmp_path, TITLES), Fingerprinted()
    assert embed.default_embedder(snapshot) == get_embedder("minilm").name  # none shipped
    ship(snapshot, emb)
    build.build(snapshot, emb)
    build.build(snapshot, "hash-32")
    assert embed.default_embedder(snapshot) == emb.name
    assert open_index(snapshot).info["embedder"] == emb.name  # two indexes, none named


@pytest.mark.cpu_default
def test_the_sample_index_is_built_from_its_shipped_vectors_without_the_model(
    tmp_path, monkeypatch
):
    """The shipped sample: its MiniLM bf16 vectors build its default index on any CPU (under
    .ci/run's AVX2 emulation too) without loading the model; the index holds exactly them."""

    def no_model():
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(embed, "MINILM", embed.SharedModel(no_model))
    archive = tmp_path / "sample"
    shutil.copytree(SAMPLE_ARCHIVE, archive, ignore=shutil.ignore_patterns("index"))
    snapshot = open_snapshot(archive)
    name = embed.default_embedder(snapshot)
    assert name == "all-MiniLM-L6-v2-bf16"
    info = build.build(snapshot, name)
    assert (info["embedder"], info["embedder_dtype"], info["documents"]) == (
        name,
        "bfloat16",
        46809,
    )
    stored = np.load(archive / "vectors" / snapshot.id / name / "vectors.npy")
    assert stored.dtype == np.float16 and stored.shape == (46809, 384)
    np.testing.assert_array_equal(index_vectors(snapshot, name), stored.astype(np.float32))
