"""The projected approximate index against the exact scan and the fixed codebook, in one run
(issue 37), on the months `benchmarks/retrieval.py` builds (its cache is reused).

    python benchmarks/retrieval_projected.py --docs 1000000 --doc-vectors $D/reddit \\
        --data $D --thresholds 0.2 --head-thresholds 0.1,0.12 --nprobe 256 --json out.json

(without `--doc-vectors`: the anchored documents, headline mixes, in their own cache).

Every month is built (or reused) exactly as `benchmarks/retrieval_scale.py` builds it (dumps,
vectors mixed from `--doc-vectors` — non-anchored — or from the headline anchors, int8 codes,
the codebook's IVF); the projected index of each month is added under `month=…/proj-D-H/`
(`ann_projected.fit` with the projection trained on the same anchor table the codebook is
trained on: the sample headlines, never a document); with `--data-trained`, also the former
data-trained IVF of each month (`retrieval_scale.build_ann`, under `month=…/data/`). Modes, interleaved in blocks of 20
queries as retrieval_scale measures them: `exact`, `codebook@N` (the IVF at nprobe N) and
`projected@θ/θh` (the projected index at threshold θ, its first level — the head's score —
at θh) and `data@N` (the data-trained IVF at nprobe N), all through `ann.rank` with the same
scanner threads. Reported: p50/p95/p99, recall@10 against the cached exact ground truth,
leaks, short lists, build time, disk and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import retrieval_scale as rs


def projected_months(months, table: np.ndarray, thresholds: list, times: dict, shape) -> dict:
    """{(θ, head θ): [Projected of each month]}: built once under month=…/proj-D-H/ (reused;
    `shape` = (D projected dims, H of them in the head)), the thresholds set per mode (both are
    search-time constants recorded in the month's meta)."""
    from hindcast.archive import ann, ann_projected, projection

    dims, head = shape
    key = {"reference": "anchors", "embedder": "anchors"}
    made = projection.train(table, key, dims=dims)
    out: dict[tuple, list] = {t: [] for t in thresholds}
    for m in months:
        folder = m.folder / f"proj-{dims}-{head}"
        found = ann.load_month(folder)
        if found is None or found.meta.get("projection") != made.id:
            start = time.perf_counter()
            fitted = ann_projected.fit(
                m.vectors.vectors, m.end_us, made, thresholds[0][0], ann.FORMAT, head=head
            )
            ann_projected.write(folder / "ann", fitted, fitted.meta)
            times["projected_build_s"] += time.perf_counter() - start
            found = ann.load_month(folder)
        for t, head_threshold in thresholds:
            out[t, head_threshold].append(ann_projected.at(found, t, head_threshold))
    return out


class Mode(rs.Tally):
    """A Tally whose closed months go through `indexes` (one per month; None: exact)."""

    def __init__(self, name: str, nprobe: int, indexes: list | None):
        super().__init__(name, nprobe, "exact" if indexes is None else name.split("@")[0])
        self.indexes = indexes

    def run(self, months, query, truth, eligible, scanner) -> None:
        from hindcast.archive import ann

        q, t0, _ = query
        parts = []
        for i, m in enumerate(months):
            if m.created.size == 0 or m.created[0] >= t0:
                break
            closed = m.end_us <= t0
            end = m.created.size if closed else int(np.searchsorted(m.created, t0, side="left"))
            index = self.indexes[i] if closed and self.indexes is not None else None
            parts.append(ann.Part(m.vectors, end, index))
        start = time.perf_counter()
        got = ann.rank(parts, q, t0, rs.K, nprobe=self.nprobe, scanner=scanner)
        self.latencies.append((time.perf_counter() - start) * 1000)
        found = [(i, p) for _, i, p in got]
        self.leaks += sum(
            1 for i, p in found if months[i].created[p] >= t0 or months[i].edit[p] >= t0
        )
        self.short += len(found) < min(rs.K, eligible)
        self.identical += found == truth
        self.recalls.append(len(set(found) & set(truth)) / len(truth) if truth else 1.0)


def measure(months, queries, truth, eligible, modes: list[Mode], block: int = 20) -> list[dict]:
    from hindcast.archive import scan

    with scan.Scanner() as scanner:
        for qi in range(min(5, len(queries))):  # warm-up, not counted
            for mode in modes:
                Mode(mode.name, mode.nprobe, mode.indexes).run(
                    months, queries[qi], truth[qi], eligible[qi], scanner
                )
        for start in range(0, len(queries), block):
            turn = (start // block) % len(modes)
            for mode in modes[turn:] + modes[:turn]:
                for qi in range(start, min(start + block, len(queries))):
                    mode.run(months, queries[qi], truth[qi], eligible[qi], scanner)
    return [mode.result() for mode in modes]


def run(args) -> dict:
    data = Path(args.data) / f"{args.docs}-{args.months}m-s{args.seed}"
    months_dir = data / "months"
    doc_table = np.load(Path(args.doc_vectors) / "vectors.npy") if args.doc_vectors else None
    if doc_table is not None:
        months_dir = months_dir.with_name(f"{months_dir.name}-docs{doc_table.shape[0]}")
    times = dict.fromkeys(
        ("generate_dumps_s", "read_dumps_s", "vectors_codes_s", "projected_build_s"), 0.0
    )
    times["ann_codebook_build_s"] = times["data_trained_build_s"] = 0.0
    cfg = rs.gen.Config(docs=args.docs, months=args.months, start=args.start, seed=args.seed)
    start = time.perf_counter()
    rs.gen.generate(cfg, data / "dumps", log=rs.log)
    times["generate_dumps_s"] = time.perf_counter() - start
    table = rs.anchors()
    nprobes = [int(n) for n in str(args.nprobe).split(",") if n]  # "": no codebook
    book, book_recall = rs.the_codebook(Path(args.data), table, None, (nprobes or [256])[0])
    months = []
    for index, (label, _, end) in enumerate(rs.gen.month_starts(cfg)):
        folder = months_dir / f"month={label}"
        rows = table if doc_table is None else doc_table
        rs.build_month(folder, data / "dumps", label, index, rows, args.seed, times, 0.5)
        month = rs.Month(folder, label, end * 1_000_000)
        if nprobes:
            times["ann_codebook_build_s"] += rs.build_codebook_ann(month, book, book_recall)[1]
        if args.data_trained:
            times["data_trained_build_s"] += rs.build_ann(month, None, None, args.seed)[1]
        months.append(month)
        rs.log(f"{label}: {month.created.size:,} docs")
    heads = [float(t) for t in args.head_thresholds.split(",")]
    thresholds = [(float(t), h) for t in args.thresholds.split(",") for h in heads]
    shape = (args.dims, args.head)
    projected = projected_months(months, table, thresholds, times, shape)
    build_memory = rs.memory()
    _, qvec = rs.query_vectors(Path(args.data))
    queries = rs.make_queries(months, qvec, args.queries, args.seed)
    truth, uncertain, eligible = rs.cached_truth(months_dir, months, queries)
    modes = [Mode("exact", 1, None)]
    modes += [Mode(f"codebook@{n}", n, [m.ann for m in months]) for n in nprobes]
    modes += [Mode(f"projected@{t}/{h}", 1, projected[t, h]) for t, h in thresholds]
    if args.data_trained:
        modes += [Mode(f"data@{n}", n, [m.ann_data for m in months]) for n in nprobes or [256]]
    rs.reset_peak()
    load_before = os.getloadavg()
    results = measure(months, queries, truth, eligible, modes)
    load_after = os.getloadavg()
    exact = next(r for r in results if r["mode"] == "exact")
    for r in results:
        r["p50_ratio_to_exact"] = round(r["p50_ms"] / exact["p50_ms"], 3)
    proj = f"proj-{args.dims}-{args.head}"
    proj_bytes = sum(p.stat().st_size for m in months for p in (m.folder / proj).rglob("*.npy"))
    return {
        "docs": int(sum(m.created.size for m in months)),
        "queries": len(queries),
        "doc_vectors": args.doc_vectors or "anchored (headline mixes)",
        "truth_uncertain": uncertain,
        "results": results,
        "times_s": {k: round(v, 1) for k, v in times.items()},
        "load_average_during_search": [round(load_before[0], 2), round(load_after[0], 2)],
        "disk": rs.disk(months) | {"projected_gb": round(proj_bytes / 1e9, 2)},
        "projected_shape": {"dims": args.dims, "head": args.head},
        "memory_after_build": build_memory,
        "memory_search_phase": rs.memory(),
        "cpu": _cpu(),
        "code": rs.code_identity(),
    }


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return f"{line.split(':', 1)[1].strip()} ({len(os.sched_getaffinity(0))} cores)"
    return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--months", type=int, default=12)
    parser.add_argument("--start", default="2024-01")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--nprobe", default="256", help="codebook nprobes; '' skips the codebook")
    parser.add_argument("--thresholds", default=None, help="projected thresholds θ [the package's]")
    parser.add_argument("--dims", type=int, default=None, help="projected dims [the package's]")
    parser.add_argument("--head", type=int, default=None, help="head dims [the package's]")
    parser.add_argument(
        "--head-thresholds", default=None, help="the head's thresholds [the package's]"
    )
    parser.add_argument("--data", required=True)
    parser.add_argument("--doc-vectors", default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--data-trained",
        action="store_true",
        help="also the former data-trained IVF per month (kept under month=…/data/), at each nprobe",
    )
    args = parser.parse_args()
    from hindcast.archive import ann_projected, projection

    args.dims = args.dims or projection.DIMS
    args.head = args.head or ann_projected.HEAD
    args.thresholds = args.thresholds or str(ann_projected.THRESHOLD)
    args.head_thresholds = args.head_thresholds or str(ann_projected.HEAD_THRESHOLD)
    out = run(args)
    for r in out["results"]:
        print(
            f"{r['mode']:16s} p50 {r['p50_ms']:8.2f} p95 {r['p95_ms']:8.2f} p99 {r['p99_ms']:8.2f}"
            f"  x{r['p50_ratio_to_exact']:.3f}  recall@10 {r['recall@10']:.4f} "
            f"(min {r['recall@10_min']})  leaks {r['leaks']} short {r['short']}"
        )
    print(json.dumps({k: out[k] for k in ("times_s", "disk", "load_average_during_search")}))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
