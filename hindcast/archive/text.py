"""Full-text search (BM25) whose word statistics are those of exactly the documents a query
may see, so scores and ranks are a function of the archive before t0 alone.

Built once per month at index time (`build`), stored beside the month's vectors, memory-
mapped on open:

* a sorted vocabulary (UTF-8 terms laid end to end, with their end offsets);
* for each term, the positions of the documents holding it **in the month's (created_us, id)
  order**, ascending, and the term's count in each;
* the running sum of document lengths (tokens), so the length of any prefix is one lookup.

A query at t0 sees, per month ≤ month(t0), the prefix of rows created before t0 (`end`),
minus the rows the edit policy masks (text edited at/after t0 or at an unknown time). Every
statistic is counted over exactly those rows: N (documents), the total length (so the
average length), and each query term's document frequency (its postings below `end`, minus
masked ones: a binary search and a mask over that term's postings only). Months are
pooled: one BM25 over all the visible documents. Integer counts are exact and each
document's score is summed in a fixed order (query terms sorted), so adding documents
created at or after t0 changes no score, no rank and no tie.

BM25 (Robertson/Lucene form): idf = ln(1 + (N − df + 0.5)/(df + 0.5)), term weight
idf · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen)), k1 = 1.2, b = 0.75; distinct query
terms, no stemming, no stop words. Tokens: maximal runs of Unicode word characters
(`\\w+`) of the lower-cased text (Python's `re` and `str.lower`, deterministic for a Python
version). Ties are broken by creation order (month, then position), like the vector search.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

TOKEN = re.compile(r"\w+")
K1, B = 1.2, 0.75
ARRAYS = ("terms", "term_ends", "starts", "docs", "tf", "cum_lengths")
FOUND_KEPT = 1_000_000  # vocabulary lookups a month's postings keep (found or not)


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


def query_terms(query: str) -> list[str]:
    """The distinct terms of a query, sorted (the fixed order scores are summed in)."""
    return sorted(set(tokens(query)))


def build(texts: list[str]) -> dict[str, np.ndarray]:
    """The postings arrays of one month's texts (given in the month's time order)."""
    vocab: dict[str, int] = {}
    term_ids, doc_ids, counts = [], [], []
    lengths = np.zeros(len(texts), dtype=np.int64)
    for position, text in enumerate(texts):
        words = tokens(text)
        lengths[position] = len(words)
        for term, count in Counter(words).items():
            term_ids.append(vocab.setdefault(term, len(vocab)))
            doc_ids.append(position)
            counts.append(count)
    return _arrays(
        vocab,
        np.array(term_ids, dtype=np.int64),
        np.array(doc_ids, dtype=np.int32),
        np.array(counts, dtype=np.int32),
        lengths,
    )


def _arrays(vocab: dict[str, int], term_ids, doc_ids, counts, lengths) -> dict[str, np.ndarray]:
    ordered = sorted(vocab)  # code-point order = UTF-8 byte order
    rank = np.empty(len(vocab), dtype=np.int64)
    rank[[vocab[t] for t in ordered]] = np.arange(len(vocab))
    ranks = rank[term_ids] if term_ids.size else term_ids
    order = np.argsort(ranks, kind="stable")  # documents stay ascending within a term
    encoded = [t.encode("utf-8") for t in ordered]
    return {
        "terms": np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(),
        "term_ends": np.cumsum([len(e) for e in encoded], dtype=np.int64),
        "starts": np.concatenate([[0], np.cumsum(np.bincount(ranks, minlength=len(vocab)))]).astype(
            np.int64
        ),
        "docs": doc_ids[order],
        "tf": counts[order],
        "cum_lengths": np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
    }


def write(folder: Path, arrays: dict[str, np.ndarray], save) -> None:
    """Write every array with `save(folder, name, array)` (the index's atomic writer)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ARRAYS:
        save(folder, name, arrays[name])


def exists(folder: Path) -> bool:
    return all((folder / f"{name}.npy").exists() for name in ARRAYS)


@dataclass(frozen=True)
class Postings:
    """One month's memory-mapped postings (see the module doc)."""

    terms: np.ndarray
    term_ends: np.ndarray
    starts: np.ndarray
    docs: np.ndarray
    tf: np.ndarray
    cum_lengths: np.ndarray
    found: dict[str, int | None] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def load(cls, folder: Path) -> "Postings":
        return cls(**{name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in ARRAYS})

    def find(self, term: str) -> int | None:
        """The vocabulary index of `term`, or None: each term searched for once (kept in `found`),
        by binary search over the sorted terms."""
        if term not in self.found:
            if len(self.found) >= FOUND_KEPT:
                self.found.clear()
            self.found[term] = self._search(term)
        return self.found[term]

    def _search(self, term: str) -> int | None:
        key, low, high = term.encode("utf-8"), 0, self.term_ends.size
        while low < high:
            middle = (low + high) // 2
            if self._term(middle) < key:
                low = middle + 1
            else:
                high = middle
        return low if low < self.term_ends.size and self._term(low) == key else None

    def _term(self, index: int) -> bytes:
        start = int(self.term_ends[index - 1]) if index else 0
        return bytes(self.terms[start : int(self.term_ends[index])])

    def visible(
        self, index: int, end: int, edit_us, mask_from: int | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(positions, counts) of a term's documents among rows [0, end) the policy lets through."""
        lo, hi = int(self.starts[index]), int(self.starts[index + 1])
        docs = np.asarray(self.docs[lo:hi])
        cut = int(np.searchsorted(docs, end, side="left"))
        docs, counts = docs[:cut], np.asarray(self.tf[lo : lo + cut])
        if mask_from is not None:
            keep = np.asarray(edit_us)[docs] < mask_from
            docs, counts = docs[keep], counts[keep]
        return docs.astype(np.int64), counts.astype(np.float64)


@dataclass(frozen=True)
class View:
    """What one month lets a query at t0 see: its postings, the row cut, the edit mask."""

    month: str
    postings: Postings
    end: int
    edit_us: np.ndarray
    mask_from: int | None

    def size(self) -> tuple[int, int]:
        """(visible documents, their total length) — exact integers."""
        total = int(self.postings.cum_lengths[self.end])
        if self.mask_from is None:
            return self.end, total
        masked = np.flatnonzero(np.asarray(self.edit_us[: self.end]) >= self.mask_from)
        lengths = np.asarray(self.postings.cum_lengths)
        return self.end - masked.size, total - int((lengths[masked + 1] - lengths[masked]).sum())


def top(views: list[View], query: str, n: int) -> list[tuple[float, str, int]]:
    """The best `n` (score, month, position) by BM25 over every visible row of `views`, best
    first, ties to the earlier document: `counts` of every month, then `tops` with the idf and
    average length of them all (two steps, so month shards elsewhere give the same bits)."""
    terms = query_terms(query)
    if not terms or n < 1:
        return []
    found = counts(views, terms)
    return tops(views, terms, *weights_of(*found), n) if found[0] else []


def counts(views: list[View], terms: list[str]) -> tuple[int, int, list[int]]:
    """(visible documents, their total length, each term's document frequency) over `views`:
    exact integers, so the sums of several shards' counts are the counts of their union."""
    sizes = [view.size() for view in views]
    dfs = [sum(_hit(view, term)[0].size for view in views) for term in terms]
    return sum(s[0] for s in sizes), sum(s[1] for s in sizes), dfs


def weights_of(count: int, total: int, dfs: list[int]) -> tuple[list[float], float]:
    """(each term's idf, the average length) of `counts` (count > 0)."""
    return [_idf(count, df) for df in dfs], total / count


def tops(
    views: list[View], terms: list[str], idf: list[float], avg: float, n: int
) -> list[tuple[float, str, int]]:
    """The best `n` (score, month, position) of `views` under the given idf and average length."""
    best = [
        c
        for view in views
        for c in _month_top(view, [_hit(view, term) for term in terms], idf, avg, n)
    ]
    best.sort(key=lambda c: (-c[0], c[1], c[2]))
    return best[:n]


def _hit(view: View, term: str) -> tuple[np.ndarray, np.ndarray]:
    index = view.postings.find(term)
    if index is None:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
    return view.postings.visible(index, view.end, view.edit_us, view.mask_from)


def _idf(count: int, df: int) -> float:
    return math.log(1.0 + (count - df + 0.5) / (df + 0.5))


def _month_top(
    view: View, hits: list[tuple[np.ndarray, np.ndarray]], idf: list[float], avg: float, n: int
) -> list[tuple[float, str, int]]:
    positions = np.concatenate([docs for docs, _ in hits])
    if positions.size == 0:
        return []
    lengths = np.asarray(view.postings.cum_lengths)
    weights = np.concatenate(
        [_weights(docs, tf, w, lengths, avg) for (docs, tf), w in zip(hits, idf)]
    )
    sums = np.bincount(positions, weights=weights)  # per document, added in query-term order
    found = np.flatnonzero(sums)  # every weight is > 0, so exactly the documents hit
    scores = sums[found]
    if scores.size > n:
        keep = (
            scores >= np.partition(scores, scores.size - n)[scores.size - n]
        )  # every tie of the n-th kept
        found, scores = found[keep], scores[keep]
    order = np.lexsort((found, -scores))[:n]
    return [(float(scores[i]), view.month, int(found[i])) for i in order]


def _weights(
    docs: np.ndarray, tf: np.ndarray, idf: float, lengths: np.ndarray, avg: float
) -> np.ndarray:
    size = (lengths[docs + 1] - lengths[docs]).astype(np.float64)
    return idf * (tf * (K1 + 1.0)) / (tf + K1 * (1.0 - B + B * size / avg))
