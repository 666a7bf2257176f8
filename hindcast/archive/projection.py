"""The fixed projection of the projected approximate index: a reference-corpus subspace that
depends on no archive document (issue 37).

A closed month searched through its projected index (`hindcast.archive.ann_projected`) scans
short int8 codes of every row's projection onto this subspace (the head of each code for every
row, the rest for the rows whose head scores high enough), and rescores exactly the rows whose
projected scores reach two fixed thresholds. Which rows those are depends on the query and
each row's own vector only (the projection, like the codebook, is trained on nothing of the
archive), so hiding a row edited after t0 changes no other row's membership: the proof of
`hindcast.archive.ann.rank` holds unchanged.

The projection: the top `dims` right singular vectors of the shipped reference corpus
(`codebook.reference_texts`, the 46,809 sample headlines) embedded by the index's own model,
uncentred (a plain orthogonal projection), each signed so its largest component is positive
(deterministic). Keyed and cached like the codebook (`<index>/projection/`); its id (a sha256
of the matrix and the key) is recorded by every month's index.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hindcast.archive import codebook, folders

DIMS = 128
FOLDER = "projection"


@dataclass(frozen=True)
class Projection:
    """An orthonormal matrix (input dims × dims, float32) and where it came from."""

    matrix: np.ndarray
    meta: dict

    @property
    def id(self) -> str:
        return self.meta["id"]

    @property
    def dims(self) -> int:
        return int(self.matrix.shape[1])


def train(reference: np.ndarray, key: dict, *, dims: int = DIMS) -> Projection:
    """The top `dims` right singular vectors of the (uncentred) reference vectors, as columns."""
    reference = np.asarray(reference, dtype=np.float64)
    dims = min(dims, reference.shape[1])
    values, vectors = np.linalg.eigh(reference.T @ reference)
    top = vectors[:, np.argsort(-values, kind="stable")[:dims]]
    signs = np.sign(top[np.argmax(np.abs(top), axis=0), np.arange(dims)])
    matrix = np.ascontiguousarray(top * np.where(signs == 0, 1, signs), dtype=np.float32)
    key = key | {"dims": int(dims), "reference_rows": int(reference.shape[0])}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode() + matrix.tobytes())
    return Projection(matrix, key | {"id": digest.hexdigest()[:16]})


def for_index(root: Path, embedder: str, *, dims: int = DIMS) -> Projection:
    """The projection of the index at `root`: the cached one when its key matches, else
    trained now on the reference corpus embedded by `embedder`, and cached."""
    key = {"embedder": embedder, "reference": codebook.reference_hash(), "dims": dims}
    cached = load(Path(root) / FOLDER)
    if cached is not None and all(cached.meta.get(k) == v for k, v in key.items()):
        return cached
    made = _trained(embedder, key["reference"], dims)
    save(Path(root) / FOLDER, made, codebook.embedded(embedder))
    return made


@functools.lru_cache(maxsize=4)
def _trained(embedder: str, reference: str, dims: int) -> Projection:
    return train(
        codebook.embedded(embedder), {"embedder": embedder, "reference": reference}, dims=dims
    )


def project(vectors: np.ndarray, matrix: np.ndarray, chunk: int = 65_536) -> np.ndarray:
    """Rows of `vectors` projected by `matrix` (float32), a chunk at a time."""
    out = np.empty((vectors.shape[0], matrix.shape[1]), dtype=np.float32)
    for start in range(0, vectors.shape[0], chunk):
        block = np.asarray(vectors[start : start + chunk], dtype=np.float32)
        out[start : start + block.shape[0]] = block @ matrix
    return out


def save(folder: Path, made: Projection, reference: np.ndarray | None = None) -> None:
    """Write the projection (and the reference vectors, for its recall) into `folder`,
    atomically."""
    folders.write_whole(
        folder, {"matrix.npy": made.matrix} | folders.reference(reference), made.meta
    )


def load(folder: Path) -> Projection | None:
    if not (folder / "meta.json").exists():
        return None
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    return Projection(np.load(folder / "matrix.npy"), meta)
