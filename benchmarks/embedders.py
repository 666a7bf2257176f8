"""Faster CPU variants of the MiniLM embedder against fp32, on the shipped headlines.

    python benchmarks/embedders.py [--limit N] [--json out.json]

For each variant — fp32 (the baseline), bf16 autocast, int8 dynamic quantization of the
Linear layers — it embeds the same texts (all 46,809 headlines of `archive/sample` by
default, so nothing outside the repository is needed) and the 57 market questions of
`markets/sample`, and reports:

- documents/s and the ratio to fp32 measured in the same run (variants alternate, so load
  on a shared machine falls on all of them alike);
- recall@10: the share of fp32's top-10 documents (exact dot product over every document)
  that the variant's own top-10 finds, queries and documents both embedded by the variant;
- the smallest cosine between a document's fp32 and variant vectors.
"""

from __future__ import annotations

import argparse
import json
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


def variants(model):
    """name → a function texts → unit float32 rows."""
    import torch

    def fp32(texts):
        return model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True,
                            show_progress_bar=False)

    def bf16(texts):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return fp32(texts)

    quantized = torch.ao.quantization.quantize_dynamic(_clone(model), {torch.nn.Linear}, dtype=torch.qint8)

    def int8(texts):
        return quantized.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True,
                                show_progress_bar=False)

    return {"fp32": fp32, "bf16": bf16, "int8-dynamic": int8}


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


def measure(texts: list[str], asked: list[str], rounds: int) -> dict:
    from hindcast.archive.embed import MiniLMEmbedder

    fns = variants(MiniLMEmbedder().model())
    seconds = {name: [] for name in fns}
    vectors = {}
    for r in range(rounds):
        order = list(fns) if r % 2 == 0 else list(reversed(fns))
        for name in order:
            start = time.perf_counter()
            vectors[name] = unit(fns[name](texts))
            seconds[name].append(time.perf_counter() - start)
    queries = {name: unit(fn(asked)) for name, fn in fns.items()}
    truth = top10(queries["fp32"], vectors["fp32"])
    out = {}
    for name in fns:
        found = top10(queries[name], vectors[name])
        hits = sum(len(set(a) & set(b)) for a, b in zip(truth, found))
        rate = len(texts) / min(seconds[name])
        out[name] = {"docs_per_s": round(rate, 1), "recall_at_10": round(hits / truth.size, 4),
                     "min_cosine_vs_fp32": round(float((vectors[name] * vectors["fp32"]).sum(axis=1).min()), 5)}
    base = out["fp32"]["docs_per_s"]
    for name in out:
        out[name]["speed_vs_fp32"] = round(out[name]["docs_per_s"] / base, 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N headlines")
    parser.add_argument("--rounds", type=int, default=1, help="timed rounds per variant (best is reported)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    texts, asked = headlines(args.limit), questions()
    result = {"documents": len(texts), "queries": len(asked), "variants": measure(texts, asked, args.rounds)}
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
