"""Time-bounded vector retrieval at scale: latency, recall@10 and leaks, against an exact
scan measured in the same run.

    python benchmarks/retrieval.py --docs 10000000 [--months 12] [--nprobe N] [--lists N]   # the scale benchmark
    python benchmarks/retrieval.py --docs 100000 --variants legacy [--queries 200] [--json out.json]

Without `--variants` (and without `--real-index`): the scale benchmark of
`benchmarks/retrieval_scale.py` — Pushshift-shaped dumps from `benchmarks/pushshift_dumps.py`,
vectors anchored on real MiniLM headline embeddings, memory-mapped months built with the
index's own code, exact scan vs approximate (IVF per closed month) through
`hindcast.archive.ann.rank`, recall@10 against a streaming exact ground truth, leaks, short
top-k, build time, index size, peak RSS (see that module's docstring). What follows is the
earlier in-memory comparison, run with `--variants`.

`--real-index` also reads market questions from the development data beside the checkout,
`../shared/data/polymarket/markets.jsonl` (or `HINDCAST_SHARED_DATA`); without it that
mode says so and exits 0 without measuring. The synthetic default needs nothing.

Synthetic archive (384 dims, unit vectors): 256 topics of Zipf popularity, each document
a noisy copy of its topic (cosine ≈ 0.65 to it), created over 24 months with a daily
cycle and minute resolution (many exact ties); 5% edited 0–30 days later, 2% edited at an
unknown time. Queries are noisy topic vectors; 40% of t0s are exactly a document's
creation instant. Ground truth = exact filtered search (created < t0, strict edit policy).

Variants
  numpy_exact       the baseline: one time-sorted float32 matrix, prefix up to t0, edit mask, argpartition
  numpy_exact_einsum  the same scan with einsum instead of BLAS `@` (what the retriever uses per month)
  hindcast          TimeBoundRetriever(mode="vector") on a real built index: per month, an int8 first-stage
                    scan (numba) and an exact float64 rescore of the candidates, provably exact (scan.py)
  lance_flat        LanceDB brute force, prefilter `created_us < t0 AND edit_us < t0`, BTREE on created_us
  lance_hnsw        LanceDB IVF_HNSW_SQ (cosine) + refine_factor 10 + the same prefilter + BTREE
  numpy_pca_rerank[:D:C]  candidate: the same prefix scan in a D-dim PCA projection (default 96),
                    top C (default 200) reranked exactly

All variants run interleaved (blocks of 20 queries through every variant in turn, the order
rotating), so background load on a shared machine hits them alike; ratios are against
numpy_exact from the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DIMS, TOPICS, MONTHS, K = 384, 256, 24, 10
SHARED_DATA = Path(
    os.environ.get("HINDCAST_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
START_US = 1_704_067_200 * 1_000_000  # 2024-01-01
MONTH_US = 30 * 86_400 * 1_000_000


def synthetic(n: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    centroids = _unit(rng.standard_normal((TOPICS, DIMS), dtype=np.float32))
    popularity = 1.0 / np.arange(1, TOPICS + 1)
    topic = rng.choice(TOPICS, size=n, p=popularity / popularity.sum())
    vectors = _unit(centroids[topic] + 0.06 * rng.standard_normal((n, DIMS), dtype=np.float32))
    day = rng.integers(0, MONTHS * 30, size=n)
    minute = np.clip(rng.normal(14 * 60, 240, size=n), 0, 1439).astype(np.int64)
    created = START_US + (day * 1440 + minute) * 60_000_000
    order = np.lexsort((np.arange(n), created))
    edit = _edits(rng, created[order])
    return {
        "vectors": vectors[order],
        "created": created[order],
        "edit": edit,
        "topic": topic[order],
        "centroids": centroids,
    }


def _edits(rng, created):
    roll = rng.random(created.size)
    edit = np.full(created.size, np.iinfo(np.int64).min, dtype=np.int64)
    later = roll < 0.05
    edit[later] = created[later] + rng.integers(0, 30 * 86_400, later.sum()) * 1_000_000
    edit[(roll >= 0.05) & (roll < 0.07)] = np.iinfo(np.int64).max
    return edit


def _unit(m):
    return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


def queries(data: dict, count: int, seed: int = 1) -> list[tuple[np.ndarray, int]]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        q = _unit(
            (data["centroids"][rng.integers(TOPICS)] + 0.06 * rng.standard_normal(DIMS)).astype(
                np.float32
            )[None]
        )[0]
        exact = rng.random() < 0.4
        t0 = (
            int(data["created"][rng.integers(data["created"].size)])
            if exact
            else int(rng.integers(START_US + MONTH_US // 2, START_US + MONTHS * MONTH_US))
        )
        out.append((q, t0))
    return out


def real(index_root: Path, count: int, seed: int = 2) -> tuple[dict, list]:
    """A built MiniLM index (e.g. of the shared headlines) and market questions as queries."""
    from hindcast.archive.embed import MiniLMEmbedder

    months = sorted(p for p in (index_root / "vectors").glob("month=*"))
    data = {
        name: np.concatenate([np.load(m / f"{file}.npy") for m in months])
        for name, file in (("vectors", "vectors"), ("created", "created_us"), ("edit", "edit_us"))
    }
    markets = SHARED_DATA / "polymarket" / "markets.jsonl"
    if not markets.exists():
        print(
            f"skipped: --real-index reads market questions from {markets}, the development data "
            "beside the checkout (not shipped; set HINDCAST_SHARED_DATA to its data folder)",
            file=sys.stderr,
        )
        raise SystemExit(0)
    rows = [
        json.loads(line)
        for line in markets.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    rng = np.random.default_rng(seed)
    picked = rng.choice(len(rows), size=count, replace=False)
    vectors = MiniLMEmbedder().embed([rows[i]["question"] for i in picked])
    lo, hi = int(data["created"][data["created"].size // 20]), int(data["created"][-1])
    return data, [(v, int(rng.integers(lo, hi))) for v in vectors]


# ---- the baseline and ground truth ------------------------------------------------------
def numpy_exact(data: dict, einsum: bool = False):
    """`@` (BLAS gemv, as in STACK.md), or einsum (single-threaded: steadier
    on a loaded machine)."""
    vectors, created, edit = data["vectors"], data["created"], data["edit"]

    def search(q, t0):
        end = int(np.searchsorted(created, t0, side="left"))
        scores = np.einsum("ij,j->i", vectors[:end], q) if einsum else vectors[:end] @ q
        scores[edit[:end] >= t0] = -np.inf
        top = np.argpartition(-scores, min(K, end) - 1)[:K] if end > K else np.arange(end)
        top = top[np.argsort(-scores[top])]
        return [int(i) for i in top if scores[i] > -np.inf]

    return search


def numpy_pca_rerank(data: dict, dims: int = 96, candidates: int = 200):
    """Two-stage exact-rerank candidate: scan the t0 prefix in a PCA projection, rerank exactly."""
    vectors, created, edit = data["vectors"], data["created"], data["edit"]
    sample = vectors[:: max(1, vectors.shape[0] // 20_000)]
    basis = np.linalg.svd(sample - sample.mean(0), full_matrices=False)[2][:dims].T.astype(
        np.float32
    )
    projected = np.ascontiguousarray(vectors @ basis)

    def search(q, t0):
        end = int(np.searchsorted(created, t0, side="left"))
        rough = np.einsum("ij,j->i", projected[:end], q @ basis)
        rough[edit[:end] >= t0] = -np.inf
        pool = (
            np.argpartition(-rough, min(candidates, end) - 1)[:candidates]
            if end > candidates
            else np.arange(end)
        )
        pool = pool[rough[pool] > -np.inf]
        exact = vectors[pool] @ q
        return [int(i) for i in pool[np.argsort(-exact)][:K]]

    return search


# ---- hindcast's retriever on a real index ----------------------------------------------
class Precomputed:
    """An embedder that returns stored vectors: documents by their `doc N`
    text, queries by `q N`."""

    name, dims = "precomputed-384", DIMS

    def __init__(self, vectors, query_vectors):
        self.vectors, self.query_vectors = vectors, query_vectors

    def embed(self, texts):
        rows = [
            self.query_vectors[int(t[2:])]
            if t.startswith("q ")
            else self.vectors[int(t.split()[1])]
            for t in texts
        ]
        return np.stack(rows).astype(np.float32)


def build_hindcast(data: dict, qs, root: Path):
    from hindcast.archive import docs, layout
    from hindcast.archive.index import build_index
    from hindcast.archive.snapshot import freeze, open_snapshot

    draft = root / "draft"
    month = data["created"].astype("datetime64[us]").astype("datetime64[M]")
    for m in np.unique(month):
        idx = np.flatnonzero(month == m)
        docs.write_parquet(
            _doc_table(data, idx), layout.partition_dir(draft, "synthetic", str(m)) / "part.parquet"
        )
    snap = open_snapshot(root, freeze(root, draft))
    embedder = Precomputed(data["vectors"], [q for q, _ in qs])
    build_index(snap, embedder, chunk_rows=50_000)
    return snap, embedder


def _doc_table(data, idx):
    """Rows of the archive schema for documents `idx` (calendar months; ids are the row numbers)."""
    import pyarrow as pa

    from hindcast.archive import docs

    created, edit = data["created"][idx], data["edit"][idx]
    state = np.where(
        edit == np.iinfo(np.int64).min,
        "never",
        np.where(edit == np.iinfo(np.int64).max, "unknown", "at"),
    )
    ts = pa.timestamp("us", tz="UTC")
    edited = pa.array(np.where(state == "at", edit, 0), ts).to_pylist()
    cols = {
        "id": [str(i) for i in idx],
        "collection": ["synthetic"] * idx.size,
        "source": ["synthetic"] * idx.size,
        "kind": ["synthetic"] * idx.size,
        "created_at": pa.array(created, ts),
        "created_us": created,
        "title": [f"doc {i} topic{data['topic'][i]}" for i in idx],
        "text": [""] * idx.size,
        "url": [""] * idx.size,
        "edit_state": state,
        "edited_at": pa.array([e if s == "at" else None for e, s in zip(edited, state)], ts),
        "edit_us": edit,
        "retrieved_at": pa.nulls(idx.size, ts),
        "score": pa.nulls(idx.size, pa.int64()),
        "num_comments": pa.nulls(idx.size, pa.int64()),
        "parent_id": pa.nulls(idx.size, pa.string()),
        "thread_id": pa.nulls(idx.size, pa.string()),
        "deleted": [False] * idx.size,
    }
    return pa.table(cols, schema=docs.schema())


def hindcast_search(snap, embedder):
    from hindcast.archive.index import open_index
    from hindcast.archive.retriever import TimeBoundRetriever
    from hindcast.timeutil import from_unix

    index = open_index(snap, embedder.name)

    def search(q_number, t0):
        retriever = TimeBoundRetriever(snap, from_unix(t0 / 1e6), index=index, embedder=embedder)
        return [int(h.doc.id) for h in retriever.search(f"q {q_number}", k=K, mode="vector")]

    return search


# ---- LanceDB variants ---------------------------------------------------------------------
def build_lance(data: dict, root: Path, hnsw: bool):
    import lancedb
    import pyarrow as pa
    from lancedb.index import BTree, IvfHnswSq

    n = data["created"].size
    flat = pa.array(data["vectors"].reshape(-1), pa.float32())
    table = pa.table(
        {
            "row": np.arange(n),
            "created_us": data["created"],
            "edit_us": data["edit"],
            "vector": pa.FixedSizeListArray.from_arrays(flat, DIMS),
        }
    )
    db = lancedb.connect(str(root))
    t = db.create_table("docs_hnsw" if hnsw else "docs", data=table, mode="overwrite")
    t.create_index("created_us", config=BTree())
    if hnsw:
        t.create_index("vector", config=IvfHnswSq(distance_type="cosine"))
    return t


def lance_search(table, hnsw: bool):
    def search(q, t0):
        query = (
            table.search(q)
            .distance_type("cosine")
            .where(f"created_us < {t0} AND edit_us < {t0}", prefilter=True)
        )
        if hnsw:
            query = query.refine_factor(10)
        else:
            query = query.bypass_vector_index()
        return [int(r) for r in query.limit(K).select(["row"]).to_arrow().column("row").to_pylist()]

    return search


# ---- measuring ------------------------------------------------------------------------------
class Tally:
    """Latencies, recall, leaks and short results of one variant."""

    def __init__(self, name: str, by_number: bool = False):
        self.name, self.by_number = name, by_number
        self.latencies, self.recalls, self.leaks, self.short = [], [], 0, 0

    def run(self, search, number, q, t0, want, data) -> None:
        start = time.perf_counter()
        got = search(number if self.by_number else q, t0)
        self.latencies.append((time.perf_counter() - start) * 1000)
        self.leaks += sum(1 for i in got if data["created"][i] >= t0 or data["edit"][i] >= t0)
        self.short += len(got) < len(want)
        self.recalls.append(len(set(got) & set(want)) / len(want) if want else 1.0)

    def result(self) -> dict:
        return {
            "variant": self.name,
            "p50_ms": round(float(np.percentile(self.latencies, 50)), 2),
            "p95_ms": round(float(np.percentile(self.latencies, 95)), 2),
            "recall@10": round(float(np.mean(self.recalls)), 4),
            "leaks": self.leaks,
            "short": self.short,
        }


LEGACY = "numpy_exact_einsum,hindcast,lance_flat,lance_hnsw,numpy_pca_rerank:128:400"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--variants",
        default=None,
        help="the in-memory synthetic comparison: a comma list of variants, or `legacy` for "
        f"{LEGACY}; without it (and without --real-index) the Pushshift-load exact-vs-approx "
        "benchmark of benchmarks/retrieval_scale.py runs",
    )
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--real-index",
        type=Path,
        default=None,
        help="a built MiniLM index dir (index/<snapshot>/all-MiniLM-L6-v2) instead of synthetic "
        "data",
    )
    parser.add_argument(
        "--clean", action="store_true", help="scale benchmark: delete its cached data afterwards"
    )
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import retrieval_scale

    retrieval_scale.add_arguments(parser)
    args = parser.parse_args()
    if args.variants is None and args.real_index is None:
        retrieval_scale.main(args)
        return
    args.variants = LEGACY if args.variants in (None, "legacy") else args.variants
    root = Path(tempfile.mkdtemp(prefix="hindcast-retrieval-"))
    if args.real_index:
        data, qs = real(args.real_index, args.queries)
        args.docs = data["created"].size
    else:
        data = synthetic(args.docs)
        qs = queries(data, args.queries)
    searches = {"numpy_exact": numpy_exact(data)}
    builds = {}
    for name in [v for v in args.variants.split(",") if v]:
        start = time.perf_counter()
        searches[name] = _variant(name, data, qs, root)
        builds[name] = round(time.perf_counter() - start, 1)
    results = _interleaved(searches, qs, data)
    for r in results:
        r["build_s"] = builds.get(r["variant"], 0.0)
    _report(args.docs, results)
    if args.json:
        args.json.write_text(
            json.dumps({"docs": args.docs, "queries": args.queries, "results": results}, indent=2)
        )
    shutil.rmtree(root, ignore_errors=True)


def _interleaved(searches: dict, qs, data, block: int = 20) -> list[dict]:
    """Queries in blocks of `block`: each variant runs the whole block in turn, the order of
    variants rotating from block to block, so background load on a shared machine hits them
    alike. Blocks rather than single queries: a BLAS call leaves its worker threads spinning
    for a while (OpenBLAS's default thread timeout), which would slow whichever variant ran
    next. 5 warm-up queries each."""
    truth = [searches["numpy_exact"](q, t0) for q, t0 in qs]
    tallies = {name: Tally(name, by_number=name == "hindcast") for name in searches}
    for number, (q, t0) in enumerate(qs[:5]):
        for name, search in searches.items():
            search(number if tallies[name].by_number else q, t0)
    names = list(searches)
    for start in range(0, len(qs), block):
        turn = (start // block) % len(names)
        for name in names[turn:] + names[:turn]:
            for number in range(start, min(start + block, len(qs))):
                q, t0 = qs[number]
                tallies[name].run(searches[name], number, q, t0, truth[number], data)
    return [t.result() for t in tallies.values()]


def _variant(name, data, qs, root):
    if name == "hindcast":
        return hindcast_search(*build_hindcast(data, qs, root / "archive"))
    if name in ("lance_flat", "lance_hnsw"):
        hnsw = name == "lance_hnsw"
        return lance_search(build_lance(data, root / "lance", hnsw), hnsw)
    if name == "numpy_exact_einsum":
        return numpy_exact(data, einsum=True)
    if name.startswith("numpy_pca_rerank"):
        dims, candidates = (int(x) for x in (name.split(":")[1:] or ["96", "200"]))
        return numpy_pca_rerank(data, dims, candidates)
    raise SystemExit(f"unknown variant {name}")


def _report(n: int, results: list[dict]) -> None:
    base = next(r["p50_ms"] for r in results if r["variant"] == "numpy_exact")
    print(
        f"{n:,} documents; p50 ratio against numpy_exact measured in the same run ({base:.2f} ms)"
    )
    for r in results:
        print(
            f"  {r['variant']:22s} p50 {r['p50_ms']:8.2f} ms  p95 {r['p95_ms']:8.2f} ms  ratio "
            f"{r['p50_ms'] / base:5.2f}  recall@10 {r['recall@10']:.4f}  leaks {r['leaks']}  "
            f"short {r['short']}" + f"  build {r['build_s']} s"
        )


if __name__ == "__main__":
    main()
