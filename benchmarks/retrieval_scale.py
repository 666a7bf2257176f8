"""Time-bounded vector search at Reddit scale: exact scan vs approximate (IVF per closed month),
both through `hindcast.archive.ann.rank` on memory-mapped months, in the same run.

    python benchmarks/retrieval.py --docs 10000000 [--months 12] [--queries 200] [--nprobe N] [--lists N]
                                   [--data $TMPDIR/hindcast-bench] [--json out.json]

The load (everything cached under `--data`/<docs>-<months>m-s<seed>/, so a re-run reuses it):

1. Dumps: `benchmarks/pushshift_dumps.py` writes RS_/RC_ monthly dumps (Zipf subreddits,
   threads, edits, deletions, daily cycle, 2 GiB zstd window).
2. Documents: every dump line read back through `hindcast.archive.lines` (the streaming
   zstd reader ingest uses); `created_utc` and the edit instant by
   `hindcast.archive.pushshift.edit_of` (edited false → never, a time → that instant, unknown
   → masked at every t0), ordered per month by (created_us, id) as the index orders them.
3. Vectors (384 dims, unit): anchored on the real MiniLM (fp32) embeddings of the 46,809
   headlines shipped in `archive/sample`'s index. A submission's title *is* the headline
   `anchor_of(id)`; its vector = that headline's embedding + 0.5 × a second headline's +
   Gaussian noise (σ = 0.5/√384), normalised: cosine ≈ 0.83 to its own headline, ≈ 0.1 to a
   random other document (real MiniLM: ≈ 0.07). A comment = its thread's headline +
   `--comment-other` (0.5) × another + noise (σ = 0.7/√384): cosine ≈ 0.77 to the thread's
   headline. The 0.5 was chosen so that IVF recall against nprobe on a 50k-document month
   (447 lists) follows the curve of the real 46,809 headline embeddings with the same queries
   (recall@10 0.977 / 0.986 / 0.995 at nprobe 48 / 96 / 192, real: 0.979 / 0.998 / 1.0); an
   even mix (`--comment-other 1`, i.e. 0.75/0.75) is harder (0.886 / 0.933 / 0.979). Written in
   chunks into memory-mapped `.npy` files per month, int8 codes by `scan.quantize`, the IVF by
   `ann_month.build_month` — the code the index uses.
4. Queries: the market questions of `markets/sample` embedded by the same MiniLM (fp32),
   cycled; t0 in the last two months (so a search covers 85–100% of the documents), 40% of
   them exactly on a document's creation instant.
5. Ground truth: one batched streaming pass over every month (float32 GEMM of all queries
   against 131,072 rows at a time, the t0 cut and the edit mask applied, the best 32 per query
   kept), then the candidates re-scored by the index's own float64 kernel and ordered by
   (score desc, month, position) — exact filtered search. A query whose 32nd float32 score is
   within 1e-4 of its 10th exact score is counted as `uncertain` (expected 0).

Partitions (`--partitions codebook,data`, both in the same run): `codebook` is the default
build — every row in the list of its nearest fixed-codebook centroid (`hindcast.archive.codebook`,
trained here on the anchor table, i.e. the sample headlines under the same model, 1024 lists
or `--codebook-lists`); `data` is the data-trained baseline (`ann_month.build_month` without a
codebook, kept under `month=…/data/`). HINDCAST_BENCH_ANCHORS names another build of the
sample headlines' vectors (a folder with vectors/month=*/vectors.npy) when the fp32 index is
not built.

Search: per query, parts = every month ≤ month(t0); the boundary month cut at
searchsorted(created_us, t0). exact = every part with ann=None (the provably exact two-stage
scan, the baseline); approx = closed months through their Ann, the boundary month exact.
Interleaved in blocks of 20 queries, the order alternating; 5 warm-up queries each; the
scanner's threads as the index uses them. Latency = `ann.rank` only (not the query embedding).
Peak RSS is `getrusage` maxrss, which counts the resident pages of memory-mapped files (the
int8 codes a search scans, vectors written while building), plus anonymous/file RSS
(`/proc/self/status`) after each phase.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import pushshift_dumps as gen

K, DIMS, TRUTH_POOL, TRUTH_CHUNK, VECTOR_CHUNK = 10, 384, 32, 131_072, 65_536
INT64_MIN, INT64_MAX = np.iinfo(np.int64).min, np.iinfo(np.int64).max
SAMPLE_INDEX = ROOT / "archive" / "sample" / "index"
MARKETS = ROOT / "markets" / "sample" / "forecastbench" / "markets.jsonl"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# ---- 1-2. dumps and documents -------------------------------------------------------------
def documents(dumps: Path, label: str, headlines: int, seed: int) -> dict:
    """created_us, edit_us, kind (0 comment t1_, 1 submission t3_), and the two anchors of
    every document of one month, in (created_us, id) order, read from its RS_ and RC_ dumps."""
    from hindcast.archive.lines import numbered_lines

    cols = {"created": [], "edit": [], "kind": [], "number": [], "thread": []}
    for kind, prefix in ((1, "RS"), (0, "RC")):
        for _, raw in numbered_lines(dumps / f"{prefix}_{label}.zst"):
            _add(cols, json.loads(raw), kind, _edit_us)
    arrays = {k: np.array(v, dtype=np.int64) for k, v in cols.items()}
    order = np.lexsort((arrays["number"], arrays["kind"] == 1, arrays["created"]))  # "t1_" < "t3_"
    arrays = {k: v[order] for k, v in arrays.items()}
    arrays["main"] = gen.anchor_of(arrays["thread"], headlines, seed)
    arrays["other"] = gen.anchor_of(arrays["number"] * 2 + arrays["kind"], headlines, seed + 1)
    return arrays


def _edit_us(row: dict) -> int:
    """The index's edit instant of a dump row: its reader's `edit_of`, encoded
    as `docs.edit_us` does."""
    from hindcast.archive import docs, pushshift

    state, edited_at = pushshift.edit_of(row)
    return (
        INT64_MIN
        if state == "never"
        else INT64_MAX
        if state == "unknown"
        else docs.micros(edited_at)
    )


def _add(cols: dict, row: dict, kind: int, edit_us) -> None:
    number = int(row["id"], 36)
    cols["created"].append(int(row["created_utc"]) * 1_000_000)
    cols["edit"].append(edit_us(row))
    cols["kind"].append(kind)
    cols["number"].append(number)
    cols["thread"].append(number if kind else int(row["link_id"][3:], 36))


# ---- 3. vectors ---------------------------------------------------------------------------
def anchors() -> np.ndarray:
    """The real MiniLM vectors of the archive/sample headlines: the sample's fp32 index when
    built (`hindcast archive embed --archive archive/sample --embedder minilm-fp32`), else the
    default embedder's bf16 vectors shipped with the sample (stored float16)."""
    if os.environ.get("HINDCAST_BENCH_ANCHORS"):  # another build of the same headlines' vectors
        found = [Path(os.environ["HINDCAST_BENCH_ANCHORS"])]
    else:
        found = sorted(SAMPLE_INDEX.glob("*/all-MiniLM-L6-v2"))
    shipped = sorted((ROOT / "archive" / "sample" / "vectors").glob("*/*/vectors.npy"))
    if not found and shipped:
        return np.ascontiguousarray(np.load(shipped[0]), dtype=np.float32)
    if not found:
        raise SystemExit("anchors: neither the sample's fp32 MiniLM index nor its shipped vectors")
    return np.concatenate(
        [np.load(m / "vectors.npy") for m in sorted((found[0] / "vectors").glob("month=*"))]
    )


