"""Seeded, deterministic spherical k-means (float32 BLAS): the trainer of the approximate index's
fixed codebook (`hindcast.archive.codebook`) and of the data-trained partition kept as the
benchmark's baseline (`hindcast.archive.ann_month.fit`)."""

from __future__ import annotations

import numpy as np

TRAIN_PER_LIST = 32
ITERATIONS = 8
ASSIGN_CHUNK = 32_768


def kmeans(vectors: np.ndarray, train: np.ndarray, lists: int, seed: int) -> np.ndarray:
    """Seeded spherical k-means over a sample of the rows `train` (at most TRAIN_PER_LIST per list),
    drawn by rank among them: which documents it holds depends on the seed and on the training
    rows alone, never on rows that are not training rows (say, documents edited later)."""
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(train, size=min(train.size, lists * TRAIN_PER_LIST), replace=False))
    x = np.ascontiguousarray(vectors[sample], dtype=np.float32)
    centroids = _unit(x[np.sort(rng.choice(x.shape[0], size=lists, replace=False))])
    for _ in range(ITERATIONS):
        centroids = _update(x, _nearest(x, centroids), centroids)
    return centroids


def _nearest(x: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """Index of the centroid of highest dot product for each row (ties to the lower), in chunks."""
    out = np.empty(x.shape[0], dtype=np.int64)
    for start in range(0, x.shape[0], ASSIGN_CHUNK):
        block = np.asarray(x[start : start + ASSIGN_CHUNK], dtype=np.float32)
        out[start : start + block.shape[0]] = np.argmax(block @ centroids.T, axis=1)
    return out


def _update(x: np.ndarray, assign: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    sums = np.zeros(centroids.shape, dtype=np.float64)
    np.add.at(sums, assign, x)
    empty = np.bincount(assign, minlength=centroids.shape[0]) == 0
    sums[empty] = centroids[empty]
    return _unit(sums.astype(np.float32))


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.ascontiguousarray(
        np.where(norms > 0, x / np.where(norms > 0, norms, 1), x), dtype=np.float32
    )
