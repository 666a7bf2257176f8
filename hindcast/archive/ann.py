"""Approximate vector search of closed months: an IVF index per month, exact within what it probes.

A month is *closed* at t0 when it ends at or before t0 (month < month(t0)): every document in
it was created before t0, so only the edit policy filters it. Such a month may be searched
through an inverted-file index (IVF) instead of the full scan; the boundary month (month(t0))
and any month without an index keep the exact scan of `hindcast.archive.scan`.

Build (`build_month`, `build`), per month:

* Centroids: seeded, deterministic spherical k-means (float32 BLAS) **trained only on
  documents whose text was final before the month's end** (edit_us < month end: never edited,
  or edited at a known instant inside the month). Any t0 that uses the index is ≥ month end,
  so no centroid carries anything of a document at or after t0. The number of lists is a
  function of the number of training rows only.
* Every row is assigned to its nearest centroid (its own vector and the centroids only).
  Lists are stored contiguously, in list order and time order within a list: positions,
  int8 codes, scales and edit instants (`ann/` under the month's vector folder), so probing a
  list is one contiguous scan. Written to a temporary folder, then renamed (atomic); `build`
  skips months already built with the same parameters, so a re-run resumes and is idempotent
  (byte-identical files).
* Recall@10 at the default nprobe is measured on seeded probe queries (month documents plus
  noise) against the exact scan of the month, and recorded.

Search (`rank`): score the centroids, probe the best `nprobe` lists (ties to the lower list),
run the int8 first stage over the probed rows **with the edit mask inside the scan**, then the
exact float64 rescore of `scan.refine`, widened by the same error bound: the result is the
exact top-n among the probed rows (ties to the earlier position). A month whose probe yields
fewer than n eligible rows is scanned exactly instead, so top-k is never short. All months'
probed ranges (and the exact months' rows) go through one first-stage pass on the scanner's
threads. The nprobe default is a constant (not tuned on the archive's own data),
so it carries no document.

Defaults: 6·√(training rows) lists, at most 4096, and nprobe 256. Chosen at 10M documents
(`benchmarks/retrieval.py --docs 10000000`: 12 months of 833k Pushshift-shaped documents with
vectors anchored on the shipped MiniLM headline embeddings, 4096 lists per month, the 57
`markets/sample` questions at t0 in the last two months, 2 cores, a quiet machine): nprobe 256
gave p50 46 ms and recall@10 0.996 against exact filtered search (exact scan 334 ms in the
same run); 192: 43 ms, 0.993; 384: 56 ms, 1.0. The price is paid at small scale, where the
exact scan is fast anyway: at 1M documents (12 months, 1730 lists) nprobe 256 gave recall
0.9865 and 384 0.992 (exact 31 ms). The probe queries' noise (1.75 × a unit Gaussian on a unit
row: cosine ≈ 0.5 to it, like a market question to its nearest headline) makes the recorded
recall track the market questions' (0.995 recorded vs 0.9965 measured on one 416k-row month
at nprobe 384): an estimate from the month's own documents, not a guarantee.
**What a post-t0 edit changes (issue 24).** A document X created in a closed month and edited
at e ≥ t0 (or at an unknown time) has lost the text it had at t0: the archive stores only the
edited text. Under the strict policy every search hides X (invariant 2). The approximate search
at t0 is then exactly the one over the archive *as it stood at t0 without X* — as if X had never
existed — and so is the exact search; nothing else about the edit (its instant, its text, that
it happened) reaches a ranking:
* training rows are the rows final before the month's end (edit_us < month end), chosen as a
  seeded sample *by rank among them* (`kmeans`), so the training set, the sample, every
  centroid and the number of lists are the same as in the archive without X (X is not a
  training row in either), and no text written after the month's end (≤ t0) is trained on;
* every other row's list is a function of its own vector and the centroids; X's own list (from
  its edited vector) is never seen: it is masked before the first stage, and the fall-back to
  the exact scan counts eligible rows only;
* the recorded recall is measured with probe queries from training rows against the rows
  final before the month's end (`_recall`), so the index's meta is the same too.
tests/archive/test_ann.py and tests/archive/test_properties.py check this on random archives
with post-t0 edits and post-t0 documents, at every nprobe.

What cannot hold, for any index trained on the documents: equality with the archive where X was
*never edited* (X visible, with its t0 text). That archive's index would have to be computed
without X's t0 text (which the edited archive no longer has), and since any document may be
edited later, without any document's text at all — a partition that ignores the data (random
or fixed centroids), with the loss of recall that brings. Training on every row "regardless of
edit state" is not that either: it would put X's post-t0 text into every centroid (a leak of
text, not only of a fact) and would still differ from the never-edited archive whenever the
edit changed the text. The exact search has the same limit (it hides X too); see the README.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from hindcast import frozen
from hindcast.archive import layout, scan
from hindcast.errors import ArchiveIntegrityError, RetrievalError

FORMAT = "hindcast-ann/1"
NPROBE = 256
MAX_LISTS = 4096
LISTS_PER_SQRT = 6
TRAIN_PER_LIST = 32
ITERATIONS = 8
PROBE_QUERIES = 200
QUERY_NOISE = 1.75
SPLIT = 8192  # exact ranges are cut into pieces of this many rows to share them among threads
ASSIGN_CHUNK = 32_768
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
    """The best `n` (score, part index, position) over all parts, best first (ties: part,
    then position). Rows whose edit instant is ≥ `mask_from` are masked (None: none).
    A part with an index: the exact top-n of the rows of its `nprobe` best lists, or the
    exact scan of the month when those hold fewer than n eligible rows."""
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
    short = [i for i, top in enumerate(tops) if len(top) < n and plans[i].where is not None]
    if short:
        exact = scan.top_each(
            [(parts[i].vectors, parts[i].end) for i in short], q, mask_from, n, scanner
        )
        for i, top in zip(short, exact):
            tops[i] = top
    best = [(score, i, position) for i, top in enumerate(tops) for score, position in top]
    best.sort(key=lambda c: (-c[0], c[1], c[2]))
    return best[:n]


def _each(fn: Callable, items, scanner: scan.Scanner | None) -> list:
    """[fn(x) for x in items], the items dealt round-robin to the scanner's threads (the
    compiled kernels inside release the GIL); in this thread alone without a scanner."""
    items = list(items)
    workers = min(scanner.workers, len(items)) if scanner is not None else 1
    if workers < 2:
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
    if not _usable(ann, end, mask_from):
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
    limit = int(mask_from) if masked else np.iinfo(np.int64).max
    calls = [
        (plan.codes, plan.scales, q, plan.edit_us, limit, masked, out, plan.ranges)
        for plan, out in zip(plans, outs)
    ]
    total = sum(plan.size for plan in plans)
    workers = scanner.workers if scanner is not None and total >= scan.PARALLEL_ROWS else 1
    shares = _shares(plans, total, workers)
    others = [scanner.submit(_scan, calls, share) for share in shares[1:]]
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
) -> dict:
    """Build (or rebuild) the IVF of one month under `folder/ann/` and return its meta (lists,
    rows, training rows, recall@10 at `nprobe`). A month with no document final before its
    end gets no index (lists 0): it is always scanned exactly."""
    folder, nprobe = Path(folder), nprobe or NPROBE
    index = fit(vectors, created_us, edit_us, month_end_us, lists=lists, seed=seed)
    meta = index.meta | {"params": {"lists": lists, "seed": seed, "nprobe": nprobe}}
    if index.lists == 0:
        _remove(folder / "ann")
        return meta | {"recall@10": None, "probe_queries": 0}
    meta |= _recall(vectors, edit_us, index, nprobe, seed)
    _write(folder / "ann", index, meta)
    return meta


def fit(
    vectors, created_us, edit_us, month_end_us: int, *, lists: int | None = None, seed: int = 0
) -> Ann:
    """The IVF of one month, in memory: centroids trained on the rows final before
    `month_end_us` (none of them: an index of 0 lists, i.e. the exact scan)."""
    edit_us, created_us = np.asarray(edit_us), np.asarray(created_us)
    train = _training_rows(created_us, edit_us, month_end_us)
    count = _lists_for(train.size, lists)
    meta = {
        "format": FORMAT,
        "rows": int(edit_us.size),
        "trained_on": int(train.size),
        "lists": int(count),
        "month_end_us": int(month_end_us),
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


def kmeans(vectors, train: np.ndarray, lists: int, seed: int) -> np.ndarray:
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


def _nearest(x, centroids: np.ndarray) -> np.ndarray:
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
    hits = [
        _overlap(month, index, q, nprobe, end) for q in probe_queries(vectors, seed, rows=train)
    ]
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


def _overlap(month: scan.Vectors, ann: Ann, q: np.ndarray, nprobe: int, mask_from: int) -> float:
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
    params = {"lists": lists, "seed": seed, "nprobe": nprobe}
    if "ann" in info and not all(_current(root, month, params) for month in months):
        del info["ann"]
        _save(root, info)
    metas = {}
    for done, month in enumerate(months, 1):
        metas[month] = _month(root, month, params)
        if on_progress:
            on_progress(done, len(months))
    info["ann"] = summary(metas, nprobe, seed) | {"params": params}
    _save(root, info)
    return info["ann"]


def _save(root: Path, info: dict) -> None:
    frozen.write_text_atomic(root / INFO, json.dumps(info, indent=2, sort_keys=True) + "\n")


def _current(root: Path, month: str, params: dict) -> bool:
    """Whether the month's index on disk is the build `params` asks for (a month without one
    counts as current only when it needs none: no row final before its end)."""
    folder = layout.vector_chunk_dir(root, month)
    meta_path = folder / "ann" / "meta.json"
    if not meta_path.exists():
        created, edit = (
            np.load(folder / f"{n}.npy", mmap_mode="r") for n in ("created_us", "edit_us")
        )
        return not _training_rows(created, edit, month_end_us(month)).size
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    return meta.get("params") == params and meta["lists"] == _lists_for(
        meta["trained_on"], params["lists"]
    )


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


def _month(root: Path, month: str, params: dict) -> dict:
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
        month_end_us(month),
        lists=lists,
        seed=seed,
        nprobe=nprobe,
    )


def summary(metas: dict[str, dict], nprobe: int, seed: int) -> dict:
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


def month_end_us(month: str) -> int:
    """The first microsecond after `month` (YYYY-MM), UTC."""
    year, number = map(int, layout.check_month(month).split("-"))
    year, number = (year + 1, 1) if number == 12 else (year, number + 1)
    end = datetime(year, number, 1, tzinfo=timezone.utc) - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return end.days * 86_400_000_000