def write_vectors(
    path: Path, doc: dict, table: np.ndarray, seed: int, month: int, other: float
) -> np.ndarray:
    """The month's unit vectors, made and written VECTOR_CHUNK rows at a time into a
    memory-mapped .npy (atomically: a temporary file, then a rename); returns the map."""
    tmp = path.with_name(path.stem + ".tmp.npy")
    out = np.lib.format.open_memmap(
        tmp, mode="w+", dtype=np.float32, shape=(doc["created"].size, DIMS)
    )
    for chunk, start in enumerate(range(0, out.shape[0], VECTOR_CHUNK)):
        rows = slice(start, start + VECTOR_CHUNK)
        out[rows] = mix(
            table,
            doc["main"][rows],
            doc["other"][rows],
            doc["kind"][rows],
            np.random.default_rng([seed, month, chunk]),
            other,
        )
    out.flush()
    del out
    tmp.replace(path)
    return np.load(path, mmap_mode="r")


def mix(table, main, other, kind, rng, comment_other: float = 0.5) -> np.ndarray:
    """Unit vectors: submissions 1 × main + 0.5 × other headline, comments 1 × main +
    `comment_other` × other (both scaled by 0.75 when comment_other is 1: an
    even mix), plus noise."""
    sub = (kind == 1)[:, None]
    even = comment_other == 1.0
    w_main = np.where(sub, 1.0, 0.75 if even else 1.0).astype(np.float32)
    w_other = np.where(sub, 0.5, 0.75 if even else comment_other).astype(np.float32)
    sigma = np.where(sub, 0.5, 0.7).astype(np.float32) / np.float32(np.sqrt(DIMS))
    v = (
        w_main * table[main]
        + w_other * table[other]
        + sigma * rng.standard_normal((main.size, DIMS), dtype=np.float32)
    )
    return v / np.linalg.norm(v, axis=1, keepdims=True)


