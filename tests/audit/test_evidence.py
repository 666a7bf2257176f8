"""Evidence strata (issue 30) on crafted archives: a real frozen snapshot and LanceDB index, the
real TimeBoundRetriever and the real `lexical` detector; the expected strata worked out by hand
from the headlines. Also: documents at or after t0 change nothing, the cache answers without
searching, and the scores are split by the stratum."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from hindcast.analysis import strata
from hindcast.archive import TimeBoundRetriever
from hindcast.audit import evidence
from hindcast.leaks import get_detector
from hindcast.records import Question
from tests.analysis.rows import row
from tests.integration.archive_support import build_archive, write_headlines

UTC = timezone.utc
T0 = datetime(2025, 10, 20, tzinfo=UTC)
PAZ = Question("paz", "Will Rodrigo Paz win the Bolivian presidential election?", "", T0)
TAKAICHI = Question("takaichi", "Will Sanae Takaichi become Prime Minister of Japan?", "", T0)
QUAKE = Question("quake", "Will a magnitude 9 earthquake hit Portugal in 2025?", "", T0)

BEFORE = [  # (id, created_at, headline): every one strictly before t0
    ("b1", datetime(2025, 10, 19, 22, tzinfo=UTC), "Rodrigo Paz wins Bolivian presidential runoff"),
    (
        "b2",
        datetime(2025, 9, 2, tzinfo=UTC),
        "Bolivians vote as Paz and Quiroga debate the economy",
    ),
    ("b3", datetime(2025, 10, 4, tzinfo=UTC), "Sanae Takaichi leads race for LDP leadership"),
    ("b4", datetime(2025, 10, 1, tzinfo=UTC), "Japan's ruling party to pick a new leader"),
    ("b5", datetime(2025, 9, 15, tzinfo=UTC), "Portugal wildfires burn through forests"),
    ("b6", datetime(2025, 10, 12, tzinfo=UTC), "Stock markets rally on rate hopes"),
]
AT_AND_AFTER = [  # decisive headlines, at t0 exactly and after it: never read
    ("a1", T0, "Sanae Takaichi elected Prime Minister of Japan"),
    ("a2", T0 + timedelta(days=1), "Takaichi sworn in as Japan's first female prime minister"),
    ("a3", T0 + timedelta(days=40), "Magnitude 9 earthquake hits Portugal"),
    ("a4", T0 + timedelta(hours=1), "Rodrigo Paz defeated: Quiroga wins Bolivia"),
]


@pytest.fixture(scope="module")
def detector():
    return get_detector(evidence.DETECTOR)


def _archive(folder, docs):
    return build_archive(folder, [write_headlines(folder / "news.jsonl", docs)])


def _labels(snapshot, detector, questions=(PAZ, TAKAICHI, QUAKE), cache=None):
    return evidence.label_all(
        questions,
        lambda t0: TimeBoundRetriever(snapshot, t0),
        evidence.archive_identity(snapshot, _index(snapshot)),
        cache,
        detector,
    )


def _index(snapshot):
    from hindcast.archive import open_index

    return open_index(snapshot)


@pytest.fixture(scope="module")
def before(tmp_path_factory):
    return _archive(tmp_path_factory.mktemp("before"), BEFORE)


def test_the_hand_worked_strata_of_a_crafted_archive(before, detector):
    labels = _labels(before, detector)
    # Paz: b1 states the outcome ("wins ... runoff") before t0; Takaichi: only a race being led
    # and a party about to choose; the earthquake: nothing on it at all
    assert {m: label.stratum for (m, _), label in labels.items()} == {
        "paz": "present",
        "takaichi": "absent",
        "quake": "absent",
    }
    assert labels[("paz", T0)].flagged == ("b1",)
    assert labels[("takaichi", T0)].flagged == ()
    assert all(label.n_docs == len(BEFORE) for label in labels.values())  # k=10 > 6 documents


def test_the_strata_labelled_from_inside_a_running_event_loop_are_the_same(before, detector):
    """The sweep exports its report from inside an event loop: the judgments then run on the
    procedure's own loop and thread, with the same answers."""
    import asyncio

    async def inside():
        asyncio.get_running_loop()
        return _labels(before, detector)

    assert asyncio.run(inside()) == _labels(before, detector)


def test_documents_at_or_after_t0_change_nothing(tmp_path, before, detector):
    after = _archive(tmp_path, BEFORE + AT_AND_AFTER)
    assert _labels(after, detector) == _labels(before, detector)


