"""Evidence strata: did the archive before t0 hold decisive evidence for the question? (issue 30)

A fixed procedure, per (market, t0), that never involves a forecaster under test:

1. queries from the question text alone (`queries`): the question as written, and the names it
   holds joined (capitalised words and amounts like $150,000; the leading question word,
   month names and bare numbers left out), when any and different from the text;
2. each query searches the archive as it stood at t0 (a `TimeBoundRetriever`: the same hard
   filter `created_at < t0` as every forecaster's search), hybrid mode, the top K; the union
   of the hits in rank order is what is judged;
3. a fixed leak detector (DETECTOR, from `hindcast.leaks`) judges each retrieved document
   against the question as it stood at t0; the (market, t0) is **present** when at least one
   document is labelled "reveals-outcome" (it states how the question resolved), else
   **absent**.

Two strata, not three: the decision measured against hand labels is one yes/no ("did a
document before t0 settle the question?"), and how much the archive discussed the question
is already the coverage stratum. The detector judges against the question, never the
outcome; the outcome is read only by the benchmark that scores the procedure against hand
labels. Results are kept (`EvidenceCache`: the `analyses` table of the run database, SQLite or
PostgreSQL, `hindcast.runs.analyses`) and computed in batches (`evidence_batch`), keyed by
PROCEDURE (version, detector, K, modes), the archive's identity (snapshot id and index
embedder), the market, the question's SHA-256 as it stood at t0 and t0; nothing is computed
for a forecaster, and nothing of it is shown to one: `hindcast analyze` computes and keeps
them from a stored run; the sweep's report only reads what is kept (its wall time unchanged).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime

from hindcast import archive, leaks, replay, runs, scoring
from hindcast.audit import evidence_batch
from hindcast.audit.stored import question_sha
from hindcast.errors import HindcastError
from hindcast.records import Question
from hindcast.timeutil import iso, parse_utc

PRESENT, ABSENT = "present", "absent"
STRATA = (PRESENT, ABSENT)
K = 10  # top-K hybrid hits per query
MODE = "hybrid"
DETECTOR = "lexical"
VERSION = 1
PROCEDURE = f"evidence-{VERSION}:queries=question+names,mode={MODE},k={K},detector={DETECTOR}"

_NAME = re.compile(r"[A-Z0-9$][\w$.,'’&%-]*")
_QUESTION_WORDS = {"will", "did", "does", "do", "is", "are", "was", "were", "has", "have", "can"}
_MONTHS = {
    m.lower()
    for m in "January February March April May June July August September October November "
    "December".split()
}


@dataclass(frozen=True)
class EvidenceLabel:
    """The procedure's answer for one (market, t0): the stratum, how many distinct pre-t0
    documents were judged, the ids of those labelled "reveals-outcome" and the highest score."""

    market_id: str
    t0: datetime
    stratum: str
    n_docs: int
    flagged: tuple[str, ...]
    best_score: float

    def to_json(self) -> dict:
        return {
            "market_id": self.market_id,
            "t0": iso(self.t0),
            "stratum": self.stratum,
            "n_docs": self.n_docs,
            "flagged": list(self.flagged),
            "best_score": self.best_score,
        }

    @classmethod
    def from_json(cls, d: Mapping) -> EvidenceLabel:
        return cls(
            d["market_id"],
            parse_utc(d["t0"]),
            d["stratum"],
            int(d["n_docs"]),
            tuple(d["flagged"]),
            float(d["best_score"]),
        )


def queries(question: str) -> tuple[str, ...]:
    """The fixed query set of a question: its text, then its names joined (when any, and
    different from the text)."""
    text = " ".join(question.split())
    words = text.rstrip("?").split()
    names = [
        w.strip(".,'’?")
        for i, w in enumerate(words)
        if _NAME.fullmatch(w)
        and not (i == 0 and w.lower() in _QUESTION_WORDS)
        and w.strip(".,").lower() not in _MONTHS
        and not w.strip(".,'’?").isdigit()
    ]
    joined = " ".join(n for n in names if n)
    return (text,) if not joined or joined == text else (text, joined)


def retrieve(retriever, question: str) -> list:
    """The union, in rank order, of the top-K hits of each query (documents before t0 only:
    the retriever applies `created_at < t0` before ranking and re-checks every row)."""
    seen: dict[str, object] = {}
    for query in queries(question):
        for hit in retriever.search(query, K, MODE):
            seen.setdefault(hit.doc.id, hit.doc)
    return list(seen.values())


def doc_text(doc) -> str:
    return " ".join(part for part in (doc.title, doc.text) if part)


async def judge(question: Question, documents: Sequence, detector) -> EvidenceLabel:
    """The stratum of one (market, t0) from its retrieved documents."""
    verdicts = [await detector.judge(doc_text(d), question) for d in documents]
    flagged = tuple(d.id for d, v in zip(documents, verdicts) if v.label == "reveals-outcome")
    best = max((v.score for v in verdicts if v.score == v.score), default=0.0)
    return EvidenceLabel(
        question.market_id,
        question.t0,
        PRESENT if flagged else ABSENT,
        len(documents),
        flagged,
        round(float(best), 4),
    )


def archive_identity(snapshot, index) -> str:
    """What the strata depend on in the archive: the snapshot and the index's embedder."""
    info = {k: index.info.get(k) for k in ("embedder", "dims", "embedder_dtype")}
    return json.dumps({"snapshot": snapshot.id, **info}, sort_keys=True)


