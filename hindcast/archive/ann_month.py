"""Build one month's approximate index (`hindcast.archive.ann`): every row in the list of its
nearest fixed-codebook centroid (the default), or centroids trained on the month's own rows
(the data-trained baseline kept for the benchmark); written atomically; and the recall@10 a
build records (on the reference corpus for a codebook, on the month for the baseline).
"""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import numpy as np

from hindcast import frozen
from hindcast.archive import codebook as codebooks
from hindcast.archive import folders, scan
from hindcast.archive.ann import ARRAYS, FORMAT, NPROBE, Ann, Part, rank
from hindcast.archive.codebook import Codebook
from hindcast.archive.kmeans import _nearest, _unit, kmeans
from hindcast.errors import ArchiveIntegrityError

MAX_LISTS = 4096
LISTS_PER_SQRT = 6
PROBE_QUERIES = 200
QUERY_NOISE = 1.75


def default_lists(train_rows: int) -> int:
    """Lists of a month with `train_rows` training rows: 6·√rows, at most MAX_LISTS."""
    return (
        max(1, min(MAX_LISTS, train_rows, round(LISTS_PER_SQRT * math.sqrt(train_rows))))
        if train_rows
        else 0
    )


def _lists_for(train_rows: int, lists: int | None) -> int:
    return min(lists, train_rows) if lists else default_lists(train_rows)


def build_month(
    folder: Path,
    vectors,
    created_us,
    edit_us,
    month_end_us: int,
    *,
    lists: int | None = None,
    seed: int = 0,
    nprobe: int | None = None,
    codebook: Codebook | None = None,
    recall: dict | None = None,
) -> dict:
    """Build (or rebuild) the IVF of one month under `folder/ann/` and return its meta.
    With a `codebook` (the default build): its lists, and `recall` (the codebook's, measured
    on the reference corpus) as the recorded recall. Without (the data-trained baseline):
    lists, rows, training rows and recall@10 at `nprobe` measured on the month; a month with
    no document final before its end gets no index (lists 0) and is scanned exactly."""
    folder, nprobe = Path(folder), nprobe or NPROBE
    params = {"lists": lists, "seed": seed, "nprobe": nprobe}
    if codebook is not None:
        index = fit(vectors, created_us, edit_us, month_end_us, codebook=codebook)
        meta = index.meta | {"params": params | {"codebook": codebook.id}}
        meta |= recall or {"recall@10": None, "probe_queries": 0}
        _write(folder / "ann", index, meta)
        return meta
    index = fit(vectors, created_us, edit_us, month_end_us, lists=lists, seed=seed)
    meta = index.meta | {"params": params}
    if index.lists == 0:
        _remove(folder / "ann")
        return meta | {"recall@10": None, "probe_queries": 0}
    meta |= _recall(vectors, edit_us, index, nprobe, seed)
    _write(folder / "ann", index, meta)
    return meta


def fit(
    vectors,
    created_us,
    edit_us,
    month_end_us: int,
    *,
    lists: int | None = None,
    seed: int = 0,
    codebook: Codebook | None = None,
) -> Ann:
    """The IVF of one month, in memory: every row in the list of its nearest `codebook`
    centroid (the default build); without one, the data-trained baseline: centroids trained on
    the rows final before `month_end_us` (none of them: an index of 0 lists, the exact scan)."""
    edit_us, created_us = np.asarray(edit_us), np.asarray(created_us)
    if codebook is not None:
        meta = {
            "format": FORMAT,
            "rows": int(edit_us.size),
            "lists": codebook.lists,
            "month_end_us": int(month_end_us),
            "partition": "codebook",
            "codebook": codebook.id,
        }
        return Ann(**_lists(vectors, codebook.centroids, edit_us), meta=meta)
    train = _training_rows(created_us, edit_us, month_end_us)
    count = _lists_for(train.size, lists)
    meta = {
        "format": FORMAT,
        "rows": int(edit_us.size),
        "trained_on": int(train.size),
        "lists": int(count),
        "month_end_us": int(month_end_us),
        "partition": "data",
    }
    centroids = (
        kmeans(vectors, train, count, seed)
        if count
        else np.zeros((0, vectors.shape[1]), np.float32)
    )
    return Ann(**_lists(vectors, centroids, edit_us), meta=meta)


def _training_rows(created_us, edit_us, month_end_us: int) -> np.ndarray:
    """Positions of the rows whose text was final before the month's end (see the module notes)."""
    return np.flatnonzero(
        (np.asarray(edit_us) < month_end_us) & (np.asarray(created_us) < month_end_us)
    )


