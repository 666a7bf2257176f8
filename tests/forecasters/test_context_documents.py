"""The Context re-checks every document a retriever hands it, and logs every call.

A misbehaving retriever (a stand-in written here to return a post-t0 document) must be
stopped by the Context itself: defence in depth behind TimeBoundRetriever's own checks.
"""

from dataclasses import dataclass

import pytest

from hindcast.errors import ForecastError, LeakageError
from hindcast.forecasters.base import Context
from hindcast.records import Document
from hindcast.runs import retrievals_form
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
    assert retrievals_form(ctx.retrievals)[0] == {
        "op": "search",
        "query": "fed",
        "k": 3,
        "mode": "text",
        "ids": ["d1"],
    }
    assert [r["op"] for r in retrievals_form(ctx.retrievals)] == ["search", "read", "thread"]


@pytest.mark.parametrize(
    "call", [lambda c: c.search("q", 1, "vector"), lambda c: c.read("d1"), lambda c: c.thread("d1")]
)
def test_a_document_created_at_t0_is_stopped_on_every_path(call):
    ctx = Context(T0, "m", (), (), LeakyRetriever(T0, T0))
    with pytest.raises(LeakageError, match="not before t0"):
        call(ctx)


def test_a_retriever_bound_to_another_instant_is_refused():
    with pytest.raises(LeakageError):
        Context(
            T0, "m", (), (), LeakyRetriever(at("2025-12-01T00:00:00"), at("2025-10-01T00:00:00"))
        )


def test_without_an_archive_document_calls_fail_clearly():
    with pytest.raises(ForecastError, match="no archive snapshot"):
        Context(T0, "m", (), ()).search("q")


# ---- a Context reaches nothing after t0 -------------------------------------------------------
def _reachable(root) -> list:
    """Every object reachable from `root` through attributes a plugin could walk: __slots__,
    __dict__, closure cells, and the items of tuples, lists, sets and dicts (not modules,
    classes or function globals: those are the code, not the Context's data)."""
    import types

    seen, todo, found = set(), [root], []
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType, str, bytes, int, float)):
            continue
        seen.add(id(obj))
        found.append(obj)
        todo.extend(_children(obj))
    return found


def _children(obj) -> list:
    if isinstance(obj, dict):
        return [*obj.keys(), *obj.values()]
    if isinstance(obj, (tuple, list, set, frozenset)):
        return list(obj)
    out = (
        list(getattr(obj, "__dict__", {}).values())
        if not callable(obj) or hasattr(obj, "__self__")
        else []
    )
    for klass in type(obj).__mro__:
        for name in getattr(klass, "__slots__", ()):
            if name != "__weakref__" and hasattr(obj, name):
                out.append(getattr(obj, name))
    for name in ("__self__", "__func__", "__wrapped__"):
        if hasattr(obj, name):
            out.append(getattr(obj, name))
    out += [
        cell.cell_contents for cell in (getattr(obj, "__closure__", None) or ()) if _filled(cell)
    ]
    return out


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _archive(tmp_path):
    """A real two-month snapshot + hash index: documents before t0, at t0, after t0 in month(t0),
    and a later month."""
    import json

    from hindcast.archive.embed import HashEmbedder
    from hindcast.archive.index import build_index
    from hindcast.archive.snapshot import build_snapshot, open_snapshot

    rows = [
        ("before", "2025-10-20T00:00:00", "fed cut before"),
        ("at", "2025-11-01T00:00:00", "fed cut at t0"),
        ("after", "2025-11-20T00:00:00", "fed cut after"),
        ("later", "2025-12-05T00:00:00", "fed cut later"),
    ]
    path = tmp_path / "news.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": i, "created_at": t + "Z", "title": title, "source": "x"}) + "\n"
            for i, t, title in rows
        ),
        encoding="utf-8",
    )
    snapshot = open_snapshot(
        tmp_path / "archive", build_snapshot([path], "news", "news", tmp_path / "archive")
    )
    build_index(snapshot, HashEmbedder())
    return snapshot


def test_nothing_reachable_from_a_context_is_after_t0(tmp_path):
    """What a forecaster plug-in could find by walking every attribute of its Context: no
    resolution of its own market or known at/after t0, no index, no way to open a month."""
    from hindcast.archive.index import IndexReader, MonthData, open_index
    from hindcast.archive.retriever import TimeBoundRetriever
    from hindcast.archive.snapshot import Snapshot
    from hindcast.forecasters.base import PastResolution
    from hindcast.records import Resolution

    snapshot = _archive(tmp_path)
    index = open_index(snapshot)
    TimeBoundRetriever(snapshot, at("2026-01-01T00:00:00"), index=index).search(
        "fed", 5, "text"
    )  # later months opened
    resolutions = (
        Resolution(
            "m", "yes", at("2025-10-01T00:00:00"), at("2025-10-02T00:00:00")
        ),  # its own market
        Resolution("other", "no", at("2025-10-01T00:00:00"), at("2025-10-02T00:00:00")),
        Resolution("late", "yes", at("2025-10-20T00:00:00"), T0),  # known only at t0
        Resolution("later", "no", at("2025-12-01T00:00:00"), at("2025-12-02T00:00:00")),
    )
    ctx = Context(T0, "m", (), resolutions, TimeBoundRetriever(snapshot, T0, index=index))
    assert [h.doc.id for h in ctx.search("fed cut", 10, "text")] == ["before"]
    found = _reachable(ctx)
    assert not [
        o
        for o in found
        if isinstance(o, (Resolution, IndexReader, MonthData, Snapshot, TimeBoundRetriever))
    ]
    assert not [o for o in found if hasattr(o, "open_month") or hasattr(o, "partition_files")]
    assert [o for o in found if isinstance(o, PastResolution)] == [PastResolution("other", 0.0)]
    assert not [o for o in found if isinstance(o, Document) and o.created_at >= T0]
    assert ctx.resolved_before() == (PastResolution("other", 0.0),)


def test_the_retriever_behind_a_context_cannot_open_a_later_month(tmp_path):
    from hindcast.archive.retriever import TimeBoundRetriever

    retriever = TimeBoundRetriever(_archive(tmp_path), T0)
    assert retriever.index.months == ("2025-10", "2025-11")
    with pytest.raises(LeakageError, match="after month"):
        retriever.index.open_month("2025-12")
    assert retriever.index.opened == set()