def label_all(
    questions: Iterable[Question],
    retriever_for: Callable[[datetime], object],
    identity: str,
    cache: EvidenceCache | None = None,
    detector=None,
    embedder: Callable[[], object] | None = None,
) -> dict[tuple[str, datetime], EvidenceLabel]:
    """The stratum of each question (a market at its t0): from the cache when it holds it, else
    computed (`evidence_batch.compute`: retrieval at t0, then the detector) and kept, a batch
    at a time (a killed run keeps what it finished). `embedder`: gives the index's, to embed
    every query up front in batches (None: each search embeds its own query)."""
    detector = detector if detector is not None else leaks.get_detector(DETECTOR)
    questions = list(questions)
    keys = {(q.market_id, q.t0): key_of(q, identity) for q in questions}
    kept = cache.get_many(list(keys.values())) if cache is not None else {}
    labels = {pair: kept[key] for pair, key in keys.items() if key in kept}
    todo = [q for q in questions if (q.market_id, q.t0) not in labels]

    with closing(_Loop()) as loop:

        def label_one(question: Question, retriever) -> EvidenceLabel:
            return loop.run(judge(question, retrieve(retriever, question.question), detector))

        for done in evidence_batch.compute(todo, retriever_for, label_one, queries, embedder):
            if cache is not None and cache.writable:
                cache.put_many([(keys[pair], label) for pair, label in done.items()])
            labels |= done
    return {(q.market_id, q.t0): labels[(q.market_id, q.t0)] for q in questions}


def key_of(question: Question, identity: str) -> tuple:
    return (PROCEDURE, identity, question.market_id, question_sha(question), iso(question.t0))


class _Loop:
    """One event loop for the judgments of every pair (a loop a pair cost ~2 ms of set-up), on a
    thread of its own: synchronous code runs coroutines on it, also when that code is itself
    called inside a running event loop (the sweep exports its report from inside one)."""

    def __init__(self) -> None:
        self.thread = ThreadPoolExecutor(1, thread_name_prefix="hindcast-evidence")
        self.runner = asyncio.Runner()  # its loop made on that thread, by the first run

    def run(self, coroutine):
        return self.thread.submit(self.runner.run, coroutine).result()

    def close(self) -> None:
        try:
            self.thread.submit(self.runner.close).result()
        finally:
            self.thread.shutdown()


class EvidenceCache:
    """The procedure's answers kept in the run database's backend (`hindcast.runs.analyses`,
    SQLite or PostgreSQL): (procedure, archive identity, market, question SHA, t0) →
    EvidenceLabel. A read-only cache (`writable=False`: exports and reports, which write
    nothing) is only read; what it lacks is computed by the caller and not kept."""

    def __init__(self, db_url: str, writable: bool = True):
        self.store = runs.AnalysisStore(db_url, writable)

    @property
    def writable(self) -> bool:
        return self.store.writable

    def get(self, key: tuple) -> EvidenceLabel | None:
        return self.get_many([key]).get(tuple(key))

    def get_many(self, keys: Sequence[tuple]) -> dict[tuple, EvidenceLabel]:
        """The labels the cache holds of these keys (read in batches over one connection)."""
        found = self.store.get_many(keys)
        return {key: EvidenceLabel.from_json(answer) for key, answer in found.items()}

    def put_many(self, items: Sequence[tuple[tuple, EvidenceLabel]]) -> None:
        self.store.put_many([(key, label.to_json()) for key, label in items])

    def put(self, key: tuple, label: EvidenceLabel) -> None:
        self.put_many([(key, label)])

    def close(self) -> None:
        self.store.close()


