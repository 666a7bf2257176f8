"""hindcast's own all-MiniLM-L6-v2 (`hindcast.archive.minilm`: torch and tokenizers alone) gives
the bytes sentence-transformers gives, in fp32 and under bf16 autocast, whatever the batching:
sentence-transformers (a dev dependency) is the reference here, loaded from the same folder.
Marked cpu_default: CI runs it again with AVX2 emulated (other kernels, other last bits)."""

from __future__ import annotations

import contextlib
import itertools

import numpy as np
import pytest
import torch

from hindcast.archive.embed import MiniLMBf16Embedder, MiniLMEmbedder, _minilm_path, document_text
from hindcast.archive.minilm import MiniLM
from tests.helpers import sample_headlines

AWKWARD = [
    "",
    " ",
    "  leading and trailing spaces  ",
    "word " * 400,  # over 256 tokens: truncated
    "Ünïcödé — “quotes” 東京 🎉 naïve café",
    "\t\nnew\nlines\tand tabs\r\n",
    "a",
    "[CLS] [SEP] [PAD] [MASK] [UNK]",
    "Will the Fed cut rates in March 2025?",
]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    """Real headlines of every month (every 293rd of the shipped sample: 160) and awkward texts
    (bf16 under emulated AVX2, as CI runs it again, is slow)."""
    rows = [r for month in sample_headlines().values() for r in month]
    return [document_text(r["title"], "") for r in rows[::293]] + AWKWARD


@pytest.fixture(scope="module")
def reference():
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(_minilm_path()), device="cpu", local_files_only=True)


def _precision(bf16: bool):
    return torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()


@pytest.mark.cpu_default
@pytest.mark.parametrize(("bf16", "batch"), list(itertools.product([False, True], [32, 7])))
def test_the_same_bytes_as_sentence_transformers(texts, reference, bf16, batch):
    with _precision(bf16):
        expected = reference.encode(
            texts, batch_size=batch, normalize_embeddings=True, show_progress_bar=False
        )
        got = MiniLM(_minilm_path()).encode(texts, batch_size=batch)
    assert got.dtype == np.float32 and got.shape == (len(texts), 384)
    assert np.asarray(expected, dtype=np.float32).tobytes() == got.tobytes()


@pytest.mark.cpu_default
@pytest.mark.parametrize("embedder", [MiniLMEmbedder, MiniLMBf16Embedder])
def test_one_query_at_a_time_as_a_search_embeds_it(texts, reference, embedder):
    """A query is embedded alone (no padding, no mask): as sentence-transformers does it."""
    bf16 = embedder is MiniLMBf16Embedder
    for text in texts[-len(AWKWARD) :]:
        with _precision(bf16):
            expected = reference.encode(
                [text], batch_size=32, normalize_embeddings=True, show_progress_bar=False
            )
        expected = np.asarray(expected, dtype=np.float32)
        if bf16:  # the embedder's own last step: unit length in float32
            expected = expected / np.linalg.norm(expected, axis=1, keepdims=True)
        assert embedder().embed([text]).tobytes() == expected.astype(np.float32).tobytes(), text


def test_no_text_is_no_row():
    assert MiniLMEmbedder().embed([]).shape == (0, 384)