class Month:
    """One month's memory-mapped arrays (vectors, codes, scales, created_us, edit_us) and Ann."""

    def __init__(self, folder: Path, label: str, end_us: int):
        from hindcast.archive import ann, scan

        self.folder, self.label, self.end_us = folder, label, end_us
        a = {
            n: np.load(folder / f"{n}.npy", mmap_mode="r")
            for n in ("vectors", "codes", "scales", "created_us", "edit_us")
        }
        self.created, self.edit = np.asarray(a["created_us"]), np.asarray(a["edit_us"])
        self.vectors = scan.Vectors(
            a["vectors"], a["codes"], a["scales"], self.edit, float(np.max(a["scales"]))
        )
        self.ann = ann.load_month(folder)  # the fixed codebook's (the default build)
        self.ann_data = ann.load_month(folder / "data")  # the data-trained baseline


def build_month(
    folder: Path,
    dumps: Path,
    label: str,
    index: int,
    table: np.ndarray,
    seed: int,
    times: dict,
    other: float,
) -> None:
    """The month's arrays (skipped when present), as the index writes them."""
    from hindcast.archive import scan

    if (folder / "done").exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    doc = documents(dumps, label, table.shape[0], seed)
    times["read_dumps_s"] += time.perf_counter() - start
    start = time.perf_counter()
    vectors = write_vectors(folder / "vectors.npy", doc, table, seed, index, other)
    codes, scales = scan.quantize(vectors)
    for name, array in (
        ("codes", codes),
        ("scales", scales),
        ("created_us", doc["created"]),
        ("edit_us", doc["edit"]),
    ):
        np.save(folder / f"{name}.tmp.npy", array)
        (folder / f"{name}.tmp.npy").replace(folder / f"{name}.npy")
    (folder / "done").write_text(f"{doc['created'].size}\n")
    times["vectors_codes_s"] += time.perf_counter() - start


def build_ann(month: Month, lists: int | None, nprobe: int | None, seed: int) -> tuple[dict, float]:
    """The data-trained baseline: `ann_month.build_month` without a codebook on the memory-mapped
    month (under `data/`), unless it has an index of the same seed and number of lists
    (`lists`, or ann's default for its training rows): the nprobe an index was built with only
    sets the build-time recall it records, searches choose theirs."""
    from hindcast.archive import ann, ann_month

    built = month.ann_data
    if (
        built is not None
        and built.meta["params"].get("seed") == seed
        and built.lists
        == (
            min(lists, built.meta["trained_on"])
            if lists
            else ann_month.default_lists(built.meta["trained_on"])
        )
    ):
        return built.meta, 0.0
    start = time.perf_counter()
    meta = ann_month.build_month(
        month.folder / "data",
        month.vectors.vectors,
        month.created,
        month.edit,
        month.end_us,
        lists=lists,
        seed=seed,
        nprobe=nprobe,
    )
    month.ann_data = ann.load_month(month.folder / "data")
    return meta, time.perf_counter() - start


