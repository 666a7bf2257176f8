"""Approximate vector search of closed months: an IVF index per month, exact within what it probes.

A month that ended before t0 may be searched through an inverted-file index whose lists come
from a fixed codebook shipped with the package (`hindcast.archive.codebook`), never from the
archive, so masking a document edited after t0 changes nothing else; the month of t0 and any
month without an index keep the exact scan (`hindcast.archive.scan`). `build`/`build_month`
write each month's lists atomically and resumably; `rank` probes them with the edit mask inside
the scan. Why a codebook, the search order's proof and the measured recall and speed:
docs/archive.md, "Approximate search".
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hindcast import frozen
from hindcast.archive import codebook as codebooks
from hindcast.archive import layout, scan
from hindcast.archive.codebook import Codebook
from hindcast.archive.kmeans import ITERATIONS, TRAIN_PER_LIST, _nearest, _unit, kmeans
from hindcast.errors import ArchiveIntegrityError, RetrievalError

FORMAT = "hindcast-ann/2"
NPROBE = 256
MAX_LISTS = 4096
LISTS_PER_SQRT = 6
PROBE_QUERIES = 200
QUERY_NOISE = 1.75
SPLIT = 8192  # exact ranges are cut into pieces of this many rows to share them among threads
INFO = "index.json"
_ARRAYS = ("centroids", "offsets", "positions", "codes", "scales", "edit_us")


@dataclass(frozen=True)
class Ann:
    """One month's IVF: centroids (lists × dims), list offsets (lists + 1), and per row in list
    order its time-order position, int8 code, scale and edit instant."""

    centroids: np.ndarray
    offsets: np.ndarray
    positions: np.ndarray
    codes: np.ndarray
    scales: np.ndarray
    edit_us: np.ndarray
    meta: dict

    @property
    def lists(self) -> int:
        return int(self.centroids.shape[0])

    @property
    def rows(self) -> int:
        return int(self.positions.shape[0])


@dataclass(frozen=True)
class Part:
    """One month to search: rows [0, end) of `vectors`; through `ann` when given for a month
    closed at t0 (then end is all its rows; `rank` checks that, and that the month ended by
    t0 when the edit mask tells t0, else scans exactly), else by the exact scan."""

    vectors: scan.Vectors
    end: int
    ann: Ann | None = None


# ---- search -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    codes: np.ndarray
    scales: np.ndarray
    edit_us: np.ndarray
    ranges: np.ndarray  # (R, 3) int64: source start, source stop, output start
    size: int
    where: Callable | None  # output index → time-order position (None: the same)


def rank(
    parts: list[Part],
    q,
    mask_from: int | None,
    n: int,
    *,
    nprobe: int,
    scanner: scan.Scanner | None = None,
) -> list[tuple[float, int, int]]:
    """The first `n` eligible rows (score, part index, position) in one fixed order: the rows
    of the `nprobe` best lists of every part with an index and every row of the parts without
    one, best first (ties: part, then position); then, when those hold fewer than n eligible
    rows, the indexed parts' other rows, best first. Rows whose edit instant is ≥ `mask_from`
    are masked (None: none). Which of the two groups a row is in depends on the query and its
    own vector only, so hiding one row never changes the order of the others (issue 24).
    The two groups are `probed` and `rest`: month shards run them apart and merge alike."""
    best, _ = probed(parts, q, mask_from, n, nprobe=nprobe, scanner=scanner)
    if len(best) < n:
        best += rest(parts, q, mask_from, n, nprobe=nprobe, scanner=scanner)[: n - len(best)]
    return best


def probed(parts, q, mask_from, n, *, nprobe: int, scanner=None) -> tuple[list, bool]:
    """The first group of `rank` (its best `n`), and whether any part goes through its index."""
    if isinstance(nprobe, bool) or not isinstance(nprobe, int | np.integer) or nprobe < 1:
        raise RetrievalError(f"nprobe must be a positive integer, got {nprobe!r}")
    q = np.ascontiguousarray(q, dtype=np.float32)
    plans = _each(lambda part: _plan(part, q, nprobe, mask_from), parts, scanner)
    roughs = _first_stage(plans, q, mask_from, scanner)
    tops = _each(
        lambda i: (
            scan.refine(parts[i].vectors, q, roughs[i], n, plans[i].where) if roughs[i].size else []
        ),
        range(len(parts)),
        scanner,
    )
    best = _merge((score, i, position) for i, top in enumerate(tops) for score, position in top)
    return best[:n], any(plan.where is not None for plan in plans)


def _merge(candidates) -> list[tuple[float, int, int]]:
    return sorted(candidates, key=lambda c: (-c[0], c[1], c[2]))


def rest(parts, q, mask_from, n, *, nprobe: int, scanner=None) -> list[tuple[float, int, int]]:
    """The second group of `rank`: the best `n` eligible rows of the indexed parts outside their
    probed lists, best first: each part's exact top n less its probed rows."""
    q = np.ascontiguousarray(q, dtype=np.float32)
    plans = [_plan(part, q, nprobe, mask_from) for part in parts]
    indexed = [i for i, plan in enumerate(plans) if plan.where is not None]
    exact = scan.top_each(
        [(parts[i].vectors, parts[i].end) for i in indexed], q, mask_from, n, scanner
    )
    out = []
    for i, top in zip(indexed, exact):
        positions = np.array([p for _, p in top], dtype=np.int64)
        probed = np.isin(positions, _probed_positions(parts[i].ann, plans[i]))
        out += [(score, i, p) for (score, p), seen in zip(top, probed) if not seen]
    return _merge(out)[:n]


