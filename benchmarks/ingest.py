"""End-to-end ingest + embed throughput over the shared headlines, against bare
`SentenceTransformer.encode` on the same texts, in the same run (same process, same model).

    python benchmarks/ingest.py [--limit N] [--embedder KEY] [--archive DIR] [--json out.json]

`--embedder`: a registry key or recorded name (default: the default embedder,
`hindcast.archive.embed.DEFAULT`; `minilm-fp32` for the fp32 model). The bare encoder
runs the embedder's own `embed` (same precision), so the ratio measures the pipeline only.

Input: the development data beside the checkout, `../shared/data/news/headlines` (or
`HINDCAST_SHARED_DATA`); it is not part of the repository, and without it the benchmark
says so and exits 0 without measuring (the tests never need it).

Target: end-to-end documents/s ≥ 0.85 × the bare encoder's. Model loading is excluded
from both (the loaded embedder is shared). On a shared machine wall-clock rates drift with
other load, so each round alternates which runs first, and CPU time of this process (all
threads) is reported next to wall time; the medians over rounds are the figures.
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

SHARED_DATA = Path(
    os.environ.get("HINDCAST_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
HEADLINES = SHARED_DATA / "news" / "headlines"


def require_shared(path: Path) -> None:
    """Skip (exit 0, one line on stderr) when the optional development input is absent."""
    if not path.exists():
        print(
            f"skipped: this benchmark reads {path}, the development data beside the checkout "
            "(not shipped; set HINDCAST_SHARED_DATA to its data folder)",
            file=sys.stderr,
        )
        raise SystemExit(0)


def _texts(files: list[Path], limit: int | None) -> list[str]:
    from hindcast.archive.embed import document_text

    rows = [
        json.loads(line)
        for f in files
        for line in f.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return [document_text(r["title"], "") for r in rows[:limit]]


def _limited_inputs(files: list[Path], limit: int | None, scratch: Path) -> list[Path]:
    if limit is None:
        return files
    lines = [
        line for f in files for line in f.read_text(encoding="utf-8").splitlines() if line.strip()
    ][:limit]
    path = scratch / "headlines_subset.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [path]


def _timed(fn) -> tuple[float, float, object]:
    """(wall seconds, CPU seconds of this process — all threads, Rust ones included, result)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def bare(embedder, texts: list[str]):
    return _timed(lambda: embedder.embed(texts))


def end_to_end(embedder, inputs: list[Path], archive: Path):
    from hindcast.archive.index import build_index
    from hindcast.archive.snapshot import build_snapshot, open_snapshot

    def run() -> int:
        snap = open_snapshot(archive, build_snapshot(inputs, "headlines", "headlines", archive))
        return build_index(snap, embedder)["documents"]

    return _timed(run)


def _round(embedder, texts, inputs, archive: Path, e2e_first: bool) -> dict:
    shutil.rmtree(archive, ignore_errors=True)
    runs = {}
    for name in ("e2e", "bare") if e2e_first else ("bare", "e2e"):
        runs[name] = (
            end_to_end(embedder, inputs, archive) if name == "e2e" else bare(embedder, texts)
        )
    n = runs["e2e"][2]
    return {
        "documents": n,
        "bare_wall_s": runs["bare"][0],
        "bare_cpu_s": runs["bare"][1],
        "e2e_wall_s": runs["e2e"][0],
        "e2e_cpu_s": runs["e2e"][1],
        "ratio_wall": (n / runs["e2e"][0]) / (len(texts) / runs["bare"][0]),
        "ratio_cpu": (n / runs["e2e"][1]) / (len(texts) / runs["bare"][1]),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument(
        "--embedder",
        default=None,
        help="registry key or recorded name [default: the default embedder]",
    )
    parser.add_argument(
        "--rounds", type=int, default=2, help="alternating order (bare first, then e2e first, …)"
    )
    parser.add_argument(
        "--archive", type=Path, default=None, help="keep the last built archive here"
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    require_shared(HEADLINES)
    from hindcast.archive.embed import DEFAULT, get_embedder

    files = sorted(HEADLINES.glob("news_*.jsonl"))
    scratch = Path(tempfile.mkdtemp(prefix="hindcast-bench-"))
    archive = args.archive or scratch / "archive"
    embedder = get_embedder(args.embedder or DEFAULT)
    texts = _texts(files, args.limit)
    embedder.embed(texts[:64])  # load and warm the model (excluded from both timings)
    inputs = _limited_inputs(files, args.limit, scratch)
    rounds = [
        _round(embedder, texts, inputs, archive, e2e_first=i % 2 == 1) for i in range(args.rounds)
    ]
    result = {"embedder": embedder.name, **_summary(rounds, len(texts))}
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    shutil.rmtree(scratch, ignore_errors=True)


def _summary(rounds: list[dict], n: int) -> dict:
    import statistics

    def med(key):
        return round(statistics.median(r[key] for r in rounds), 3)

    return {
        "documents": n,
        "rounds": len(rounds),
        "bare_docs_per_s_wall": round(n / med("bare_wall_s"), 1),
        "e2e_docs_per_s_wall": round(n / med("e2e_wall_s"), 1),
        "bare_docs_per_cpu_s": round(n / med("bare_cpu_s"), 1),
        "e2e_docs_per_cpu_s": round(n / med("e2e_cpu_s"), 1),
        "ratio_wall_median": med("ratio_wall"),
        "ratio_cpu_median": med("ratio_cpu"),
        "per_round": [{k: round(v, 3) for k, v in r.items()} for r in rounds],
    }


if __name__ == "__main__":
    main()