# ---- the stratum in `hindcast analyze` and the report ------------------------------------------
def finding(rows: Sequence, labels: Mapping[tuple[str, datetime], EvidenceLabel], note: str = ""):
    """Scores split by the evidence stratum (a hindcast.scoring Finding)."""
    from hindcast.analysis import strata  # the analysis face loads numpy

    present = sum(label.stratum == PRESENT for label in labels.values())
    notes = [
        f"procedure {PROCEDURE}: per (market, t0), the question and its names search the archive "
        f"before t0 (top {K} each, {MODE}); 'present' when the {DETECTOR} detector labels a "
        "retrieved document 'reveals-outcome'; no forecaster is involved",
        f"{present} of {len(labels)} (market, t0) labelled present",
        "its precision and recall against hand labels: docs/evidence-strata.md",
        *([note] if note else []),
    ]
    return strata.evidence_strata(rows, {k: v.stratum for k, v in labels.items()}, notes)


NOT_YET = (
    "not computed by the sweep (on the sample it would add minutes to it): `hindcast analyze "
    "RUN` computes them once and keeps them in the run database; later "
    "reports of the run show them"
)
NOT_KEPT = "not kept"  # run_labels without computing: the cache lacks a pair
NO_INDEX = (
    "the run searched no archive index (baselines only): `hindcast analyze RUN` computes the "
    "strata once the recorded snapshot is embedded (`hindcast archive embed`)"
)


def runs_finding(
    db_url: str,
    scored: Sequence,
    bundles: Sequence,
    snapshots: Sequence,
    rows: Sequence,
    keep: bool = True,
    compute: bool = True,
    ray: str | None = None,
):
    """The evidence Finding of stored runs' scored `rows` (matched on (market, t0) when
    several): each run's pairs labelled from the snapshot it recorded; none with its index on
    this machine: not computed. `compute=False` (exports, reports): only what the cache
    holds; a pair it lacks makes the Finding "not computed" (how to compute them)."""
    labels: dict = {}
    for scores, bundle in zip(scored, bundles):
        found = run_labels(scores, bundle, snapshots, db_url, keep, compute, ray)
        if found == NOT_KEPT:
            return not_computed(NOT_YET)
        labels |= found or {}
    if not labels:
        return not_computed(NO_INDEX)
    return finding(rows, labels)


def not_computed(reason: str):
    return scoring.Finding("evidence", "evidence strata: not computed", ("reason",), ((reason,),))


def plan_labels(plan, db_url: str | None) -> dict[tuple[str, datetime], EvidenceLabel] | None:
    """The strata of a sweep's (market, t0) cutoffs when the cache holds every one (None: not
    all computed yet, or the run searched no archive index); nothing is computed here."""
    if plan.snapshot is None or plan.index is None or not db_url:
        return None
    questions = [replay.question_at(plan.bundle, c) for c in plan.cutoffs]
    identity = archive_identity(plan.snapshot, plan.index)
    where = {"shards": plan.search["shards"]} if "shards" in plan.search else None  # on Ray
    with closing(EvidenceCache(db_url)) as cache:
        if len(cache.get_many([key_of(q, identity) for q in questions])) < len(questions):
            return None  # not computed yet: `hindcast analyze RUN` computes and keeps them
        return label_all(
            questions, replay.retriever_factory(plan.snapshot, plan.index, where), identity, cache
        )


def run_labels(
    scores,
    bundle,
    snapshots: Sequence,
    db_url: str,
    keep: bool = True,
    compute: bool = True,
    ray: str | None = None,
):
    """The strata of a stored run's (market, t0) rows, from the archive snapshot and index it
    recorded (`keep`: what was computed is kept in the cache; None: the run searched no index,
    or that snapshot or its index is not on this machine; NOT_KEPT: `compute` is False and the
    cache lacks a pair; `ray`: the index's months searched on that Ray cluster)."""
    identity = scores.manifest.identity
    snapshot = next((s for s in snapshots if s.id == identity.snapshot), None)
    if snapshot is None or not identity.index:
        return None
    try:
        index = archive.open_index(snapshot, identity.index.get("embedder"))
    except HindcastError:
        return None
    pairs = sorted({(r.market_id, r.t0) for r in scores.rows})
    questions = [replay.question_at(bundle, replay.Cutoff(m, t0, "")) for m, t0 in pairs]
    with closing(index), closing(EvidenceCache(db_url, writable=keep)) as cache:
        identity = archive_identity(snapshot, index)
        keys = [key_of(q, identity) for q in questions]
        if not compute and len(cache.get_many(keys)) < len(keys):
            return NOT_KEPT
        where = archive.fanout.searched_on(index, ray if compute else None)
        try:
            return label_all(
                questions,
                replay.retriever_factory(snapshot, index, where),
                identity,
                cache,
                embedder=index.embedder,
            )
        finally:
            if where:
                where["shards"].close()