def _probed_positions(ann: Ann, plan: _Plan) -> np.ndarray:
    return np.concatenate(
        [np.asarray(ann.positions[a:b]) for a, b, _ in plan.ranges] + [np.empty(0, np.int64)]
    )


def _each(fn: Callable, items, scanner: scan.Scanner | None) -> list:
    """[fn(x) for x in items], the items dealt round-robin to the scanner's threads (the
    compiled kernels inside release the GIL); in this thread alone without a scanner."""
    items = list(items)
    workers = min(scanner.workers, len(items)) if scanner is not None else 1
    if workers < 2 or scanner is None:
        return [fn(x) for x in items]
    others = [
        scanner.submit(lambda w: [fn(x) for x in items[w::workers]], w) for w in range(1, workers)
    ]
    shares = [[fn(x) for x in items[0::workers]]] + [done.result() for done in others]
    return [shares[i % workers][i // workers] for i in range(len(items))]


def _plan(part: Part, q: np.ndarray, nprobe: int, mask_from: int | None) -> _Plan:
    month, end, ann = part.vectors, max(int(part.end), 0), part.ann
    if ann is not None and ann.meta.get("stale"):
        raise ArchiveIntegrityError(ann.meta["stale"])
    if ann is not None and ann.meta.get("format") != FORMAT:
        raise ArchiveIntegrityError(
            f"an approximate index of format {ann.meta.get('format')} (trained on the archive's "
            "own documents: a post-t0 edit moves its lists, issue 24); rebuild it with "
            "`hindcast archive embed --approx`"
        )
    if ann is None or not _usable(ann, end, mask_from):
        starts = np.arange(0, end, SPLIT, dtype=np.int64)
        stops = np.minimum(starts + SPLIT, end)
        ranges = np.stack([starts, stops, starts], axis=1)
        return _Plan(
            np.asarray(month.codes),
            np.asarray(month.scales),
            np.asarray(month.edit_us),
            ranges,
            end,
            None,
        )
    lists = probe(ann, q, nprobe)
    starts, stops = ann.offsets[lists], ann.offsets[lists + 1]
    keep = stops > starts
    starts, stops = starts[keep], stops[keep]
    outputs = np.concatenate([[0], np.cumsum(stops - starts)]).astype(np.int64)
    ranges = np.stack([starts, stops, outputs[:-1]], axis=1)
    return _Plan(
        ann.codes,
        ann.scales,
        ann.edit_us,
        ranges,
        int(outputs[-1]),
        _locator(ann, starts, outputs[:-1]),
    )


def _usable(ann: Ann | None, end: int, mask_from: int | None) -> bool:
    """Whether a part may go through its index: one with lists, every row of the month in
    the search (a closed month), and — when the edit mask tells t0 — a month ended by t0."""
    if ann is None or ann.lists == 0 or end != ann.rows:
        return False
    return mask_from is None or ann.meta.get("month_end_us", mask_from) <= mask_from


def probe(ann: Ann, q: np.ndarray, nprobe: int) -> np.ndarray:
    """The `nprobe` lists whose centroids score highest against q (ties to the
    lower list), ascending."""
    scores = np.empty(ann.lists, dtype=np.float32)
    scan._kernels().dots(ann.centroids, np.ascontiguousarray(q, dtype=np.float32), scores)
    if nprobe >= scores.size:
        return np.arange(scores.size)
    picked = np.argpartition(-scores, nprobe - 1)[:nprobe]
    low = scores[picked].min()
    above = np.flatnonzero(scores > low)
    return np.sort(np.concatenate([above, np.flatnonzero(scores == low)[: nprobe - above.size]]))


def _locator(ann: Ann, starts: np.ndarray, outputs: np.ndarray) -> Callable:
    def where(k: np.ndarray) -> np.ndarray:
        r = np.searchsorted(outputs, k, side="right") - 1
        return np.asarray(ann.positions[starts[r] + (k - outputs[r])], dtype=np.int64)

    return where


def _first_stage(
    plans: list[_Plan], q: np.ndarray, mask_from: int | None, scanner: scan.Scanner | None
) -> list[np.ndarray]:
    """First-stage scores of every plan's ranges, in one pass over the scanner's threads."""
    outs = [np.empty(plan.size, dtype=np.float32) for plan in plans]
    masked = mask_from is not None
    limit = int(mask_from) if mask_from is not None else np.iinfo(np.int64).max
    calls = [
        (plan.codes, plan.scales, q, plan.edit_us, limit, masked, out, plan.ranges)
        for plan, out in zip(plans, outs)
    ]
    total = sum(plan.size for plan in plans)
    workers = scanner.workers if scanner is not None and total >= scan.PARALLEL_ROWS else 1
    shares = _shares(plans, total, workers)
    others = [scanner.submit(_scan, calls, share) for share in shares[1:]] if scanner else []
    _scan(calls, shares[0])
    for done in others:
        done.result()
    return outs


def _shares(plans: list[_Plan], total: int, workers: int) -> list[list[tuple[int, int, int]]]:
    """(plan, first range, last range + 1) per worker: worker w takes the ranges whose output
    starts, laid end to end over all plans, fall in [total·w/workers, total·(w+1)/workers)."""
    shares: list[list[tuple[int, int, int]]] = [[] for _ in range(workers)]
    offset = 0
    for p, plan in enumerate(plans):
        starts = (plan.ranges[:, 2] + offset) * workers
        cuts = np.searchsorted(starts, [total * w for w in range(workers + 1)], side="left")
        cuts[-1] = len(plan.ranges)
        for w in range(workers):
            if cuts[w] < cuts[w + 1]:
                shares[w].append((p, int(cuts[w]), int(cuts[w + 1])))
        offset += plan.size
    return shares


def _scan(calls: list[tuple], share: list[tuple[int, int, int]]) -> None:
    kernel = scan._kernels().first_stage_ranges
    for p, lo, hi in share:
        kernel(*calls[p], lo, hi)


# ---- build --------------------------------------------------------------------------------


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
    staging = target.with_name(f".ann-{os.getpid()}")
    staging.mkdir(parents=True)
    for name in _ARRAYS:
        np.save(staging / f"{name}.npy", getattr(index, name))
    (staging / "meta.json").write_text(
        json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    _remove(target)
    staging.rename(target)


def _remove(path: Path) -> None:
    if path.exists():
        old = path.with_name(f".old-{path.name}-{os.getpid()}")
        path.rename(old)
        shutil.rmtree(old)


def load_month(folder: Path) -> Ann | None:
    """The IVF of the month whose vector folder is `folder` (arrays memory-mapped), or None."""
    target = Path(folder) / "ann"
    if not (target / "meta.json").exists():
        return None
    meta = json.loads((target / "meta.json").read_text(encoding="utf-8"))
    arrays = {name: np.load(target / f"{name}.npy", mmap_mode="r") for name in _ARRAYS}
    return Ann(**arrays, meta=meta)


# ---- a whole index ------------------------------------------------------------------------


def build(
    index,
    *,
    lists: int | None = None,
    nprobe: int | None = None,
    seed: int = 0,
    on_progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Build the IVF of every month of a built index (its root folder, or an `IndexReader`)
    that lacks one with these parameters; record and return `info["ann"]`.

    A rebuild is committed as a whole: before the first month is replaced, `info["ann"]` is
    removed from index.json (atomically), and the new record is written only once every month
    holds the new build. A rebuild stopped midway therefore leaves no record — approximate
    search is refused ("run `hindcast archive embed --approx`") until a re-run finishes it,
    never served from a mix of old and new months under the old record."""
    root = Path(index) if isinstance(index, (str, os.PathLike)) else Path(index.root)
    nprobe = nprobe or NPROBE
    info = json.loads((root / INFO).read_text(encoding="utf-8"))
    months = sorted(info["months"])
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