def _lists(vectors, centroids: np.ndarray, edit_us: np.ndarray) -> dict:
    """Every row assigned to its nearest centroid; arrays in list order (time order within a
    list). The codes are the scan's own per-row codes (`scan.quantize`), copied in list order."""
    assign = (
        _nearest(vectors, centroids) if centroids.shape[0] else np.zeros(len(edit_us), np.int64)
    )
    positions = np.argsort(assign, kind="stable").astype(np.int64)
    offsets = np.concatenate(
        [[0], np.cumsum(np.bincount(assign, minlength=centroids.shape[0]))]
    ).astype(np.int64)
    codes, scales = scan.quantize(vectors)
    return {
        "centroids": centroids,
        "offsets": offsets[: centroids.shape[0] + 1],
        "positions": positions,
        "codes": codes[positions],
        "scales": scales[positions],
        "edit_us": np.ascontiguousarray(np.asarray(edit_us)[positions], dtype=np.int64),
    }


def _recall(vectors, edit_us, index: Ann, nprobe: int, seed: int) -> dict:
    """Recall@10 at `nprobe` over seeded probe queries (training rows plus Gaussian noise)
    against the exact scan of the month, both over the rows final before the month's end (the
    edit mask at the month's end): the recorded figure, like the centroids, reads no text
    written after the month."""
    codes, scales = scan.quantize(vectors)
    end = int(index.meta["month_end_us"])
    month = scan.Vectors(vectors, codes, scales, np.asarray(edit_us), float(scales.max()))
    train = _training_rows(np.full(len(scales), end - 1), edit_us, end)
    hits = [overlap(month, index, q, nprobe, end) for q in probe_queries(vectors, seed, rows=train)]
    return {"recall@10": float(np.mean(hits)), "probe_queries": len(hits)}


def probe_queries(
    vectors, seed: int, count: int = PROBE_QUERIES, rows: np.ndarray | None = None
) -> np.ndarray:
    """`count` seeded queries: unit month rows (of `rows`; None: all) plus Gaussian
    noise of the same norm."""
    rng = np.random.default_rng(seed + 1)
    rows = np.arange(vectors.shape[0]) if rows is None else np.asarray(rows)
    rows = np.sort(rng.choice(rows, size=min(count, rows.size), replace=False))
    base = _unit(np.asarray(vectors[rows], dtype=np.float32))
    noise = _unit(rng.standard_normal(base.shape).astype(np.float32))
    return np.ascontiguousarray(base + np.float32(QUERY_NOISE) * noise, dtype=np.float32)


def overlap(
    month: scan.Vectors, ann: Ann, q: np.ndarray, nprobe: int, mask_from: int | None = None
) -> float:
    """Recall@10 of one query: the approximate top 10 of the month against its exact top 10."""
    rows = month.vectors.shape[0]
    exact = {p for _, p in scan.top(month, q, rows, mask_from, 10)}
    approx = {p for _, _, p in rank([Part(month, rows, ann)], q, mask_from, 10, nprobe=nprobe)}
    return len(exact & approx) / len(exact) if exact else 1.0


def _write(target: Path, index: Ann, meta: dict) -> None:
    """Write the index into a private folder, then rename it to `target` (replacing an old
    one); staging folders a stopped build left behind are removed first."""
    for stale in target.parent.glob(".ann-*"):
        shutil.rmtree(stale)
    folders.write_whole(target, {f"{n}.npy": getattr(index, n) for n in ARRAYS}, meta)


def _remove(path: Path) -> None:
    if path.exists():
        old = path.with_name(f".old-{path.name}-{os.getpid()}")
        path.rename(old)
        shutil.rmtree(old)


def codebook_recall(book: Codebook, reference: np.ndarray, nprobe: int, seed: int = 0) -> dict:
    """Recall@10 at `nprobe` of the codebook's partition of the reference corpus itself."""
    reference = np.ascontiguousarray(reference, dtype=np.float32)
    rows = reference.shape[0]
    never = np.full(rows, np.iinfo(np.int64).min, dtype=np.int64)
    index = fit(reference, never, never, 0, codebook=book)
    codes, scales = scan.quantize(reference)
    month = scan.Vectors(reference, codes, scales, never, float(scales.max()))
    hits = [overlap(month, index, q, nprobe) for q in probe_queries(reference, seed)]
    return {"recall@10": float(np.mean(hits)), "probe_queries": len(hits)}


def measured_codebook_recall(folder: Path, book: Codebook, nprobe: int, seed: int = 0) -> dict:
    """`codebook_recall` of the codebook cached in `folder` at `nprobe`, measured once and kept
    beside it."""
    path = folder / f"recall-nprobe{nprobe}-seed{seed}.json"
    if (book.id, nprobe, seed) in codebooks.RECALLS:
        return codebooks.RECALLS[book.id, nprobe, seed]
    if path.exists():
        found = json.loads(path.read_text(encoding="utf-8"))
        if found.get("codebook") == book.id:
            return {k: found[k] for k in ("recall@10", "probe_queries")}
    reference = codebooks.reference_vectors(folder)
    if reference is None:
        raise ArchiveIntegrityError(f"{folder}: the codebook's reference vectors are missing")
    measured = codebooks.RECALLS[book.id, nprobe, seed] = codebook_recall(
        book, reference, nprobe, seed
    )
    frozen.write_text_atomic(
        path, json.dumps(measured | {"codebook": book.id}, sort_keys=True) + "\n"
    )
    return measured
