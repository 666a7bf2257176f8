"""Compute the shipped sample's vectors once: archive/sample/vectors/<snapshot>/all-MiniLM-L6-v2-bf16/.

Usage: python scripts/build_sample_vectors.py [--archive archive/sample] [--work DIR]

Every headline of the snapshot is embedded with MiniLM under bf16 autocast exactly as
`build_index` does (the same chunks of rows per month, the same model), in a copy of the archive
under DIR (a new temporary folder by default; an index already built there is reused, so a
stopped run resumes). The vectors are then stored as float16 (`hindcast.archive.shipped`) with a
manifest of the texts' sha256, the embedder (name, dims, dtype, the model files' sha256), the
vectors file's sha256 and what computed them. Run it on a CPU with native bf16 (AVX512_BF16 or
AMX): elsewhere torch emulates bf16 (several times slower, and not the bits of the native
computation), so it refuses.

`hindcast sweep` then builds the sample's index from these vectors on every CPU, embedding
nothing; any change to the sample's texts or to the model makes them unused (the digests differ)
until this script is run again.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from hindcast.archive import index, layout, shipped
from hindcast.archive.embed import MiniLMBf16Embedder, native_bf16
from hindcast.archive.snapshot import open_snapshot


def work_copy(archive: Path, work: Path, snapshot_id: str) -> Path:
    """The archive's snapshot (and LATEST) copied under `work`, once."""
    copy = work / "archive"
    if not layout.snapshot_dir(copy, snapshot_id).is_dir():
        shutil.copytree(
            layout.snapshot_dir(archive, snapshot_id), layout.snapshot_dir(copy, snapshot_id)
        )
        layout.latest_file(copy).write_text(snapshot_id + "\n", encoding="utf-8")
    return copy


def computed_by() -> dict:
    import tokenizers
    import torch

    return {
        "by": "scripts/build_sample_vectors.py",
        "chunk_rows": index.CHUNK_ROWS,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "native_bf16": native_bf16(),
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "tokenizers": tokenizers.__version__,
        "embedder": "hindcast.archive.minilm (sentence-transformers' bits: tests/archive/test_minilm.py)",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=Path, default=Path("archive/sample"))
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--threads", type=int, default=None, help="torch threads [torch's own]")
    args = parser.parse_args()
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    if not native_bf16():
        print(
            "build_sample_vectors: this CPU has no native bf16; run it on one that has",
            file=sys.stderr,
        )
        return 1
    snapshot = open_snapshot(args.archive)
    work = args.work or Path(tempfile.mkdtemp(prefix="sample-vectors-"))
    copy = open_snapshot(work_copy(args.archive, work, snapshot.id), snapshot.id)
    emb = MiniLMBf16Embedder()
    info = index.build_index(
        copy, emb, on_progress=lambda done, total: print(f"{done}/{total}", end="\r")
    )
    root = layout.index_dir(copy.archive, copy.id, info["embedder"])
    import numpy as np

    vectors = np.concatenate(
        [np.load(layout.vector_chunk_dir(root, m) / "vectors.npy") for m in snapshot.months]
    )
    where = shipped.write(snapshot, emb, vectors, computed_by())
    print(
        f"\n{where}: {vectors.shape[0]} vectors ({(where / shipped.VECTORS).stat().st_size:,} bytes)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
