"""The fixed codebook of the approximate index: IVF centroids that depend on no archive document.

Why (issue 24): an index trained on an archive's own documents depends on which documents are
in it. A document X edited after t0 is stored with its edited text only (Pushshift keeps the
last text), so an index trained on the archive cannot be the one of the same archive where X
was never edited — and its centroids, hence the lists probed for every other document, differ
(see `hindcast.archive.ann`). A partition trained on nothing of the archive has no such
dependence: every row's list is a function of its own vector alone.

The codebook: seeded, deterministic spherical k-means (`hindcast.archive.kmeans`, the same trainer)
over a
fixed reference corpus that ships with the package — `reference_texts.txt.gz`, the 46,809
news headlines of the shipped sample (`archive/sample`, see its NOTICE.md), one per line,
sorted by document id — embedded by the index's own embedding model. It is keyed by that
model's name (another model or precision is another name), the corpus hash, the number of
lists and the seed; trained once per index and cached next to it (`<index>/codebook/`),
written atomically; its id (a sha256 of the centroids and that key) is recorded by every
month's index and in index.json, so a search can tell which partition it reads.

The recall it records is measured on the reference corpus (seeded probe queries: reference
rows plus noise, against the exact search of the corpus), so it is also a function of nothing
in the archive: an estimate of the partition's quality, not the archive's measured recall
(`benchmarks/retrieval.py` measures that).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hindcast.archive import folders
from hindcast.archive.embed import for_index as embedder_for
from hindcast.archive.kmeans import kmeans

REFERENCE = Path(__file__).with_name("reference_texts.txt.gz")
LISTS = 1024
FOLDER = "codebook"
EMBED_BATCH = 4096
RECALLS: dict[tuple[str, int, int], dict] = {}  # (codebook id, nprobe, seed) → recall, per process


@dataclass(frozen=True)
class Codebook:
    """Centroids (lists × dims, unit float32) and where they came from; `id` names them."""

    centroids: np.ndarray
    meta: dict

    @property
    def id(self) -> str:
        return self.meta["id"]

    @property
    def lists(self) -> int:
        return int(self.centroids.shape[0])


def reference_texts() -> list[str]:
    """The shipped reference corpus, one text a line."""
    return gzip.decompress(REFERENCE.read_bytes()).decode("utf-8").splitlines()


def reference_hash() -> str:
    return hashlib.sha256(REFERENCE.read_bytes()).hexdigest()


def train(reference: np.ndarray, key: dict, *, lists: int = LISTS, seed: int = 0) -> Codebook:
    """The codebook of `lists` centroids over the reference vectors (seeded, deterministic)."""
    reference = np.ascontiguousarray(reference, dtype=np.float32)
    lists = min(lists, reference.shape[0])
    centroids = kmeans(reference, np.arange(reference.shape[0]), lists, seed)
    key = key | {"lists": int(lists), "seed": int(seed), "reference_rows": reference.shape[0]}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode() + centroids.tobytes())
    return Codebook(centroids, key | {"id": digest.hexdigest()[:16]})


def for_index(root: Path, embedder: str, *, lists: int | None = None, seed: int = 0) -> Codebook:
    """The codebook of the index at `root` (built with `embedder`): the cached one when its key
    matches, else trained now on the reference corpus embedded by that model, and cached."""
    key = {"embedder": embedder, "reference": reference_hash(), "lists": lists or LISTS}
    cached = load(Path(root) / FOLDER)
    if cached is not None and _matches(cached.meta, key, seed):
        return cached
    book = _trained(embedder, key["reference"], key["lists"], seed)
    save(Path(root) / FOLDER, book, embedded(embedder))
    return book


@functools.lru_cache(maxsize=4)
def _trained(embedder: str, reference: str, lists: int, seed: int) -> Codebook:
    """`train` on the embedded reference corpus (deterministic, so kept for the process)."""
    key = {"embedder": embedder, "reference": reference}
    book = train(embedded(embedder), key, lists=lists, seed=seed)
    return Codebook(book.centroids, book.meta | {"requested_lists": lists})


@functools.lru_cache(maxsize=1)
def embedded(embedder: str) -> np.ndarray:
    """The reference corpus embedded by `embedder` (kept for the process: the same every time)."""
    model, texts = embedder_for(embedder), reference_texts()
    vectors = np.concatenate(
        [
            np.asarray(model.embed(texts[i : i + EMBED_BATCH]), dtype=np.float32)
            for i in range(0, len(texts), EMBED_BATCH)
        ]
    )
    vectors.setflags(write=False)
    return vectors


def _matches(meta: dict, key: dict, seed: int) -> bool:
    return (
        meta.get("embedder") == key["embedder"]
        and meta.get("reference") == key["reference"]
        and meta.get("requested_lists") == key["lists"]
        and meta.get("seed") == seed
    )


def save(folder: Path, book: Codebook, reference: np.ndarray | None = None) -> None:
    """Write the codebook (and the reference vectors, for its recall) into `folder`, atomically."""
    folders.write_whole(
        folder, {"centroids.npy": book.centroids} | folders.reference(reference), book.meta
    )


def load(folder: Path) -> Codebook | None:
    if not (folder / "meta.json").exists():
        return None
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    return Codebook(np.load(folder / "centroids.npy"), meta)


def reference_vectors(folder: Path) -> np.ndarray | None:
    path = folder / "reference.npy"
    return np.load(path, mmap_mode="r") if path.exists() else None
