"""Candidate partitions of the approximate index, compared by recall@10 against the share of
rows they make the search rescore (issue 37) — numpy only, no timing: the screen that chose
the projected index (`hindcast.archive.ann_projected`), whose speed
`benchmarks/retrieval_projected.py` then measured through the index's own kernels.

    python benchmarks/retrieval_partitions.py [--docs 300000] [--vectors $D/reddit-all]

Documents: `--docs` vectors mixed from `--vectors` (benchmarks/reddit_texts.py output, MiniLM)
as retrieval_scale mixes them (one text + 0.5 × another + noise), all in one month; queries:
the 57 sample market questions (MiniLM fp32, cached by retrieval_scale). Every partition is
trained on the headline anchors (the reference corpus), except `forum-half` (see below).

* `ivf`: the 1,024-list headline codebook (the former default), nprobe 64/128/256.
* `ivf-2assign`: the same, every row in its two nearest lists.
* `imi`: an inverted multi-index — two 1,024-centroid codebooks over the two 192-d halves,
  1,024² cells, the T cells of best summed half-scores probed.
* `headlines+forum`: a 1,024-list codebook over the headlines plus half of the forum texts,
  documents mixed only from the other half (not circular); `forum-half`: that half alone.
* `projected`: rows whose 128-d projected score (top singular vectors of the headlines) reaches
  a threshold θ.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import retrieval_scale as rs

from hindcast.archive.kmeans import _nearest, _unit, kmeans


def documents(table: np.ndarray, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    main, other = rng.integers(0, len(table), n), rng.integers(0, len(table), n)
    kind = (rng.random(n) < 0.1).astype(np.int64)
    return rs.mix(table, main, other, kind, rng).astype(np.float32)


def report(name: str, probed: list[np.ndarray], truth: np.ndarray) -> None:
    """probed[i]: boolean row mask of query i."""
    recall = [float(m[t].mean()) for m, t in zip(probed, truth)]
    share = float(np.mean([m.mean() for m in probed]))
    print(f"{name:32s} recall@10 {np.mean(recall):.4f} (min {min(recall):.1f})  rows {share:.4f}")


def ivf(x, q, book, nprobe, assign: int = 1):
    sims = x @ book.T
    lists = np.argsort(-sims, axis=1)[:, :assign]
    out = []
    for v in q:
        keep = np.zeros(len(book), bool)
        keep[np.argsort(-(book @ v))[:nprobe]] = True
        out.append(keep[lists].any(axis=1))
    return out


def imi(x, q, books, cells):
    half = x.shape[1] // 2
    cell = _nearest(x[:, :half], books[0]) * 1024 + _nearest(x[:, half:], books[1])
    out = []
    for v in q:
        s = ((books[0] @ v[:half])[:, None] + (books[1] @ v[half:])[None, :]).ravel()
        keep = np.zeros(s.size, bool)
        keep[np.argpartition(-s, cells - 1)[:cells]] = True
        out.append(keep[cell])
    return out


def projected(x, q, anchors, theta, dims: int = 128):
    matrix = np.linalg.svd(anchors, full_matrices=False)[2][:dims].T
    y = x @ matrix
    scale = np.abs(y).max(axis=1, keepdims=True) / 127
    rough = (np.rint(y / scale) * scale) @ (q @ matrix).T
    return [rough[:, i] >= theta for i in range(len(q))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=300_000)
    parser.add_argument("--vectors", default="/tmp/hindcast-bench-index/reddit-all")
    parser.add_argument("--data", default="/tmp/hindcast-bench-index")
    args = parser.parse_args()
    anchors = _unit(rs.anchors())
    texts = np.load(Path(args.vectors) / "vectors.npy")
    q = rs.query_vectors(Path(args.data))[1]
    x = documents(texts, args.docs)
    truth = np.argsort(-(q @ x.T), axis=1)[:, :10]
    every = np.arange(len(anchors))
    book = kmeans(anchors, every, 1024, 0)
    for nprobe in (64, 128, 256):
        report(f"ivf@{nprobe}", ivf(x, q, book, nprobe), truth)
        report(f"ivf-2assign@{nprobe}", ivf(x, q, book, nprobe, 2), truth)
    half = anchors.shape[1] // 2
    books = [
        kmeans(np.ascontiguousarray(anchors[:, :half]), every, 1024, 0),
        kmeans(np.ascontiguousarray(anchors[:, half:]), every, 1024, 1),
    ]
    for cells in (10_000, 50_000, 100_000):
        report(f"imi@{cells}cells", imi(x, q, books, cells), truth)
    for theta in (0.15, 0.2, 0.25):
        report(f"projected@{theta}", projected(x, q, anchors, theta), truth)
    order = np.random.default_rng(5).permutation(len(texts))
    seen, unseen = (
        texts[np.sort(order[: len(texts) // 2])],
        texts[np.sort(order[len(texts) // 2 :])],
    )
    x = documents(unseen, args.docs)
    truth = np.argsort(-(q @ x.T), axis=1)[:, :10]
    mixed = np.concatenate([anchors, seen])
    for name, ref in (("headlines+forum", mixed), ("forum-half", seen)):
        trained = kmeans(ref, np.arange(len(ref)), 1024, 0)
        for nprobe in (128, 256):
            report(f"{name}@{nprobe}", ivf(x, q, trained, nprobe), truth)


if __name__ == "__main__":
    main()