def build_codebook_ann(month: Month, book, recall: dict) -> tuple[dict, float]:
    """The default build: every row in the list of its nearest fixed-codebook centroid."""
    from hindcast.archive import ann, ann_month

    if month.ann is not None and month.ann.meta.get("codebook") == book.id:
        return month.ann.meta, 0.0
    start = time.perf_counter()
    meta = ann_month.build_month(
        month.folder,
        month.vectors.vectors,
        month.created,
        month.edit,
        month.end_us,
        codebook=book,
        recall=recall,
    )
    month.ann = ann.load_month(month.folder)
    return meta, time.perf_counter() - start


# ---- 4. queries ---------------------------------------------------------------------------
def query_vectors(cache: Path) -> tuple[list[str], np.ndarray]:
    """The markets/sample questions and their MiniLM (fp32) vectors (cached by text hash)."""
    questions = [
        json.loads(line)["question"]
        for line in MARKETS.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    key = hashlib.sha256("\n".join(questions).encode()).hexdigest()[:16]
    path = cache / f"questions-minilm-fp32-{key}.npy"
    if not path.exists():
        from hindcast.archive.embed import get_embedder

        np.save(
            path,
            np.ascontiguousarray(get_embedder("minilm-fp32").embed(questions), dtype=np.float32),
        )
    return questions, np.load(path)


def make_queries(
    months: list[Month], vectors: np.ndarray, count: int, seed: int
) -> list[tuple[np.ndarray, int, int]]:
    """(vector, t0_us, question number): t0 in the last two months, 40% on a document's instant."""
    rng = np.random.default_rng(seed + 2)
    late = months[-2:] if len(months) > 1 else months
    lo, hi = int(late[0].created[0]), months[-1].end_us
    order = rng.permutation(vectors.shape[0])
    out = []
    for i in range(count):
        if rng.random() < 0.4:
            m = late[int(rng.integers(len(late)))]
            t0 = int(m.created[int(rng.integers(m.created.size))])
        else:
            t0 = int(rng.integers(lo, hi))
        number = int(order[i % order.size])
        out.append((vectors[number], t0, number))
    return out


# ---- 5. ground truth ----------------------------------------------------------------------
def ground_truth(
    months: list[Month], queries
) -> tuple[list[list[tuple[int, int]]], int, list[int]]:
    """Exact filtered top-K (month, position) of every query: one streaming pass over all months."""
    from hindcast.archive import _kernel

    q = np.stack([v for v, _, _ in queries]).astype(np.float32)
    t0 = np.array([t for _, t, _ in queries], dtype=np.int64)
    pool = [[] for _ in queries]  # (float32 score, month, position)
    for mi, month in enumerate(months):
        for start in range(0, month.created.size, TRUTH_CHUNK):
            _truth_chunk(month, mi, start, q, t0, pool)
    truth, uncertain, eligible = [], 0, []
    for qi, cands in enumerate(pool):
        cands.sort(key=lambda c: -c[0])
        cands = cands[:TRUTH_POOL]
        exact = []
        for score32, mi, pos in cands:
            out = np.empty(1, dtype=np.float64)
            _kernel.exact(
                months[mi].vectors.vectors,
                np.array([pos], dtype=np.int64),
                q[qi].astype(np.float64),
                out,
            )
            exact.append((float(out[0]), mi, pos))
        exact.sort(key=lambda c: (-c[0], c[1], c[2]))
        if len(cands) == TRUTH_POOL and len(exact) >= K and cands[-1][0] + 1e-4 >= exact[K - 1][0]:
            uncertain += 1
        truth.append([(mi, pos) for _, mi, pos in exact[:K]])
        eligible.append(len(cands))
    return truth, uncertain, eligible


def cached_truth(folder: Path, months: list[Month], queries):
    """`ground_truth`, kept beside the months (keyed by the queries and the months' sizes), so a
    re-run measures the search in a fresh process (its own peak RSS) without the pass."""
    key = hashlib.sha256(
        b"".join(v.tobytes() + t.to_bytes(8, "little", signed=True) for v, t, _ in queries)
        + str([m.created.size for m in months]).encode()
    ).hexdigest()[:16]
    path = folder / f"truth-{key}.json"
    if path.exists():
        saved = json.loads(path.read_text())
        return (
            [[tuple(x) for x in t] for t in saved["truth"]],
            saved["uncertain"],
            saved["eligible"],
        )
    truth, uncertain, eligible = ground_truth(months, queries)
    path.write_text(json.dumps({"truth": truth, "uncertain": uncertain, "eligible": eligible}))
    return truth, uncertain, eligible


def _truth_chunk(
    month: Month, mi: int, start: int, q: np.ndarray, t0: np.ndarray, pool: list
) -> None:
    stop = min(start + TRUTH_CHUNK, month.created.size)
    live = np.flatnonzero(t0 > month.created[start])
    if live.size == 0:
        return
    scores = np.asarray(month.vectors.vectors[start:stop], dtype=np.float32) @ q[live].T
    created, edit = month.created[start:stop, None], month.edit[start:stop, None]
    scores[(created >= t0[live]) | (edit >= t0[live])] = -np.inf
    take = min(TRUTH_POOL, scores.shape[0])
    top = (
        np.argpartition(-scores, take - 1, axis=0)[:take]
        if scores.shape[0] > take
        else np.broadcast_to(np.arange(scores.shape[0])[:, None], scores.shape)
    )
    for column, qi in enumerate(live.tolist()):
        rows = top[:, column]
        best = scores[rows, column]
        keep = best > -np.inf
        pool[qi].extend(
            zip(best[keep].tolist(), [mi] * int(keep.sum()), (rows[keep] + start).tolist())
        )
        if len(pool[qi]) > 4 * TRUTH_POOL:
            pool[qi].sort(key=lambda c: -c[0])
            del pool[qi][TRUTH_POOL:]


# ---- search ---------------------------------------------------------------------------------
def parts_for(months: list[Month], t0: int, partition: str | None):
    """Parts of a search at t0: closed months through their index of `partition` ("codebook"
    or "data"; None: none, the exact scan)."""
    from hindcast.archive.ann import Part

    parts = []
    for m in months:
        if m.created.size == 0 or m.created[0] >= t0:
            break
        closed = m.end_us <= t0
        end = m.created.size if closed else int(np.searchsorted(m.created, t0, side="left"))
        index = {"codebook": m.ann, "data": m.ann_data}.get(partition) if closed else None
        parts.append(Part(m.vectors, end, index))
    return parts


class Tally:
    """One mode: `exact`, or one partition ("codebook", "data") at one nprobe."""

    def __init__(self, name: str, nprobe: int, partition: str | None = None):
        self.name, self.nprobe, self.latencies, self.recalls = name, nprobe, [], []
        self.partition = partition
        self.leaks = self.short = self.identical = 0

    def run(self, months, query, truth, eligible, scanner) -> None:
        from hindcast.archive import ann

        q, t0, _ = query
        parts = parts_for(months, t0, self.partition)
        start = time.perf_counter()
        got = ann.rank(parts, q, t0, K, nprobe=self.nprobe, scanner=scanner)
        self.latencies.append((time.perf_counter() - start) * 1000)
        # part i is month i (parts start at the first month and stop at month(t0))
        found = [(i, p) for _, i, p in got]
        self.leaks += sum(
            1 for i, p in found if months[i].created[p] >= t0 or months[i].edit[p] >= t0
        )
        self.short += len(found) < min(K, eligible)
        self.identical += found == truth
        self.recalls.append(len(set(found) & set(truth)) / len(truth) if truth else 1.0)

    def result(self) -> dict:
        lat = np.array(self.latencies)
        return {
            "mode": self.name,
            "partition": self.partition,
            "nprobe": self.nprobe if self.name != "exact" else None,
            "queries": len(lat),
            "p50_ms": round(float(np.percentile(lat, 50)), 2),
            "p95_ms": round(float(np.percentile(lat, 95)), 2),
            "p99_ms": round(float(np.percentile(lat, 99)), 2),
            "mean_ms": round(float(lat.mean()), 2),
            "recall@10": round(float(np.mean(self.recalls)), 4),
            "recall@10_min": round(float(np.min(self.recalls)), 2),
            "leaks": self.leaks,
            "short": self.short,
            "identical_to_truth": self.identical,
        }


def measure(
    months,
    queries,
    truth,
    eligible,
    nprobes: list[int],
    partitions: tuple[str, ...] = ("data",),
    block: int = 20,
) -> list[dict]:
    """Every mode over the same queries, in blocks of `block` queries, the order of modes
    rotating from block to block (background load on a shared machine hits them alike). A mode
    is named approx@nprobe when one partition is measured, else partition@nprobe."""
    from hindcast.archive import scan

    def name(partition: str, n: int) -> str:
        if len(partitions) > 1:
            return f"{partition}@{n}"
        return "approx" if len(nprobes) == 1 else f"approx@{n}"

    def tallies():
        return [Tally("exact", 1)] + [
            Tally(name(partition, n), n, partition) for partition in partitions for n in nprobes
        ]

    modes = tallies()
    with scan.Scanner() as scanner:
        for qi in range(min(5, len(queries))):  # warm-up, not counted
            for t in tallies():
                t.run(months, queries[qi], truth[qi], eligible[qi], scanner)
        for start in range(0, len(queries), block):
            turn = (start // block) % len(modes)
            for t in modes[turn:] + modes[:turn]:
                for qi in range(start, min(start + block, len(queries))):
                    t.run(months, queries[qi], truth[qi], eligible[qi], scanner)
    return [t.result() for t in modes]


# ---- memory and disk ----------------------------------------------------------------------
def memory() -> dict:
    status = dict(
        line.split(":", 1)
        for line in Path("/proc/self/status").read_text().splitlines()
        if ":" in line
    )
    mb = lambda key: round(int(status.get(key, "0 kB").split()[0]) / 1024)
    return {
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "hwm_mb": mb("VmHWM"),
        "rss_anon_mb": mb("RssAnon"),
        "rss_file_mb": mb("RssFile"),
    }


def reset_peak() -> bool:
    """Reset VmHWM (Linux: write 5 to clear_refs), so the next phase's peak is its own."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def disk(months: list[Month]) -> dict:
    def size(paths):
        return sum(p.stat().st_size for p in paths if p.is_file())

    exact = size(p for m in months for p in m.folder.glob("*.npy"))
    approx = size(p for m in months for p in (m.folder / "ann").glob("*"))
    vectors = size(m.folder / "vectors.npy" for m in months)
    return {
        "exact_arrays_gb": round(exact / 1e9, 2),
        "of_which_float32_vectors_gb": round(vectors / 1e9, 2),
        "ann_gb": round(approx / 1e9, 2),
        "index_total_gb": round((exact + approx) / 1e9, 2),
    }


# ---- the run ---------------------------------------------------------------------------------
def code_identity() -> dict:
    """Which search code ran: the checkout's commit and hashes of the modules measured."""
    import subprocess

    from hindcast.archive import _kernel, ann, scan

    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return {
        "commit": head.stdout.strip() or None,
        **{
            Path(m.__file__).name: hashlib.sha256(Path(m.__file__).read_bytes()).hexdigest()[:12]
            for m in (ann, scan, _kernel)
        },
        "ann_defaults": {
            "NPROBE": ann.NPROBE,
            "MAX_LISTS": getattr(ann, "MAX_LISTS", None),
            "LISTS_PER_SQRT": getattr(ann, "LISTS_PER_SQRT", None),
        },
    }


def run(args) -> dict:
    from hindcast.archive import ann

    code = code_identity()

    data = Path(args.data) / f"{args.docs}-{args.months}m-s{args.seed}"
    months_dir = data / ("months" if args.comment_other == 0.5 else f"months-c{args.comment_other}")
    doc_table = np.load(Path(args.doc_vectors) / "vectors.npy") if args.doc_vectors else None
    if doc_table is not None:  # non-anchored: documents mixed from these vectors, not the headlines
        months_dir = months_dir.with_name(f"{months_dir.name}-docs{doc_table.shape[0]}")
    data.mkdir(parents=True, exist_ok=True)
    times = {
        "generate_dumps_s": 0.0,
        "read_dumps_s": 0.0,
        "vectors_codes_s": 0.0,
        "ann_build_s": 0.0,
    }
    cfg = gen.Config(docs=args.docs, months=args.months, start=args.start, seed=args.seed)
    dumps = Path(args.dumps) if args.dumps else data / "dumps"
    start = time.perf_counter()
    manifest = gen.generate(cfg, dumps, log=log)
    times["generate_dumps_s"] = time.perf_counter() - start
    log(
        f"dumps ready ({sum(f['bytes'] for f in manifest['files'].values()) / 1e9:.2f} GB "
        "compressed)"
    )
    table = anchors()
    if table.shape[0] != manifest["headlines"]:
        raise SystemExit(
            f"anchors: {table.shape[0]} headline vectors but the dumps used "
            f"{manifest['headlines']} titles"
        )
    labels = gen.month_starts(cfg)
    partitions = args.partitions.split(",")
    nprobes = [int(n) for n in str(args.nprobe or ann.NPROBE).split(",")]
    start = time.perf_counter()
    book, book_recall = the_codebook(Path(args.data), table, args.codebook_lists, nprobes[0])
    times["codebook_s"] = time.perf_counter() - start
    log(f"codebook {book.id}: {book.lists} lists, reference recall@10 {book_recall['recall@10']}")
    months, ann_meta, book_meta = [], {}, {}
    times["ann_codebook_build_s"] = 0.0
    for index, (label, _, end) in enumerate(labels):
        folder = months_dir / f"month={label}"
        rows = table if doc_table is None else doc_table
        build_month(folder, dumps, label, index, rows, args.seed, times, args.comment_other)
        month = Month(folder, label, end * 1_000_000)
        book_meta[label], took_book = build_codebook_ann(month, book, book_recall)
        times["ann_codebook_build_s"] += took_book
        took = 0.0
        if "data" in partitions:
            ann_meta[label], took = build_ann(month, args.lists, None, 0)
            times["ann_build_s"] += took
        months.append(month)
        log(
            f"{label}: {month.created.size:,} docs, codebook ann {took_book:.0f} s; data-trained "
            f"lists {ann_meta.get(label, {}).get('lists')}, build recall@10 "
            f"{ann_meta.get(label, {}).get('recall@10')}, ann {took:.0f} s"
        )
    build_memory = memory()
    questions, qvec = query_vectors(Path(args.data))
    queries = make_queries(months, qvec, args.queries, args.seed)
    start = time.perf_counter()
    truth, uncertain, eligible = cached_truth(months_dir, months, queries)
    times["ground_truth_s"] = time.perf_counter() - start
    log(f"ground truth in {times['ground_truth_s']:.0f} s ({uncertain} uncertain)")
    reset_peak()
    load_before = os.getloadavg()
    results = measure(months, queries, truth, eligible, nprobes, tuple(partitions))
    search_memory = memory()
    times["load_average_during_search"] = [
        round(x, 2) for x in (load_before[0], os.getloadavg()[0])
    ]
    exact = next(r for r in results if r["mode"] == "exact")
    for r in results:
        r["p50_ratio_to_exact"] = round(r["p50_ms"] / exact["p50_ms"], 3)
    return {
        "docs": int(sum(m.created.size for m in months)),
        "months": args.months,
        "queries": len(queries),
        "questions": len(questions),
        "nprobe": nprobes,
        "lists": {k: v["lists"] for k, v in ann_meta.items()},
        "build_recall@10": {k: v["recall@10"] for k, v in ann_meta.items()},
        "codebook": book.meta | {"lists": book.lists, "reference_recall@10": book_recall},
        "truth_uncertain": uncertain,
        "results": results,
        "times_s": {k: round(v, 1) if isinstance(v, float) else v for k, v in times.items()},
        "disk": disk(months),
        "dumps_gb": round(sum(f["bytes"] for f in manifest["files"].values()) / 1e9, 2),
        "comment_other": args.comment_other,
        "doc_vectors": None if doc_table is None else f"{args.doc_vectors} ({doc_table.shape[0]})",
        "code": code,
        "memory_after_build": build_memory,
        "memory_search_phase": search_memory,
        "data": str(data),
        "cpus": len(os.sched_getaffinity(0)),
    }


def the_codebook(data: Path, table: np.ndarray, lists: int | None, nprobe: int):
    """The fixed codebook as the index trains it (`codebook.train`: seeded k-means) on the
    shipped reference corpus embedded by the vectors' model — here the anchor table itself:
    the same 46,809 sample headlines embedded by the same model (in the sample index's order
    rather than by id), which saves embedding them again. Cached under `data/`; with its
    recall@10 on that corpus at `nprobe`."""
    from hindcast.archive import ann_month, codebook

    lists = lists or codebook.LISTS
    folder = data / f"codebook-{hashlib.sha256(table.tobytes()).hexdigest()[:12]}-{lists}"
    book = codebook.load(folder)
    if book is None:
        book = codebook.train(table, {"reference": "anchors", "embedder": "anchors"}, lists=lists)
        codebook.save(folder, book, table)
    return book, ann_month.measured_codebook_recall(folder, book, nprobe)


def report(out: dict) -> None:
    print(
        f"{out['docs']:,} documents over {out['months']} months, {out['queries']} queries "
        f"({out['questions']} market questions), data-trained IVF lists per month "
        f"{sorted(set(out['lists'].values()))}, fixed codebook {out['codebook']['id']} of "
        f"{out['codebook']['lists']} lists"
    )
    for r in out["results"]:
        print(
            f"  {r['mode']:14s} p50 {r['p50_ms']:8.2f} ms  p95 {r['p95_ms']:8.2f} p99 {r['p99_ms']:8.2f} ms  ratio {r['p50_ratio_to_exact']:5.3f}  "
            f"recall@10 {r['recall@10']:.4f} (min {r['recall@10_min']})  leaks {r['leaks']}  short {r['short']}  "
            f"identical to truth {r['identical_to_truth']}/{r['queries']}"
        )
    print(f"  build: {out['times_s']}")
    print(f"  disk: {out['disk']}, dumps {out['dumps_gb']} GB")
    print(
        f"  memory after build: {out['memory_after_build']}; search phase: "
        f"{out['memory_search_phase']}"
    )
    print(
        f"  ground truth uncertain: {out['truth_uncertain']}; data in {out['data']} (delete "
        "with rm -rf)"
    )


def add_arguments(parser) -> None:
    parser.add_argument("--months", type=int, default=12)
    parser.add_argument("--start", default="2024-01")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--nprobe",
        default=None,
        help="lists probed per closed month, or a comma list (each measured in the same run); "
        "default ann.NPROBE",
    )
    parser.add_argument(
        "--lists",
        type=int,
        default=None,
        help="data-trained baseline: IVF lists per month (default: ann's rule)",
    )
    parser.add_argument(
        "--codebook-lists",
        type=int,
        default=None,
        help="lists of the fixed codebook (default: codebook.LISTS)",
    )
    parser.add_argument(
        "--partitions",
        default="codebook,data",
        help="approximate partitions measured in the same run: codebook (the default build), "
        "data (the data-trained baseline)",
    )
    parser.add_argument(
        "--data",
        default=os.environ.get(
            "HINDCAST_BENCH_DATA", str(Path(tempfile.gettempdir()) / "hindcast-bench")
        ),
        help="where dumps and memory-mapped months are kept (reused by a re-run)",
    )
    parser.add_argument(
        "--dumps", default=None, help="an existing dump folder of the same arguments"
    )
    parser.add_argument(
        "--comment-other",
        type=float,
        default=0.5,
        help="weight of a comment's second (random) headline; 1 = an even mix (harder for IVF)",
    )

    parser.add_argument(
        "--doc-vectors",
        default=None,
        help="a folder with vectors.npy (benchmarks/reddit_texts.py): documents are mixed from "
        "these instead of the headline anchors (non-anchored; the codebook stays the headlines')",
    )


def main(args) -> None:
    out = run(args)
    report(out)
    probes = "-".join(map(str, out["nprobe"]))
    path = (
        args.json
        or Path(out["data"]) / f"results-q{out['queries']}-nprobe{probes}-lists{args.lists}.json"
    )
    Path(path).write_text(json.dumps(out, indent=2) + "\n")
    log(f"results → {path}")
    if args.clean:
        shutil.rmtree(out["data"], ignore_errors=True)
