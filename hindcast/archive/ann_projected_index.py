"""The projected approximate index of a whole built index (`ann_index.build(...,
partition="projection")`): every month's projected codes (`hindcast.archive.ann_projected`)
under one fixed projection (`hindcast.archive.projection`), resumably, and its record in
index.json (checked month by month like the codebook's: `ann_index.disagreement`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from hindcast.archive import ann_projected, layout, projection
from hindcast.archive.ann import FORMAT, load_month
from hindcast.errors import ArchiveIntegrityError


def build(
    root: Path,
    info: dict,
    *,
    nprobe: int,
    threshold: float,
    current: Callable[[Path, str, dict], bool],
    on_progress: Callable[[int, int], None] | None = None,
) -> tuple[dict, dict]:
    """(params, record) after building every month that lacks this build; `current` tells
    whether a month already holds the build `params` asks for."""
    made = _projection(root, info)
    params = {"partition": ann_projected.PARTITION, "projection": made.id, "nprobe": nprobe}
    params |= {"threshold": float(threshold)}
    months = sorted(info["months"])
    metas = {}
    for done, month in enumerate(months, 1):
        folder = layout.vector_chunk_dir(root, month)
        built = load_month(folder)
        if built is not None and current(root, month, params):
            metas[month] = built.meta
        else:
            vectors = np.load(folder / "vectors.npy", mmap_mode="r")
            index = ann_projected.fit(vectors, layout.month_end_us(month), made, threshold, FORMAT)
            metas[month] = index.meta | {"params": params}
            ann_projected.write(folder / "ann", index, metas[month])
        if on_progress:
            on_progress(done, len(months))
    record = {
        "format": FORMAT,
        "partition": ann_projected.PARTITION,
        "nprobe": nprobe,
        "threshold": float(threshold),
        "lists": {month: m["lists"] for month, m in sorted(metas.items())},
        "projection": made.id,
        "recall@10_mean": None,
        "trained_on": f"a fixed projection: the top {made.dims} singular vectors of a reference "
        f"corpus of {made.meta['reference_rows']} texts (reference "
        f"{made.meta.get('reference')}) embedded by {made.meta.get('embedder')}; no archive "
        "document",
    }
    return params, record


def _projection(root: Path, info: dict) -> projection.Projection:
    if "embedder" in info:
        return projection.for_index(root, info["embedder"])
    found = projection.load(root / projection.FOLDER)
    if found is None:
        raise ArchiveIntegrityError(f"{root}: no embedder recorded and no projection/ to use")
    return found
