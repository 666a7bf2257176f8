# recipe: docs/recipes/own_embedder.py
"""Your own embedder: a class, registered, indexing a copy of the shipped archive sample and searching it at a t0."""
import shutil
import zlib
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

import hindcast


class TrigramEmbedder:
    """Hashed character trigrams. An embedder has a `name` (recorded with the index), `dims`,
    and `embed(texts)` → an (n, dims) float32 array of unit-length rows (zero rows allowed)."""

    name, dims = "trigrams-256", 256

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            padded = f"  {text.lower()} "
            for i in range(len(padded) - 2):  # crc32: the same vector in every process
                out[row, zlib.crc32(padded[i:i + 3].encode()) % self.dims] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


# Registered under its recorded name, so every search of this index (a sweep's too) finds it.
# Packages register a factory under the entry-point group `hindcast.embedders` instead.
hindcast.register_embedder(TrigramEmbedder.name, TrigramEmbedder)

# A copy of the shipped snapshot (an index is written beside the snapshots of its archive).
shipped = hindcast.sample("archive")
snapshot_id = (shipped / "LATEST").read_text().strip()
archive = Path("my-archive")
if not (archive / "snapshots" / snapshot_id).exists():
    shutil.copytree(shipped / "snapshots" / snapshot_id, archive / "snapshots" / snapshot_id)
(archive / "LATEST").write_text(snapshot_id + "\n")

snapshot = hindcast.open_snapshot(archive)
info = hindcast.build_index(snapshot, "trigrams-256")  # by its registered name (an instance works too)
print(f"indexed {info['documents']} documents of {snapshot.id} with {info['embedder']}")

t0 = datetime(2025, 12, 1, tzinfo=timezone.utc)
retriever = hindcast.TimeBoundRetriever(snapshot, t0)  # finds the index's embedder by its recorded name
for hit in retriever.search("interest rate decision", k=5, mode="vector"):
    print(f"{hit.score:.3f}  {hit.doc.created_at:%Y-%m-%d}  {hit.doc.title[:70]}")
