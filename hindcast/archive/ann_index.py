"""The approximate index of a whole built index: every month's projected codes under one fixed
projection (the default, `hindcast.archive.ann_projected_index`) or its lists under one fixed
codebook (`hindcast.archive.ann_month`), resumably, and the record in index.json that
approximate search checks every month against (`check_recorded`, `disagreement`)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hindcast import frozen
from hindcast.archive import ann_projected, ann_projected_index, layout
from hindcast.archive import codebook as codebooks
from hindcast.archive.ann import FORMAT, NPROBE, load_month
from hindcast.archive.ann_month import build_month, measured_codebook_recall
from hindcast.archive.codebook import Codebook
from hindcast.archive.kmeans import ITERATIONS, TRAIN_PER_LIST
from hindcast.errors import ArchiveIntegrityError, ConfigError

if TYPE_CHECKING:
    from hindcast.archive.index import IndexReader

INFO = "index.json"
DEFAULT = "projection"  # the default build (issue 37); "codebook" on request: docs/performance.md


def build(
    index: str | os.PathLike[str] | IndexReader,
    *,
    lists: int | None = None,
    nprobe: int | None = None,
    seed: int = 0,
    on_progress: Callable[[int, int], None] | None = None,
    partition: str | None = None,
    threshold: float | None = None,
    head_threshold: float | None = None,
) -> dict:
    """Build the approximate index of every month of a built index (its root folder, or an
    `IndexReader`) that lacks one with these parameters; record and return `info["ann"]`.
    `partition`: "projection" (the default: `hindcast.archive.ann_projected`, at `threshold`
    and `head_threshold`) or "codebook" (the fixed codebook's IVF, of `lists` lists); see
    docs/performance.md.

    A rebuild is committed as a whole: before the first month is replaced, `info["ann"]` is
    removed from index.json (atomically), and the new record is written only once every month
    holds the new build. A rebuild stopped midway therefore leaves no record — approximate
    search is refused ("run `hindcast archive embed --approx`") until a re-run finishes it,
    never served from a mix of old and new months under the old record."""
    root = Path(index) if isinstance(index, (str, os.PathLike)) else Path(index.root)
    nprobe = nprobe or NPROBE
    info = json.loads((root / INFO).read_text(encoding="utf-8"))
    months = sorted(info["months"])
    partition = partition or DEFAULT
    if partition not in ("codebook", ann_projected.PARTITION):
        raise ConfigError(f"approximate index partition {partition!r}: use codebook or projection")
    if lists is not None and partition != "codebook":
        raise ConfigError(f"lists={lists}: only with partition='codebook' (not {partition!r})")
    if partition == ann_projected.PARTITION:
        levels = (threshold, head_threshold)
        return _build_projected(root, info, nprobe, levels, on_progress)
    book = _codebook(root, info, lists, seed)
    recall = measured_codebook_recall(root / codebooks.FOLDER, book, nprobe, seed)
    params = {"lists": lists, "seed": seed, "nprobe": nprobe, "codebook": book.id}
    if "ann" in info and not all(_current(root, month, params) for month in months):
        del info["ann"]
        _save(root, info)
    metas = {}
    for done, month in enumerate(months, 1):
        metas[month] = _month(root, month, params, book, recall)
        if on_progress:
            on_progress(done, len(months))
    info["ann"] = summary(metas, nprobe, seed, book) | recall | {"params": params}
    _save(root, info)
    return info["ann"]


def _build_projected(
    root: Path,
    info: dict,
    nprobe: int,
    levels: tuple[float | None, float | None],
    on_progress: Callable[[int, int], None] | None,
) -> dict:
    """`build` with the fixed projection (`hindcast.archive.ann_projected_index`) at `levels`
    (threshold, head threshold; None: the module's)."""
    threshold = ann_projected.THRESHOLD if levels[0] is None else levels[0]
    head_threshold = ann_projected.HEAD_THRESHOLD if levels[1] is None else levels[1]
    if "ann" in info:
        del info["ann"]
        _save(root, info)
    params, record = ann_projected_index.build(
        root,
        info,
        nprobe=nprobe,
        levels=(threshold, head_threshold),
        current=_current,
        on_progress=on_progress,
    )
    info["ann"] = record | {"params": params}
    _save(root, info)
    return info["ann"]


def _codebook(root: Path, info: dict, lists: int | None, seed: int) -> Codebook:
    """The index's codebook: for the embedder index.json names, cached or trained now; an index
    without an embedder (built by hand) must hold one in `codebook/` already."""
    if "embedder" in info:
        return codebooks.for_index(root, info["embedder"], lists=lists, seed=seed)
    found = codebooks.load(root / codebooks.FOLDER)
    if found is None:
        raise ArchiveIntegrityError(f"{root}: no embedder recorded and no codebook/ to use")
    return found


def _save(root: Path, info: dict) -> None:
    frozen.write_text_atomic(root / INFO, json.dumps(info, indent=2, sort_keys=True) + "\n")


def _current(root: Path, month: str, params: dict) -> bool:
    """Whether the month's index on disk is the build `params` asks for (same parameters,
    same codebook)."""
    meta_path = layout.vector_chunk_dir(root, month) / "ann" / "meta.json"
    if not meta_path.exists():
        return False
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    return meta.get("format") == FORMAT and meta.get("params") == params


def disagreement(meta: dict, recorded: dict | None, month: str) -> str | None:
    """Why a month's index (its `meta`) is not the build index.json records (`info["ann"]`),
    or None when it is (or nothing is recorded: approximate search is refused then anyway)."""
    if recorded is None:
        return None
    want = recorded.get("params") or {
        "seed": recorded.get("seed"),
        "nprobe": recorded.get("nprobe"),
    }
    got = meta.get("params") or {}
    if recorded.get("lists", {}).get(month) == meta.get("lists") and all(
        got.get(k) == v for k, v in want.items()
    ):
        return None
    return (
        f"month {month}: its approximate index ({meta.get('lists')} lists, parameters {got}) is "
        f"not the one index.json records ({recorded.get('lists', {}).get(month)} lists, "
        f"parameters {want}) — a stopped `hindcast archive embed --approx` rebuild; run it again "
        "to finish"
    )


def check_recorded(root: Path, info: dict) -> None:
    """Refuse an index whose months do not all hold the approximate build index.json records
    (ArchiveIntegrityError naming the first such month and what to run)."""
    for month in sorted(info["months"]):
        meta_path = layout.vector_chunk_dir(Path(root), month) / "ann" / "meta.json"
        if meta_path.exists():
            why = disagreement(
                json.loads(meta_path.read_text(encoding="utf-8")), info.get("ann"), month
            )
            if why:
                raise ArchiveIntegrityError(f"{root}: {why}")


def _month(root: Path, month: str, params: dict, book: Codebook, recall: dict) -> dict:
    folder = layout.vector_chunk_dir(root, month)
    lists, seed, nprobe = params["lists"], params["seed"], params["nprobe"]
    built = load_month(folder)
    if built is not None and _current(root, month, params):
        return built.meta
    arrays = {
        n: np.load(folder / f"{n}.npy", mmap_mode="r") for n in ("vectors", "created_us", "edit_us")
    }
    return build_month(
        folder,
        arrays["vectors"],
        arrays["created_us"],
        arrays["edit_us"],
        layout.month_end_us(month),
        lists=lists,
        seed=seed,
        nprobe=nprobe,
        codebook=book,
        recall=recall,
    )


def summary(metas: dict[str, dict], nprobe: int, seed: int, book: Codebook | None = None) -> dict:
    """index.json's record of a build: with the codebook, what it was trained on; without,
    the data-trained baseline's per-month recall (min and mean)."""
    if book is not None:
        return {
            "format": FORMAT,
            "nprobe": nprobe,
            "seed": seed,
            "lists": {month: m["lists"] for month, m in sorted(metas.items())},
            "codebook": book.id,
            "recall@10_mean": None,
            "trained_on": "a fixed codebook: seeded spherical k-means over a reference corpus "
            f"of {book.meta['reference_rows']} texts (reference {book.meta.get('reference')}) "
            f"embedded by {book.meta.get('embedder')}; no archive document; recall@10 measured "
            "on that corpus",
        }
    recalls = [m["recall@10"] for m in metas.values() if m["recall@10"] is not None]
    return {
        "format": FORMAT,
        "nprobe": nprobe,
        "seed": seed,
        "lists": {month: m["lists"] for month, m in sorted(metas.items())},
        "recall@10": min(recalls) if recalls else None,
        "recall@10_mean": round(float(np.mean(recalls)), 6) if recalls else None,
        "probe_queries": sum(m["probe_queries"] for m in metas.values()),
        "trained_on": "per month, the documents whose text was final before the month's end "
        f"(edit_us < month end); seeded spherical k-means ({ITERATIONS} iterations, "
        f"at most {TRAIN_PER_LIST} sampled rows per list)",
    }
