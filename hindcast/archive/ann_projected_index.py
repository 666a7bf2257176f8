"""The projected approximate index of a whole built index (`ann_index.build(...,
partition="projection")`): every month's projected codes (`hindcast.archive.ann_projected`)
under one fixed projection (`hindcast.archive.projection`), resumably, and its record in
index.json (checked month by month like the codebook's: `ann_index.disagreement`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from hindcast import frozen
from hindcast.archive import ann_projected, codebook, layout, projection, scan
from hindcast.archive.ann import FORMAT, Part, load_month, rank
from hindcast.archive.ann_month import probe_queries
from hindcast.errors import ArchiveIntegrityError

RECALLS: dict[tuple, dict] = {}  # (projection id, (threshold, head threshold)) → recall, a process


def build(
    root: Path,
    info: dict,
    *,
    nprobe: int,
    levels: tuple[float, float],
    current: Callable[[Path, str, dict], bool],
    on_progress: Callable[[int, int], None] | None = None,
) -> tuple[dict, dict]:
    """(params, record) after building every month that lacks this build at `levels`
    (threshold, head threshold); `current` tells whether a month already holds the build
    `params` asks for."""
    threshold, head_threshold = levels
    made = _projection(root, info)
    params = {"partition": ann_projected.PARTITION, "projection": made.id, "nprobe": nprobe}
    params |= {"threshold": float(threshold), "head": min(ann_projected.HEAD, made.dims)}
    params |= {"head_threshold": float(head_threshold)}
    months = sorted(info["months"])
    metas = {}
    for done, month in enumerate(months, 1):
        folder = layout.vector_chunk_dir(root, month)
        built = load_month(folder)
        if built is not None and current(root, month, params):
            metas[month] = built.meta
        else:
            vectors = np.load(folder / "vectors.npy", mmap_mode="r")
            end_us = layout.month_end_us(month)
            index = ann_projected.fit(vectors, end_us, made, threshold, FORMAT, **_levels(params))
            metas[month] = index.meta | {"params": params}
            ann_projected.write(folder / "ann", index, metas[month])
        if on_progress:
            on_progress(done, len(months))
    record = reference_recall(root, made, levels) | {
        "format": FORMAT,
        "partition": ann_projected.PARTITION,
        "nprobe": nprobe,
        "threshold": float(threshold),
        "head": params["head"],
        "head_threshold": params["head_threshold"],
        "lists": {month: m["lists"] for month, m in sorted(metas.items())},
        "projection": made.id,
        "recall@10_mean": None,
        "trained_on": f"a fixed projection: the top {made.dims} singular vectors of a reference "
        f"corpus of {made.meta['reference_rows']} texts (reference "
        f"{made.meta.get('reference')}) embedded by {made.meta.get('embedder')}; no archive "
        "document; recall@10 measured on that corpus",
    }
    return params, record


def reference_recall(root: Path, made: projection.Projection, levels: tuple[float, float]) -> dict:
    """Recall@10 of the projected search of the reference corpus itself (seeded probe queries:
    reference rows plus noise, `ann_month.probe_queries`) against its exact search — like the
    codebook's, a function of nothing in the archive; measured once and kept beside it."""
    folder = root / projection.FOLDER
    path = folder / f"recall-threshold{levels[0]:g}-head{levels[1]:g}.json"
    if path.exists():
        found = json.loads(path.read_text(encoding="utf-8"))
        if found.get("projection") == made.id:
            return {k: found[k] for k in ("recall@10", "probe_queries")}
    if (made.id, levels) not in RECALLS:
        reference = codebook.reference_vectors(folder)
        if reference is None:
            return {"recall@10": None, "probe_queries": 0}
        reference = np.ascontiguousarray(reference, dtype=np.float32)
        RECALLS[made.id, levels] = _recall(reference, made, levels)
    measured = RECALLS[made.id, levels]
    frozen.write_text_atomic(
        path, json.dumps(measured | {"projection": made.id}, sort_keys=True) + "\n"
    )
    return measured


def _recall(reference: np.ndarray, made: projection.Projection, levels: tuple) -> dict:
    rows = reference.shape[0]
    never = np.full(rows, np.iinfo(np.int64).min, dtype=np.int64)
    codes, scales = scan.quantize(reference)
    month = scan.Vectors(reference, codes, scales, never, float(scales.max()))
    index = ann_projected.fit(reference, 0, made, levels[0], FORMAT, head_threshold=levels[1])
    hits = []
    for q in probe_queries(reference, 0):
        exact = {p for _, p in scan.top(month, q, rows, None, 10)}
        approx = {p for _, _, p in rank([Part(month, rows, index)], q, None, 10, nprobe=1)}
        hits.append(len(exact & approx) / len(exact) if exact else 1.0)
    return {"recall@10": float(np.mean(hits)), "probe_queries": len(hits)}


def _levels(params: dict) -> dict:
    return {"head": params["head"], "head_threshold": params["head_threshold"]}


def _projection(root: Path, info: dict) -> projection.Projection:
    """The index's projection: for the embedder index.json names, cached or trained now; an
    index without an embedder (built by hand) must hold one in `projection/` already."""
    if "embedder" in info:
        return projection.for_index(root, info["embedder"])
    found = projection.load(root / projection.FOLDER)
    if found is None:
        raise ArchiveIntegrityError(f"{root}: no embedder recorded and no projection/ to use")
    return found
