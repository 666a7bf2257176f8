"""The Context re-checks every document a retriever hands it, and logs every call.

A misbehaving retriever (a stand-in written here to return a post-t0 document) must be
stopped by the Context itself: defence in depth behind TimeBoundRetriever's own checks.
"""

from dataclasses import dataclass

import pytest

from hindcast.errors import ForecastError, LeakageError
from hindcast.forecasters.base import Context
from hindcast.records import Document
from tests.helpers import at

T0 = at("2025-11-01T00:00:00")


@dataclass
class Hit:
    doc: Document
    score: float
    mode: str


class LeakyRetriever:
    def __init__(self, t0, created):
        self.t0, self.doc = t0, Document("d1", "news", created, "headline")

    def search(self, query, k, mode):
        return [Hit(self.doc, 1.0, mode)]

    def read(self, doc_id):
        return self.doc

    def thread(self, submission_id):
        return [self.doc]


def test_documents_before_t0_pass_and_every_call_is_logged():
    ctx = Context(T0, "m", (), (), LeakyRetriever(T0, at("2025-10-31T23:59:59")))
    assert [h.doc.id for h in ctx.search("fed", 3, "text")] == ["d1"]
    assert ctx.read("d1").id == "d1" and len(ctx.thread("d1")) == 1
    assert ctx.retrievals[0] == {"op": "search", "query": "fed", "k": 3, "mode": "text", "ids": ["d1"]}
    assert [r["op"] for r in ctx.retrievals] == ["search", "read", "thread"]


@pytest.mark.parametrize("call", [lambda c: c.search("q", 1, "vector"), lambda c: c.read("d1"), lambda c: c.thread("d1")])
def test_a_document_created_at_t0_is_stopped_on_every_path(call):
    ctx = Context(T0, "m", (), (), LeakyRetriever(T0, T0))
    with pytest.raises(LeakageError, match="not before t0"):
        call(ctx)


def test_a_retriever_bound_to_another_instant_is_refused():
    with pytest.raises(LeakageError):
        Context(T0, "m", (), (), LeakyRetriever(at("2025-12-01T00:00:00"), at("2025-10-01T00:00:00")))


def test_without_an_archive_document_calls_fail_clearly():
    with pytest.raises(ForecastError, match="no archive snapshot"):
        Context(T0, "m", (), ()).search("q")
