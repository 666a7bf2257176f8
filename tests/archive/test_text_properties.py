"""Full-text and hybrid results are a function of the archive before t0 alone.

For random archives and t0s: the results (ids, order AND scores) of a query are identical
whether or not the documents created at or after t0 exist in the archive — built as two
real snapshots and indexes, searched through the real TimeBoundRetriever. The vector
search has the same property (tests/archive/test_properties.py checks it against an
oracle); BM25 used to take its word statistics from the whole month.

A second, cheaper property runs the BM25 module alone (hindcast.archive.text) many times:
same results with or without the late documents, and scores equal to a BM25 computed
from scratch over exactly the visible documents.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hindcast.archive import docs, text
from hindcast.archive.embed import HashEmbedder
from hindcast.archive.index import build_index, open_index
from hindcast.archive.retriever import TimeBoundRetriever
from hindcast.archive.snapshot import build_snapshot, open_snapshot

ARCHIVES = int(os.environ.get("HINDCAST_TEXT_ARCHIVES", "25"))
MODULE_CASES = int(os.environ.get("HINDCAST_TEXT_CASES", "300"))
WORDS = "fed rate cut bill vote senate oil war iran tariff court ruling".split()
START = datetime(2024, 1, 1, tzinfo=timezone.utc)
HOURS = 24 * 90  # three months on an hourly grid: many exact ties of creation time

word_lists = st.lists(st.sampled_from(WORDS), min_size=0, max_size=8)
document = st.tuples(
    st.integers(0, HOURS - 1),
    word_lists,
    word_lists,
    st.sampled_from([None, None, None, 0, 1]),
    st.integers(0, 24 * 40),
)
archives = st.lists(document, min_size=1, max_size=60)
queries = st.lists(st.sampled_from([*WORDS, "unknownword"]), min_size=1, max_size=3).map(" ".join)


def _rows(spec) -> list[dict]:
    rows = []
    for i, (hour, title, body, edit, later) in enumerate(spec):
        created = START + timedelta(hours=hour)
        row = {
            "id": f"d{i}",
            "created_at": created.isoformat(),
            "title": " ".join(title) or "x",
            "text": " ".join(body),
            "source": "test",
        }
        if edit is not None:  # edited at creation + `later` hours (possibly after t0)
            row["edited_at"] = (created + timedelta(hours=later)).isoformat()
        rows.append(row)
    return rows


def _archive(folder: Path, rows: list[dict]):
    folder.mkdir(parents=True)
    path = folder / "news.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    snap = open_snapshot(folder, build_snapshot([path], "news", "news", folder))
    build_index(snap, HashEmbedder())
    return snap, open_index(snap)


def _results(world, t0, query, k, mode, policy):
    snap, index = world
    hits = TimeBoundRetriever(snap, t0, index=index, edit_policy=policy).search(
        query, k=k, mode=mode
    )
    return [(h.doc.id, h.score) for h in hits]


@settings(
    max_examples=ARCHIVES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    spec=archives,
    cut=st.integers(0, HOURS),
    offset=st.sampled_from([0, 1, 1800]),
    asks=st.lists(st.tuples(queries, st.integers(1, 12)), min_size=6, max_size=6),
)
def test_text_and_hybrid_do_not_change_when_late_documents_exist(
    tmp_path_factory, spec, cut, offset, asks
):
    t0 = START + timedelta(hours=cut, seconds=offset)
    rows = _rows(spec)
    early = [r for r in rows if datetime.fromisoformat(r["created_at"]) < t0]
    assume(early and len(early) < len(rows))
    folder = tmp_path_factory.mktemp("late")
    full, before = _archive(folder / "full", rows), _archive(folder / "before", early)
    for query, k in asks:
        for mode in ("text", "hybrid"):
            for policy in ("strict", "ignore"):
                assert _results(full, t0, query, k, mode, policy) == _results(
                    before, t0, query, k, mode, policy
                ), (query, k, mode, policy)


# ---- the BM25 module alone -------------------------------------------------------------
def _months(rows: list[tuple[int, str, int]]) -> dict[str, list[tuple[int, str, int]]]:
    """(created, text, edit) rows by month (month = created // 100), each in time order."""
    out: dict[str, list] = {}
    for row in sorted(rows, key=lambda r: r[0]):
        out.setdefault(f"m{row[0] // 100:02d}", []).append(row)
    return out


def _top(rows, t0: int, query: str, n: int, strict: bool):
    views, ids = [], {}
    for month, part in sorted(_months(rows).items()):
        if month > f"m{t0 // 100:02d}":
            continue
        created = np.array([r[0] for r in part], dtype=np.int64)
        edit = np.array([r[2] for r in part], dtype=np.int64)
        postings = text.Postings(**text.build([r[1] for r in part]))
        views.append(
            text.View(
                month, postings, int(np.searchsorted(created, t0)), edit, t0 if strict else None
            )
        )
        ids.update({(month, i): r for i, r in enumerate(part)})
    return [(score, ids[(month, i)]) for score, month, i in text.top(views, query, n)]


def _bm25(rows, t0: int, query: str, strict: bool) -> dict:
    """BM25 from scratch over exactly the visible rows."""
    seen = [r for r in rows if r[0] < t0 and (not strict or r[2] < t0)]
    if not seen:
        return {}
    lengths = {r: len(text.tokens(r[1])) for r in seen}
    avg = sum(lengths.values()) / len(seen)
    scores = {}
    for term in text.query_terms(query):
        df = sum(1 for r in seen if term in text.tokens(r[1]))
        idf = math.log(1 + (len(seen) - df + 0.5) / (df + 0.5))
        for r in seen:
            tf = Counter(text.tokens(r[1]))[term]
            if tf:
                scores[r] = scores.get(r, 0.0) + idf * tf * 2.2 / (
                    tf + 1.2 * (0.25 + 0.75 * lengths[r] / avg)
                )
    return scores


module_rows = st.lists(
    st.tuples(
        st.integers(0, 399),
        word_lists.map(" ".join),
        st.sampled_from([docs.INT64_MIN, 150, 250, 399]),
    ),
    min_size=1,
    max_size=80,
    unique_by=lambda r: (r[0], r[1]),
)


@settings(max_examples=MODULE_CASES, deadline=None, database=None)
@given(
    rows=module_rows,
    t0=st.integers(0, 420),
    query=queries,
    n=st.integers(1, 20),
    strict=st.booleans(),
)
def test_bm25_counts_exactly_the_visible_documents(rows, t0, query, n, strict):
    got = _top(rows, t0, query, n, strict)
    assert got == _top([r for r in rows if r[0] < t0], t0, query, n, strict)
    expected = _bm25(rows, t0, query, strict)
    assert len(got) == min(n, len(expected))
    for score, row in got:
        assert math.isclose(score, expected[row], rel_tol=1e-12)
    assert [s for s, _ in got] == sorted((s for s, _ in got), reverse=True)
    assert all(
        expected[row] <= got[-1][0] + 1e-12 for row in expected if row not in {r for _, r in got}
    )


def test_a_months_postings_find_each_term_where_the_sorted_vocabulary_has_it_every_time():
    """`Postings.find` keeps what it looked up (a month's postings serve many queries): asked
    twice, in any order, for present and absent terms, it gives the term's place in the sorted
    vocabulary, computed here from the texts."""
    texts = ["fed rate cut", "senate vote on the oil bill", "court ruling on tariff", "iran war"]
    postings = text.Postings(**text.build(texts))
    vocabulary = sorted({t for x in texts for t in text.tokens(x)}, key=lambda t: t.encode())
    asked = vocabulary[::-1] + ["absent", "zzz", "aaa"] + vocabulary
    for term in asked + asked:
        expected = vocabulary.index(term) if term in vocabulary else None
        assert postings.find(term) == expected, term
