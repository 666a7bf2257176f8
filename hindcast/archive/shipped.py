"""Vectors shipped with an archive: one embedder's vectors of one snapshot, computed once
(`scripts/build_sample_vectors.py`), so that building that index embeds nothing and gives the same
bytes on every CPU. The shipped sample carries MiniLM bf16 vectors of its 46,809 headlines.

```
ARCHIVE/vectors/<snapshot-id>/<embedder>/vectors.npy     float16, every month's rows in index order
ARCHIVE/vectors/<snapshot-id>/<embedder>/manifest.json   what they are the vectors of
```

They are used only when the manifest matches what `build_index` would embed: the snapshot's
texts (sha256 of the texts `build_index` embeds, in its order), the embedder (name, dims,
compute dtype and the sha256 of its model files, `fingerprint()`), and the vectors file itself
(sha256). Anything else and they are not used: the index is embedded as if none shipped. A
snapshot that ships vectors is searched with their embedder by default, on every CPU
(`default_embedder`), so its default index and the run identity that records it do not depend on
the CPU in front of them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hindcast import frozen
from hindcast.archive import index, layout
from hindcast.archive.embed import SHIPPED_MANIFEST as MANIFEST
from hindcast.archive.embed import Embedder

if TYPE_CHECKING:
    import numpy as np
from hindcast.archive.embed import shipped_folder as folder
from hindcast.archive.snapshot import Snapshot

FORMAT = "hindcast-shipped-vectors/1"
VECTORS = "vectors.npy"
STORED = "float16"  # below the bf16 compute's own error; half of float32's bytes


@dataclass(frozen=True)
class Shipped:
    """Verified shipped vectors: the embedder they are the vectors of, and rows per month."""

    folder: Path
    embedder: str
    months: dict[str, int]
    digest: str  # the vectors file's sha256


def texts_digest(snapshot: Snapshot) -> tuple[str, dict[str, int]]:
    """sha256 of the texts `build_index` embeds, month by month in its order; rows per month."""
    digest, months = hashlib.sha256(), {}
    for month in snapshot.months:
        texts = index.month_texts(index.month_rows(snapshot, month))
        months[month] = len(texts)
        digest.update(f"{month}\n{len(texts)}\n".encode())
        for text in texts:
            data = text.encode("utf-8")
            digest.update(len(data).to_bytes(8, "little") + data)
    return digest.hexdigest(), months


def identity(emb: Embedder) -> dict | None:
    """What the vectors are the vectors of: None for an embedder without a `fingerprint()`."""
    fingerprint = getattr(emb, "fingerprint", None)
    if not callable(fingerprint):
        return None
    dtype = getattr(emb, "dtype", "float32")
    return {"name": emb.name, "dims": emb.dims, "dtype": dtype, "model_sha256": fingerprint()}


def find(snapshot: Snapshot, emb: Embedder) -> Shipped | None:
    """The shipped vectors of `emb` for `snapshot`, when every digest matches; else None."""
    where = folder(snapshot) / emb.name
    if not (where / MANIFEST).is_file() or not (where / VECTORS).is_file():
        return None
    manifest = json.loads((where / MANIFEST).read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT or manifest.get("embedder") != identity(emb):
        return None
    digest, months = texts_digest(snapshot)
    if (manifest["texts_sha256"], manifest["months"]) != (digest, months):
        return None
    vectors = frozen.sha256_file(where / VECTORS)
    if manifest["vectors"]["sha256"] != vectors:
        return None
    return Shipped(where, emb.name, months, vectors)


def seed(snapshot: Snapshot, shipped: Shipped, chunk_rows: int = index.CHUNK_ROWS) -> int:
    """Write the shipped vectors as the index's chunk checkpoints (float32) of every month not
    yet indexed, so `build_index` (or its Ray path) reuses them instead of embedding; rows
    written."""
    import numpy as np

    root = layout.index_dir(snapshot.archive, snapshot.id, shipped.embedder)
    done = _indexed(root)
    vectors = np.load(shipped.folder / VECTORS, mmap_mode="r")
    start, written = 0, 0
    for month, rows in shipped.months.items():
        if month not in done:
            for offset in range(0, rows, chunk_rows):
                part = vectors[start + offset : start + min(offset + chunk_rows, rows)]
                index.save_chunk(index.chunk_path(root, month, offset), part.astype(np.float32))
            written += rows
        start += rows
    return written


def record(snapshot: Snapshot, found: Shipped, info: dict) -> dict:
    """The index info, saved with where its vectors came from (the shipped file's sha256)."""
    info = {**info, "shipped_vectors": {"sha256": found.digest, "stored": STORED}}
    index.save_info(layout.index_dir(snapshot.archive, snapshot.id, found.embedder), info)
    return info


def _indexed(root: Path) -> set[str]:
    path = root / index.INFO
    return set(json.loads(path.read_text(encoding="utf-8"))["months"]) if path.exists() else set()


def write(snapshot: Snapshot, emb: Embedder, vectors: np.ndarray, computed: dict) -> Path:
    """Ship `vectors` (every month's rows in index order) as the vectors of `emb` for `snapshot`
    (the build script's step): stored as float16, with their manifest."""
    import numpy as np

    described = identity(emb)
    if described is None:
        raise ValueError(f"embedder {emb.name!r} has no fingerprint(): its vectors cannot ship")
    digest, months = texts_digest(snapshot)
    if vectors.shape != (sum(months.values()), emb.dims):
        raise ValueError(f"vectors of shape {vectors.shape} for {sum(months.values())} rows")
    where = folder(snapshot) / emb.name
    where.mkdir(parents=True, exist_ok=True)
    np.save(where / VECTORS, np.ascontiguousarray(vectors, dtype=STORED))
    manifest = {
        "format": FORMAT,
        "snapshot": snapshot.id,
        "texts_sha256": digest,
        "months": months,
        "embedder": described,
        "vectors": {
            "file": VECTORS,
            "dtype": STORED,
            "shape": list(vectors.shape),
            "sha256": frozen.sha256_file(where / VECTORS),
        },
        "computed": computed,
    }
    frozen.write_text_atomic(where / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return where