def test_the_retrieved_documents_are_all_before_t0(tmp_path, detector):
    after = _archive(tmp_path, BEFORE + AT_AND_AFTER)
    with TimeBoundRetriever(after, T0) as retriever:
        docs = evidence.retrieve(retriever, TAKAICHI.question)
    assert docs and all(d.created_at < T0 for d in docs)
    assert {d.id for d in docs} == {i for i, _, _ in BEFORE}


def test_an_earlier_t0_loses_the_decisive_headline(before, detector):
    earlier = Question(PAZ.market_id, PAZ.question, "", datetime(2025, 10, 19, 22, tzinfo=UTC))
    (label,) = _labels(before, detector, (earlier,)).values()
    assert label.stratum == "absent"  # b1 was created exactly at this t0: not yet visible


def test_the_query_set_comes_from_the_question_text_alone():
    assert evidence.queries(PAZ.question) == (PAZ.question, "Rodrigo Paz Bolivian")
    assert evidence.queries("Will Bitcoin reach $150,000 by December 31, 2025?") == (
        "Will Bitcoin reach $150,000 by December 31, 2025?",
        "Bitcoin $150,000",
    )
    assert evidence.queries("will it rain?") == ("will it rain?",)


def test_the_cache_answers_without_searching_and_is_keyed_by_the_archive(
    tmp_path, before, detector
):
    cache = evidence.EvidenceCache(f"sqlite:///{tmp_path / 'hindcast.db'}")
    first = _labels(before, detector, cache=cache)

    def no_search(t0):
        raise AssertionError("searched although cached")

    identity = evidence.archive_identity(before, _index(before))
    again = evidence.label_all((PAZ, TAKAICHI, QUAKE), no_search, identity, cache, detector)
    assert again == first
    with pytest.raises(AssertionError, match="searched although cached"):
        evidence.label_all((PAZ,), no_search, identity + "other", cache, detector)


def test_a_read_only_cache_is_read_and_never_written(tmp_path, before, detector):
    path = tmp_path / "hindcast.db"
    _labels(before, detector, (PAZ,), evidence.EvidenceCache(f"sqlite:///{path}", writable=False))
    assert not path.exists()


def test_one_question_asked_of_many_markets_is_searched_once(before, detector):
    """Batched (issue 39): pairs asking the same question at the same t0 share one search, the
    answer carried to each market; and the queries are embedded up front, in one batch."""
    from hindcast.archive import open_index

    copies = [Question(f"paz-{i}", PAZ.question, "", T0) for i in range(3)]
    opened: list = []

    def counting(t0):
        opened.append(t0)
        return TimeBoundRetriever(before, t0)

    index = open_index(before)
    embedded: list[list[str]] = []
    inner = index.embedder()

    class Counting:
        name, dims = inner.name, inner.dims

        def embed(self, texts):
            embedded.append(list(texts))
            return inner.embed(texts)

    labels = evidence.label_all(
        [*copies, TAKAICHI], counting, "id", None, detector, embedder=Counting
    )
    assert opened == [T0]  # one retriever for the one t0
    assert embedded == [
        sorted({*evidence.queries(PAZ.question), *evidence.queries(TAKAICHI.question)})
    ]
    single = _labels(before, detector, (PAZ,))[("paz", T0)]
    for i in range(3):
        assert labels[(f"paz-{i}", T0)] == evidence.EvidenceLabel(
            f"paz-{i}", T0, single.stratum, single.n_docs, single.flagged, single.best_score
        )
    assert labels[("takaichi", T0)].stratum == "absent"


def test_scores_split_by_the_stratum():
    rows = [
        row("f", "a", 1, 0.9, 1.0, price=0.8),
        row("f", "a", 2, 0.8, 1.0, price=0.7),
        row("f", "b", 1, 0.3, 0.0, price=0.4),
        row("f", "c", 1, None, 0.0, price=0.4),
    ]
    labels = {("a", rows[0].t0): "present", ("a", rows[1].t0): "absent"}
    labels[("b", rows[2].t0)] = "absent"
    found = strata.evidence_strata(rows, labels, ("a note",))
    table = {r[1]: dict(zip(found.columns, r)) for r in found.rows}
    assert list(table) == ["present", "absent", "not labelled", "all"]
    assert table["present"]["n_rows"] == 1 and table["present"]["brier"] == pytest.approx(0.01)
    assert table["absent"]["n_rows"] == 2
    assert table["absent"]["brier"] == pytest.approx((0.04 + 0.09) / 2)
    assert table["absent"]["market_brier"] == pytest.approx((0.09 + 0.16) / 2)
    assert table["not labelled"]["n_failed"] == 1
    assert table["all"]["n_rows"] == 4 and found.notes == ("a note",)
