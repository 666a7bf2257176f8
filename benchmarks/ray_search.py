"""Distributed time-bounded search (issue 37) on a real local Ray cluster against the single-node
retriever, in the same run: every query is run both ways and compared.

The archive: the shipped headlines (archive/sample's 46,809 real headlines, or `--docs` of them),
ingested, frozen and hash-embedded (`hash`: the embedder is not what is measured). The cluster:
`--nodes` Ray nodes on loopback (tests/archive/ray_cluster.py), one search actor a node, the
months dealt round-robin. The queries: `--queries` (query, t0, mode) with t0 exactly on a
document's creation instant or on a month boundary (−1 µs, 0, +1 µs), the words of a random
headline, modes cycling vector (exact) / text / hybrid / vector approx (if `--approx`).

Reported: queries, leaks (a returned document created at/after t0 or from a later month),
short top-k (vector: fewer than min(k, documents before t0)), mismatches against the single node
(ids, scores to the bit, order), p50/p95 per query on one node and on Ray, and the fan-out
overhead per query (Ray − one node, per query, p50) — over all queries and for each mode.

    python benchmarks/ray_search.py --nodes 3 --queries 10000

At scale, an archive built beforehand from Pushshift dumps (`hindcast archive ingest --format
pushshift`, freeze, embed, `--approx`), its queries drawn from the same dumps' documents:

    python benchmarks/ray_search.py --archive A --snapshot ID --dumps DIR --queries 2000 --approx
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import random
import shutil
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from hindcast import api  # noqa: E402
from hindcast.archive import distributed, fanout, open_index, open_snapshot  # noqa: E402
from hindcast.archive.retriever import TimeBoundRetriever  # noqa: E402
from hindcast.timeutil import from_unix, month_key  # noqa: E402
from tests.archive.ray_cluster import LocalCluster, ray_env  # noqa: E402
from tests.helpers import sample_headlines  # noqa: E402

MODES = ("vector", "text", "hybrid")


def build(folder: Path, docs: int, approx: bool):
    rows = [row for month in sample_headlines().values() for row in month]
    rows = random.Random(37).sample(rows, docs) if docs < len(rows) else rows
    path = folder / "headlines.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    api.ingest([path], "news", "headlines", folder / "archive")
    snap = open_snapshot(folder / "archive", api.freeze(folder / "archive"))
    api.embed(folder / "archive", snap.id, "hash")
    if approx:
        from hindcast.archive import ann_index

        ann_index.build(open_index(snap).root, lists=64, partition="codebook")
    return snap, rows


def cases(rows: list[dict], count: int, approx: bool, seed: int = 0):
    rng = random.Random(seed)
    instants = sorted(r["created_utc"] for r in rows)
    months = sorted({month_key(from_unix(t)) for t in instants})
    bounds = [from_unix(int(np.datetime64(f"{m}-01", "s").astype(int))) for m in months[1:]]
    modes = MODES + (("approx",) if approx else ())
    for i in range(count):
        if i % 2:
            t0 = from_unix(rng.choice(instants))
        else:
            t0 = rng.choice(bounds) + timedelta(microseconds=rng.choice((-1, 0, 1)))
        words = rng.choice(rows)["title"].split()[:4]
        yield " ".join(words) or "news", t0, modes[i % len(modes)], instants


def search(snap, index, t0, query, mode, k, shards=None):
    options = {"vector_search": "approx", "nprobe": 8} if mode == "approx" else {}
    bound = TimeBoundRetriever(snap, t0, index=index, shards=shards, **options)
    start = time.perf_counter()
    hits = bound.search(query, k=k, mode="vector" if mode == "approx" else mode)
    return hits, time.perf_counter() - start


def from_dumps(archive: Path, snapshot: str, dumps: Path):
    """A built archive's snapshot and its documents (created_utc, title: the first words of the
    title or text) read again from the Pushshift dumps it was ingested from."""
    from hindcast.archive.readers import read_documents
    from hindcast.records import Document

    rows = [
        {"created_utc": d.created_at.timestamp(), "title": (d.title or d.text)[:200]}
        for path in sorted(dumps.glob("*.zst"))
        for d in read_documents(path, "pushshift")
        if isinstance(d, Document)
    ]
    return open_snapshot(archive, snapshot), rows


def run(args) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="rs", dir="/tmp"))
    cluster = LocalCluster(folder / "cluster")
    (folder / "cluster").mkdir()
    try:
        started = time.perf_counter()
        if args.archive:
            snap, rows = from_dumps(args.archive, args.snapshot, args.dumps)
        else:
            snap, rows = build(folder, args.docs, args.approx)
        built = time.perf_counter() - started
        os.environ.update(ray_env())
        os.environ.pop("RAY_ADDRESS", None)
        cluster.start(nodes=args.nodes)
        index = open_index(snap)
        with distributed.connected(cluster.address), fanout.open_shards(index, None) as shards:
            return {"build_s": round(built, 1), **measure(args, snap, index, rows, shards)}
    finally:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


def measure(args, snap, index, rows, shards) -> dict:
    leaks = short = mismatched = 0
    times: dict[str, list[tuple[float, float]]] = {}
    for i, (query, t0, mode, instants) in enumerate(cases(rows, args.queries, args.approx)):
        hits, alone = search(snap, index, t0, query, mode, args.k)
        on_ray, seconds = search(snap, index, t0, query, mode, args.k, shards)
        times.setdefault(mode, []).append((alone, seconds))
        mismatched += [(h.doc, h.score.hex()) for h in on_ray] != [
            (h.doc, h.score.hex()) for h in hits
        ]
        leaks += sum(
            1
            for h in on_ray
            if not (h.doc.created_at < t0 and month_key(h.doc.created_at) <= month_key(t0))
        )
        before = bisect.bisect_left(instants, t0.timestamp())
        short += mode in ("vector", "approx") and len(on_ray) < min(args.k, before)
        if (i + 1) % 100 == 0:
            print(f"{i + 1} queries, {leaks} leaks, {mismatched} mismatches", file=sys.stderr)
    every = [pair for pairs in times.values() for pair in pairs]
    return {
        "nodes": args.nodes,
        "documents": len(rows),
        "queries": args.queries,
        "leaks": leaks,
        "short": int(short),
        "mismatches_vs_one_node": int(mismatched),
        **_latencies(every),
        "by_mode": {mode: {"queries": len(p)} | _latencies(p) for mode, p in times.items()},
    }


def _latencies(pairs: list[tuple[float, float]]) -> dict:
    """p50/p95 (ms) of the one-node and the Ray search of each query, and the fan-out overhead
    per query (Ray − one node, p50)."""
    alone, ray = (np.array([p[i] for p in pairs]) * 1000 for i in (0, 1))
    return {
        "one_node_ms": {
            "p50": round(float(np.median(alone)), 2),
            "p95": round(float(np.percentile(alone, 95)), 2),
        },
        "ray_ms": {
            "p50": round(float(np.median(ray)), 2),
            "p95": round(float(np.percentile(ray, 95)), 2),
        },
        "fanout_overhead_ms_p50": round(float(np.median(ray - alone)), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--docs", type=int, default=46_809)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--approx", action="store_true", help="also vector approx queries")
    parser.add_argument("--archive", type=Path, help="a built archive (with --snapshot, --dumps)")
    parser.add_argument("--snapshot", help="its frozen, embedded snapshot")
    parser.add_argument("--dumps", type=Path, help="the Pushshift dumps it was ingested from")
    print(json.dumps(run(parser.parse_args()), indent=2))


if __name__ == "__main__":
    main()
