"""The evidence procedure (`hindcast.audit.evidence`) over many (market, t0) at once.

Same answers as one search per pair, less work:
- pairs asking the same question at the same t0 (every field but the market id: the detector
  reads no id) are computed once and the answer copied to each market;
- pairs are visited in t0 order, one retriever per distinct t0;
- every query of the batch is embedded up front, `EMBED_BATCH` texts a call, with the index's
  embedder (the retriever then looks its query up instead of embedding it alone: one query a
  call cost ~1.5 s on 2 loaded cores, a batch of 256 a few seconds);
- answers are handed back `BATCH` pairs at a time, so the caller keeps them as it goes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from itertools import groupby

__all__ = ["BATCH", "EMBED_BATCH", "QueryVectors", "compute"]

BATCH = 500
EMBED_BATCH = 256


class QueryVectors:
    """An embedder whose answers for known texts were computed up front in batches; any other
    text is embedded by the wrapped one (same name and dims: the index accepts it)."""

    def __init__(self, embedder, texts: Sequence[str]):
        import numpy as np

        self.inner, self.name, self.dims = embedder, embedder.name, embedder.dims
        self.dtype = getattr(embedder, "dtype", "float32")
        unique = sorted(set(texts))
        self.memo: dict[str, np.ndarray] = {}
        for start in range(0, len(unique), EMBED_BATCH):
            chunk = unique[start : start + EMBED_BATCH]
            vectors = np.asarray(embedder.embed(chunk), dtype=np.float32)
            self.memo.update(zip(chunk, vectors))

    def embed(self, texts: list[str]):
        import numpy as np

        missing = [t for t in texts if t not in self.memo]
        if missing:
            vectors = np.asarray(self.inner.embed(missing), dtype=np.float32)
            self.memo.update(zip(missing, vectors))
        return np.stack([self.memo[t] for t in texts])


def compute(
    questions: Sequence,
    retriever_for: Callable[[datetime], object],
    label_one: Callable[[object, object], object],
    queries_of: Callable[[str], Sequence[str]],
    embedder: Callable[[], object] | None = None,
) -> Iterator[dict]:
    """The labels of `questions` ((market id, t0) → `label_one(question, retriever)`, an
    EvidenceLabel), BATCH-sized dicts at a time. `queries_of`: a question text's queries;
    `embedder`: gives the index's embedder, to embed every query up front (None: each search
    embeds its own; not called when there is nothing to compute)."""
    same: dict[tuple, list] = {}
    for q in questions:
        same.setdefault(_asked(q), []).append(q)
    order = sorted(same, key=lambda key: key[0])  # one retriever per t0
    vectors = None
    if embedder is not None and order:
        texts = [text for key in order for text in queries_of(same[key][0].question)]
        vectors = QueryVectors(embedder(), texts)
    done: dict = {}
    for t0, keys in groupby(order, key=lambda key: key[0]):
        retriever = retriever_for(t0)
        try:
            if vectors is not None and hasattr(retriever, "embedder"):
                retriever.embedder = vectors
            for key in keys:
                label = label_one(same[key][0], retriever)
                for q in same[key]:
                    done[(q.market_id, q.t0)] = replace(label, market_id=q.market_id)
        finally:
            getattr(retriever, "close", lambda: None)()
        if len(done) >= BATCH:
            yield done
            done = {}
    if done:
        yield done


def _asked(question) -> tuple:
    """What the procedure reads of a question: every field but the market id, t0 first."""
    return (
        question.t0,
        question.question,
        question.description,
        question.url,
        question.topic,
        question.scheduled_close,
    )
