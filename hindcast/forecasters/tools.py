"""The t0-bound tools: plain closures over one (Question, Context), for agents that run outside
hindcast's own loop (an MCP server, an Inspect agent, a `command:` bot).

`t0_tools(question, ctx)` returns a `Tools` record of six functions — `search(query, k, mode)`,
`read(doc_id)`, `thread(submission_id)`, `price_history()`, `resolved_before()`,
`question_at_t0()` — each returning JSON-ready typed dicts. None takes a time, a snapshot, a
market or a store: t0 is the Context's, fixed when it was built. Any other keyword
(`t0=`, `until=`, `before=` …) is accepted, ignored and recorded as an `ignored` entry, so a
caller cannot move t0 and the attempt is visible.

Every call is recorded in the Context's retrieval log (the run's retrieval format: one dict a
call, `op` and its arguments and the `ids` it returned): the archive calls by the Context
itself, the others through `Context.note`. What a tool returns never carries engagement
counters, edit or retrieval instants or deletion flags (they may have been measured after t0):
a document is its id, source, kind, creation instant, title, text, url and thread links.

`forecasters.tool_server` serves the same six over MCP (the `command:` forecaster and
`hindcast mcp serve` share it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypedDict

from hindcast.errors import ConfigError
from hindcast.forecasters.base import Context
from hindcast.records import Document, Question, Retrieval
from hindcast.timeutil import iso

MODES = ("vector", "text", "hybrid")
MAX_K = 50


class DocumentView(TypedDict):
    id: str
    source: str
    kind: str
    created_at: str
    title: str
    text: str
    url: str
    parent_id: str | None
    thread_id: str | None


class SearchHit(TypedDict):
    id: str
    source: str
    created_at: str
    title: str
    text: str
    url: str
    score: float
    mode: str


class PriceView(TypedDict):
    t: str
    p: float


class ResolutionView(TypedDict):
    market_id: str
    outcome: float


class QuestionView(TypedDict):
    market_id: str
    question: str
    description: str
    t0: str
    url: str
    topic: str
    scheduled_close: str | None


@dataclass(frozen=True)
class Tools:
    """The six t0-bound tools of one (market, t0); `log()` is every call so
    far (retrieval format)."""

    search: Callable[..., list[SearchHit]]
    read: Callable[..., DocumentView | None]
    thread: Callable[..., list[DocumentView]]
    price_history: Callable[..., list[PriceView]]
    resolved_before: Callable[..., list[ResolutionView]]
    question_at_t0: Callable[..., QuestionView]
    log: Callable[[], tuple[Retrieval, ...]]
    note: Callable[..., None] = field(default=lambda op, **fields: None)  # Context.note


def t0_tools(question: Question, ctx: Context) -> Tools:
    """The tools over `ctx` (bound to `question.t0`); extra keywords are ignored and logged."""
    if question.t0 != ctx.t0:
        raise ConfigError(
            f"question at {iso(question.t0)} and context at {iso(ctx.t0)}: one t0 only"
        )

    def search(query: str, k: int = 5, mode: str = "hybrid", **ignored) -> list[SearchHit]:
        _ignored(ctx, "search", ignored)
        hits = ctx.search(str(query), _k(k), _mode(mode))
        return [_hit(h) for h in hits]

    def read(doc_id: str, **ignored) -> DocumentView | None:
        _ignored(ctx, "read", ignored)
        doc = ctx.read(str(doc_id))
        return document_view(doc) if doc is not None else None

    def thread(submission_id: str, **ignored) -> list[DocumentView]:
        _ignored(ctx, "thread", ignored)
        return [document_view(d) for d in ctx.thread(str(submission_id))]

    def price_history(**ignored) -> list[PriceView]:
        _ignored(ctx, "price_history", ignored)
        ctx.note("price_history")
        return [PriceView(t=iso(p.t), p=float(p.p)) for p in ctx.price_history()]

    def resolved_before(**ignored) -> list[ResolutionView]:
        _ignored(ctx, "resolved_before", ignored)
        ctx.note("resolved_before")
        return [
            ResolutionView(market_id=r.market_id, outcome=float(r.outcome))
            for r in ctx.resolved_before()
        ]

    def question_at_t0(via: str = "tool", **ignored) -> QuestionView:
        _ignored(ctx, "question", ignored)
        ctx.note("question", **({} if via == "tool" else {"via": via}))
        return question_view(question)

    return Tools(
        search,
        read,
        thread,
        price_history,
        resolved_before,
        question_at_t0,
        lambda: ctx.retrievals,
        ctx.note,
    )


def question_view(question: Question) -> QuestionView:
    """The market as it stood at t0 and t0 itself (no outcome, no resolution instant)."""
    close = iso(question.scheduled_close) if question.scheduled_close is not None else None
    return QuestionView(
        market_id=question.market_id,
        question=question.question,
        description=question.description,
        t0=iso(question.t0),
        url=question.url,
        topic=question.topic,
        scheduled_close=close,
    )


def document_view(doc: Document) -> DocumentView:
    return DocumentView(
        id=doc.id,
        source=doc.source,
        kind=doc.kind,
        created_at=iso(doc.created_at),
        title=doc.title,
        text=doc.text,
        url=doc.url,
        parent_id=doc.parent_id,
        thread_id=doc.thread_id,
    )


def _hit(hit) -> SearchHit:
    doc = hit.doc
    return SearchHit(
        id=doc.id,
        source=doc.source,
        created_at=iso(doc.created_at),
        title=doc.title,
        text=doc.text,
        url=doc.url,
        score=float(hit.score),
        mode=str(hit.mode),
    )


def _k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not 1 <= int(k) <= MAX_K:
        raise ValueError(f"k must be an integer from 1 to {MAX_K}, got {k!r}")
    return int(k)


def _mode(mode) -> str:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    return str(mode)


def _ignored(ctx: Context, tool: str, extra: dict) -> None:
    if extra:
        ctx.note("ignored", tool=tool, arguments=sorted(extra))
