"""Faster CPU variants of the MiniLM embedder against fp32, on the shipped headlines.

    python benchmarks/embedders.py [--limit N] [--variants fp32,bf16] [--json out.json]

Every result starts with the CPU as torch runs it here (`cpu`: torch's kernel capability,
whether oneDNN and the CPU's flags give native bf16, the embedder the default `minilm`
resolves to on this CPU, the thread count) and ends with `default_vs_fp32`, the default's
rate against fp32 measured in the same run. To see an AVX2-only CPU's figures on a CPU with
AVX-512, emulate one: `ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2` (torch's and
oneDNN's kernels both limited to AVX2; the first alone leaves oneDNN's native bf16 on).

For each variant — fp32 (the baseline), bf16 autocast, int8 dynamic quantization of the
Linear layers — it embeds the same texts (all 46,809 headlines of `archive/sample` by
default, so nothing outside the repository is needed) and the 57 market questions of
`markets/sample`, and reports:

- documents/s and the ratio to fp32 measured in the same run (variants take turns block by
  block of 2,048 texts, each block starting with another one, so load on a shared machine
  falls on all of them alike);
- recall@10: the share of fp32's top-10 documents (exact dot product over every document)
  that the variant's own top-10 finds, queries and documents both embedded by the variant;
- the smallest cosine between a document's fp32 and variant vectors.

    python benchmarks/embedders.py --index [--chunk-rows 512] [--json out.json]

measures what a user waits for instead: two copies of the shipped snapshot are indexed in
the same run through `build_index`, one with `minilm-fp32` and one with the default embedder
(`hindcast.archive.embed.DEFAULT`), in two threads that take turns chunk by chunk (only one
embeds at a time), so load on a shared machine falls on both alike. It reports each one's
embedding seconds (the sum of its timed chunks), documents/s, the ratio, and recall@10 of
the default index against the fp32 index (the market questions embedded by each embedder,
exact top-10 over the stored vectors).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def headlines(limit: int | None) -> list[str]:
    import pyarrow.parquet as pq

    from hindcast.archive.embed import document_text
    from hindcast.archive.snapshot import open_snapshot

    snapshot = open_snapshot(ROOT / "archive" / "sample")
    texts = []
    for month in snapshot.months:
        for path in snapshot.partition_files(month):
            table = pq.read_table(path, columns=["title", "text"]).to_pylist()
            texts.extend(document_text(r["title"], r["text"] or "") for r in table)
    return texts[:limit]


def questions() -> list[str]:
    from hindcast.markets.store import open_version

    return [m.question for m in open_version(ROOT / "markets" / "sample").bundle.markets]


def variants(model, only: tuple[str, ...] = ()):
    """name → a function texts → unit float32 rows (`only`: these and fp32; empty: all)."""
    import torch

    def fp32(texts):
        return model.encode(
            texts,
            batch_size=32,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )

    def bf16(texts):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return fp32(texts)

    if only and "int8-dynamic" not in only:
        return {"fp32": fp32, **({"bf16": bf16} if "bf16" in only else {})}
    quantized = torch.ao.quantization.quantize_dynamic(
        _clone(model), {torch.nn.Linear}, dtype=torch.qint8
    )

    def int8(texts):
        return quantized.encode(
            texts,
            batch_size=32,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )

    return {"fp32": fp32, "bf16": bf16, "int8-dynamic": int8}


def cpu() -> dict:
    """The CPU as torch runs it here, and what the default embedder is on it."""
    import os

    import torch

    from hindcast.archive.embed import DEFAULT, get_embedder, native_bf16

    return {
        "capability": torch.backends.cpu.get_cpu_capability(),
        "native_bf16": native_bf16(),
        "default_embedder": get_embedder(DEFAULT).name,
        "threads": torch.get_num_threads(),
        "ATEN_CPU_CAPABILITY": os.environ.get("ATEN_CPU_CAPABILITY"),
        "ONEDNN_MAX_CPU_ISA": os.environ.get("ONEDNN_MAX_CPU_ISA"),
    }


def default_vs_fp32(result: dict, machine: dict) -> float | None:
    """The default embedder's rate over fp32's, from a variants result."""
    key = "bf16" if machine["default_embedder"].endswith("-bf16") else "fp32"
    found = result.get(key)
    return found["speed_vs_fp32"] if found else None


def _clone(model):
    import copy

    return copy.deepcopy(model)


def unit(rows):
    import numpy as np

    rows = np.asarray(rows, dtype=np.float64)
    return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)


def top10(queries, docs):
    import numpy as np

    scores = queries @ docs.T
    return np.argsort(-scores, axis=1, kind="stable")[:, :10]


BLOCK = 2048  # texts per turn: variants take turns block by block


def measure(texts: list[str], asked: list[str], rounds: int, only: tuple[str, ...] = ()) -> dict:
    import numpy as np
    from sentence_transformers import SentenceTransformer  # a dev dependency: the int8 variant

    from hindcast.archive.embed import _minilm_path

    fns = variants(SentenceTransformer(str(_minilm_path()), device="cpu"), only)
    for fn in fns.values():
        fn(texts[:64])  # first calls (lazy initialisation) outside the clocks
    seconds = {name: [] for name in fns}
    vectors = {}
    for r in range(rounds):
        spent, parts = {name: 0.0 for name in fns}, {name: [] for name in fns}
        for i, start_row in enumerate(range(0, len(texts), BLOCK)):
            names = list(fns)
            for name in (
                names[i % len(names) :] + names[: i % len(names)]
            ):  # each block, another variant first
                start = time.perf_counter()
                parts[name].append(fns[name](texts[start_row : start_row + BLOCK]))
                spent[name] += time.perf_counter() - start
        for name in fns:
            seconds[name].append(spent[name])
            vectors[name] = unit(np.concatenate(parts[name]))
    queries = {name: unit(fn(asked)) for name, fn in fns.items()}
    truth = top10(queries["fp32"], vectors["fp32"])
    out = {}
    for name in fns:
        found = top10(queries[name], vectors[name])
        hits = sum(len(set(a) & set(b)) for a, b in zip(truth, found))
        rate = len(texts) / min(seconds[name])
        out[name] = {
            "docs_per_s": round(rate, 1),
            "recall_at_10": round(hits / truth.size, 4),
            "min_cosine_vs_fp32": round(
                float((vectors[name] * vectors["fp32"]).sum(axis=1).min()), 5
            ),
        }
    base = out["fp32"]["docs_per_s"]
    for name in out:
        out[name]["speed_vs_fp32"] = round(out[name]["docs_per_s"] / base, 2)
    return out


class _Turns:
    """Two builds take turns: a chunk of one, then a chunk of the other (until one is done)."""

    def __init__(self, names: list[str]):
        import threading

        self.cond, self.turn, self.active = threading.Condition(), names[0], list(names)

    def run(self, name: str, fn):
        with self.cond:
            self.cond.wait_for(lambda: self.turn == name or len(self.active) == 1)
        try:
            return fn()
        finally:
            with self.cond:
                self.turn = next((n for n in self.active if n != name), name)
                self.cond.notify_all()

    def done(self, name: str) -> None:
        with self.cond:
            self.active.remove(name)
            self.cond.notify_all()


class _Timed:
    """An embedder (same name, dims, dtype) whose embed() calls take turns and are timed."""

    def __init__(self, inner, turns: _Turns):
        self.inner, self.turns, self.seconds, self.rows = inner, turns, 0.0, 0
        self.name, self.dims, self.dtype = (
            inner.name,
            inner.dims,
            getattr(inner, "dtype", "float32"),
        )

    def embed(self, texts):
        def timed():
            start = time.perf_counter()
            vectors = self.inner.embed(texts)
            self.seconds += time.perf_counter() - start
            self.rows += len(texts)
            print(
                f"{self.name}: {self.rows} rows in {self.seconds:.1f} s",
                file=sys.stderr,
                flush=True,
            )
            return vectors

        return self.turns.run(self.name, timed)


def _sample_copy(folder: Path):
    import shutil

    from hindcast.archive.snapshot import open_snapshot

    shipped = ROOT / "archive" / "sample"
    snapshot_id = (shipped / "LATEST").read_text().strip()
    shutil.copytree(shipped / "snapshots" / snapshot_id, folder / "snapshots" / snapshot_id)
    (folder / "LATEST").write_text(snapshot_id + "\n")
    return open_snapshot(folder)


def through_index(chunk_rows: int) -> dict:
    import tempfile
    import threading

    from hindcast.archive.embed import DEFAULT, get_embedder
    from hindcast.archive.index import build_index

    keys = {"fp32": "minilm-fp32", "default": DEFAULT}
    embedders = {label: get_embedder(key) for label, key in keys.items()}
    embedders["fp32"].embed(["warm up"])  # the shared model is loaded before either clock starts
    turns = _Turns([e.name for e in embedders.values()])
    timed = {label: _Timed(e, turns) for label, e in embedders.items()}
    scratch = Path(tempfile.mkdtemp(prefix="hindcast-embedders-"))
    snaps = {label: _sample_copy(scratch / label) for label in keys}
    walls = {}

    def build(label):
        start = time.perf_counter()
        try:
            build_index(snaps[label], timed[label], chunk_rows=chunk_rows)
        finally:
            walls[label] = time.perf_counter() - start
            turns.done(timed[label].name)

    threads = [threading.Thread(target=build, args=(label,)) for label in keys]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return _index_summary(keys, embedders, timed, walls, snaps)


def _index_summary(keys, embedders, timed, walls, snaps) -> dict:
    from hindcast.archive.index import open_index

    asked = questions()
    vectors = {
        label: _stored_vectors(open_index(snaps[label], embedders[label].name)) for label in keys
    }
    truth = top10(unit(embedders["fp32"].embed(asked)), vectors["fp32"])
    found = top10(unit(embedders["default"].embed(asked)), vectors["default"])
    hits = sum(len(set(a) & set(b)) for a, b in zip(truth, found))
    out = {
        label: {
            "embedder": embedders[label].name,
            "documents": timed[label].rows,
            "embed_seconds": round(timed[label].seconds, 1),
            "build_wall_s_interleaved": round(walls[label], 1),
            "docs_per_embed_s": round(timed[label].rows / timed[label].seconds, 1),
        }
        for label in keys
    }
    speed = out["default"]["docs_per_embed_s"] / out["fp32"]["docs_per_embed_s"]
    return {
        "mode": "through build_index, alternating chunks",
        "queries": len(asked),
        **out,
        "speed_default_vs_fp32": round(speed, 2),
        "recall_at_10_default_vs_fp32": round(hits / truth.size, 4),
    }


def _stored_vectors(reader):
    import numpy as np

    from hindcast.archive import layout

    return unit(
        np.concatenate(
            [
                np.load(layout.vector_chunk_dir(reader.root, m) / "vectors.npy")
                for m in reader.months
            ]
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--index", action="store_true", help="fp32 against the default through build_index"
    )
    parser.add_argument("--chunk-rows", type=int, default=512, help="with --index: rows per turn")
    parser.add_argument("--limit", type=int, default=None, help="only the first N headlines")
    parser.add_argument(
        "--rounds", type=int, default=1, help="timed rounds per variant (best is reported)"
    )
    parser.add_argument(
        "--variants",
        default="",
        help="comma-separated subset of fp32,bf16,int8-dynamic [default: all]",
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    machine = cpu()
    print(json.dumps({"cpu": machine}), file=sys.stderr, flush=True)  # before the slow part
    if args.index:
        result = {"cpu": machine, **through_index(args.chunk_rows)}
    else:
        texts, asked = headlines(args.limit), questions()
        only = tuple(v for v in args.variants.split(",") if v)
        found = measure(texts, asked, args.rounds, only)
        result = {
            "cpu": machine,
            "documents": len(texts),
            "queries": len(asked),
            "variants": found,
            "default_vs_fp32": default_vs_fp32(found, machine),
        }
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
