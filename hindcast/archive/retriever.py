"""TimeBoundRetriever(snapshot, t0): the only way archive documents reach a forecaster.

Every path — vector, full-text and hybrid search, `read`, `thread` — opens only the
months ≤ month(t0) (the index it holds is a `BoundIndex` that refuses any later month),
applies `created_at < t0` and the edit policy **before** ranking (a prefix of the
time-sorted rows; a LanceDB prefilter for reads), and re-checks every row it returns: a
row at or after t0, from a later month, or with text edited at/after t0 (strict policy)
raises `LeakageError`. What was measured after t0 is taken off every document on the way
out (`as_of`): engagement counters, the retrieval instant, a deletion flag (the document
is served as it stood at t0, not deleted), an edit instant at/after t0.

Ranking: vector scores are exact cosines, ties broken by creation order (a two-stage scan
that is provably exact, see `hindcast.archive.scan`); full-text scores are BM25 whose
statistics (N, average length, document frequencies) count exactly the documents visible
at t0 across all months ≤ month(t0) (`hindcast.archive.text`), ties broken by creation
order; hybrid is reciprocal-rank fusion of the two rankings, so it is full whenever k
documents are eligible. All three are functions of the archive before t0 alone.

Where: every step of a search runs over a list of months through `shards`
(`hindcast.archive.shards`) and is merged here in the single-node order — in this process by
default, or as month shards on a Ray cluster (`hindcast.archive.fanout`), with the same bits.

`vector_search="approx"` (opt-in; needs `ann_index.build`): months before month(t0) are searched
through their IVF index (`hindcast.archive.ann`: the exact top-n among the `nprobe` best
lists, the exact scan of the month when that probe is short), the boundary month by the
exact scan; the merge, the time cut, the edit mask and the final check are the same. Its
recall is measured (`info["ann"]`), not proven; the default `exact` is unchanged.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from hindcast.archive import docs, text
from hindcast.archive.embed import Embedder
from hindcast.archive.index import IndexReader, open_index
from hindcast.archive.shards import BoundIndex, Local, Shards, merge
from hindcast.archive.snapshot import Snapshot
from hindcast.errors import LeakageError, RetrievalError
from hindcast.records import Document
from hindcast.timeutil import iso, month_key, require_aware

Mode = Literal["vector", "text", "hybrid"]
EditPolicy = Literal["strict", "ignore"]
VectorSearch = Literal["exact", "approx"]
MODES = ("vector", "text", "hybrid")
VECTOR_SEARCHES = ("exact", "approx")
RRF_K = 60
MAX_K = 1000


@dataclass(frozen=True, slots=True)
class Hit:
    doc: Document
    score: float
    mode: str


class TimeBoundRetriever:
    """Search, read and expand threads of a snapshot as it stood just before `t0`."""

    def __init__(
        self,
        snapshot: Snapshot,
        t0: datetime,
        *,
        embedder: Embedder | str | None = None,
        edit_policy: EditPolicy = "strict",
        index: IndexReader | None = None,
        vector_search: VectorSearch = "exact",
        nprobe: int | None = None,
        shards: Shards | None = None,
    ):
        if edit_policy not in ("strict", "ignore"):
            raise RetrievalError(f"edit policy {edit_policy!r}: use strict or ignore")
        _check_vector_search(vector_search, nprobe)
        self.t0, self.edit_policy = require_aware(t0), edit_policy
        self.t0_us, self.month = docs.micros(self.t0), month_key(self.t0)
        reader = index or open_index(
            snapshot, embedder if isinstance(embedder, str) or embedder is None else embedder.name
        )
        self.embedder = embedder if isinstance(embedder, Embedder) else None
        if reader.info["snapshot"] != snapshot.id:
            raise RetrievalError(
                f"index {reader.root} belongs to snapshot {reader.info['snapshot']}, not "
                f"{snapshot.id}"
            )
        self.index = BoundIndex(reader, self.month)
        self.months = list(self.index.months)
        self.shards = shards or Local(self.index)  # where the months are searched
        self.mask_from = self.t0_us if edit_policy == "strict" else None
        self._opened = None if index is not None else reader  # an index it opened itself, it closes
        self.vector_search, self.nprobe = vector_search, _nprobe(reader, vector_search, nprobe)

    def close(self) -> None:
        """Stop the scan threads of the index this retriever opened (one
        passed in is its owner's)."""
        if self._opened is not None:
            self._opened.close()

    def __enter__(self) -> TimeBoundRetriever:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- public API -------------------------------------------------------------------
    def search(self, query: str, k: int = 10, mode: Mode = "hybrid") -> list[Hit]:
        if not isinstance(mode, str) or mode not in MODES:
            raise RetrievalError(f"search mode {mode!r}: use {', '.join(MODES)}")
        check_k(k)
        if not isinstance(query, str):
            raise RetrievalError(f"query must be a string, got {type(query).__name__}")
        if mode == "vector":
            return self._hits(self._vector(query, k), "vector")
        if mode == "text":
            return self._hits(self._text(query, k), "text")
        return self._hits(self._hybrid(query, k), "hybrid")

    def read(self, doc_id: str) -> Document | None:
        """The document `doc_id` if it was visible before t0, else None
        (absent or not yet visible)."""
        rows = [
            row
            for month_rows in self._rows(self.months, f"id = {_quote(doc_id)}", 1)
            for row in month_rows
        ]
        return self._admit(docs.from_row(rows[0])) if rows else None

    def thread(self, submission_id: str) -> list[Document]:
        """The submission and its comments visible before t0, in time order ([] if not visible)."""
        head = self.read(submission_id)
        if head is None:
            return []
        months = [m for m in self.months if m >= month_key(head.created_at)]
        found = self._rows(months, f"thread_id = {_quote(submission_id)}", None)
        members = {head.id: head} | {
            r["id"]: self._admit(docs.from_row(r)) for rows in found for r in rows
        }
        return sorted(members.values(), key=lambda d: (d.created_at, d.id))

    # ---- ranking: steps run by the shards over the months ≤ month(t0), merged here ----------
    def _each(self, months: list[str], step: str, *args) -> list:
        return self.shards.each(self.month, months, self.t0_us, self.mask_from, step, *args)

    def _vector(self, query: str, n: int) -> list[tuple[Document, float]]:
        import numpy as np

        q = np.asarray(self._embedder().embed([query])[0], dtype=np.float32)
        if self.vector_search == "exact":
            return self._fetch(merge(self._each(self.months, "exact", q, n), n))
        found = self._each(self.months, "probed", q, n, self.nprobe, self.month)
        best = merge([top for top, _ in found], n)
        if len(best) < n and any(indexed for _, indexed in found):  # ann.rank's second group
            rest = self._each(self.months, "rest", q, n, self.nprobe, self.month)
            best += merge(rest, n - len(best))
        return self._fetch(best)

    def _fetch(self, best: list[tuple[float, str, int]]) -> list[tuple[Document, float]]:
        wanted: dict[str, list[int]] = {}
        for _, month, offset in best:
            wanted.setdefault(month, []).append(offset)
        rows = {
            k: v for found in self._each(sorted(wanted), "take", wanted) for k, v in found.items()
        }
        return [(docs.from_row(rows[(month, offset)]), score) for score, month, offset in best]

    def _text(self, query: str, n: int) -> list[tuple[Document, float]]:
        terms = text.query_terms(query)
        if not terms:
            return []
        counts = self._each(self.months, "text_counts", terms)
        count, total = sum(c[0] for c in counts), sum(c[1] for c in counts)
        if count == 0:
            return []
        dfs = [sum(c[2][t] for c in counts) for t in range(len(terms))]
        idf, avg = text.weights_of(count, total, dfs)
        return self._fetch(merge(self._each(self.months, "text_top", terms, idf, avg, n), n))

    def _rows(self, months: list[str], condition: str, limit: int | None) -> list[list[dict]]:
        """Each of `months`' rows matching `condition` and visible at t0, in month order."""
        where = f"({condition}) AND {self._filter()}"
        found: dict[str, list[dict]] = {}
        for part in self._each(months, "rows", where, docs.schema().names, limit):
            found.update(part)
        return [found[m] for m in months]

    def _hybrid(self, query: str, k: int) -> list[tuple[Document, float]]:
        """Reciprocal-rank fusion of the vector and full-text rankings (each
        already time-bounded)."""
        depth = max(2 * k, 20)
        fused: dict[str, list] = {}
        for ranking in (self._vector(query, depth), self._text(query, depth)):
            for rank, (doc, _) in enumerate(ranking):
                entry = fused.setdefault(doc.id, [doc, 0.0])
                entry[1] += 1.0 / (RRF_K + rank + 1)
        ranked = sorted(fused.values(), key=lambda e: (-e[1], e[0].id))
        return [(doc, score) for doc, score in ranked[:k]]

    # ---- filters and the final check -----------------------------------------------------
    def _filter(self) -> str:
        edit = f" AND edit_us < {self.t0_us}" if self.edit_policy == "strict" else ""
        return f"created_us < {self.t0_us}{edit}"

    def _hits(self, ranked: list[tuple[Document, float]], mode: str) -> list[Hit]:
        return [Hit(self._admit(doc), score, mode) for doc, score in ranked]

    def _admit(self, doc: Document) -> Document:
        """Re-check one outgoing document against t0 (LeakageError); serve it as of t0."""
        if not doc.created_at < self.t0 or month_key(doc.created_at) > self.month:
            raise LeakageError(
                f"document {doc.id} created {iso(doc.created_at)} is not before t0 {iso(self.t0)}"
            )
        if self.edit_policy == "strict" and not _edited_before(doc, self.t0):
            raise LeakageError(
                f"document {doc.id} was edited at/after t0 {iso(self.t0)} or at an unknown time"
            )
        return as_of(doc, self.t0)

    def _embedder(self) -> Embedder:
        return self.embedder or self.index.embedder()


def as_of(doc: Document, t0: datetime) -> Document:
    """`doc` without what was measured at or after t0: counters, the retrieval instant and the
    deletion flag when it was retrieved at/after t0 (or at an unknown time) — it was not known
    deleted at t0 — and an edit instant at/after t0 (only under the `ignore` policy: the
    text is as retrieved, edited at a time not told)."""
    if doc.retrieved_at is None or doc.retrieved_at >= t0:
        doc = dataclasses.replace(
            doc, score=None, num_comments=None, retrieved_at=None, deleted=False
        )
    if doc.edited_at is not None and doc.edited_at >= t0:  # edit_state "at"
        doc = dataclasses.replace(doc, edit_state="unknown", edited_at=None)
    return doc


def _check_vector_search(vector_search, nprobe) -> None:
    import numbers

    if not isinstance(vector_search, str) or vector_search not in VECTOR_SEARCHES:
        raise RetrievalError(f"vector search {vector_search!r}: use {' or '.join(VECTOR_SEARCHES)}")
    if nprobe is not None and (
        isinstance(nprobe, bool) or not isinstance(nprobe, numbers.Integral) or nprobe < 1
    ):
        raise RetrievalError(f"nprobe must be a positive integer, got {nprobe!r}")


def _nprobe(reader: IndexReader, vector_search: str, nprobe: int | None) -> int | None:
    """The lists probed per closed month in approx mode (the index's recorded
    default when not given)."""
    if vector_search != "approx":
        return None
    if "ann" not in reader.info:
        raise RetrievalError(
            f"index {reader.root} has no approximate index; run `hindcast archive embed --approx`"
        )
    return int(nprobe) if nprobe is not None else int(reader.info["ann"]["nprobe"])


def check_k(k) -> int:
    """`k` must be an integer from 1 to MAX_K (a bool, a float or a huge value is refused)."""
    import numbers

    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise RetrievalError(f"k must be an integer from 1 to {MAX_K}, got {k!r}")
    if not 1 <= int(k) <= MAX_K:
        raise RetrievalError(f"k must be an integer from 1 to {MAX_K}, got {k}")
    return int(k)


def _edited_before(doc: Document, t0: datetime) -> bool:
    return doc.edit_state == "never" or (doc.edited_at is not None and doc.edited_at < t0)


def _quote(value: str) -> str:
    if not isinstance(value, str):
        raise RetrievalError(f"a document id must be a string, got {type(value).__name__}")
    return "'" + value.replace("'", "''") + "'"
