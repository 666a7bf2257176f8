"""Retrieval agent, in the spirit of the Hindcast paper: seed queries from the question,
retrieve pre-t0 documents through the Context, reflect (summary + follow-up queries) for a
bounded number of rounds, then a final probability from the evidence summary.

Every query, every returned document id and every intermediate answer is logged in
`Forecast.usage["steps"]`; the ids shown to the model are the forecast's `evidence`, and
the last summary is its `rationale`. Documents come only from `ctx.search`, so the
harness's t0 bound applies to all of them.

`policy` (see `forecasters.policies`): `pit` (the default) as above; `none` — closed book,
no seed, no search, no reflection: the final prompt with no summary and no documents;
`pit+filter` — each document a search returns is judged by the `detector` and a flagged one
never enters the agent's findings (so no prompt shows it), each removal logged as a
`withheld` step and in the harness's retrieval log.

Spec: `retrieval-agent:model=local,rounds=2,k=5,mode=hybrid`,
`retrieval-agent:model=local,policy=pit+filter,detector=lexical`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import ClassVar

from hindcast.forecasters import policies
from hindcast.forecasters.base import Context
from hindcast.forecasters.zero_shot import ChatForecaster
from hindcast.llm import client as llm
from hindcast.llm import prompts
from hindcast.records import Document, Forecast, Question

MODES = ("vector", "text", "hybrid")
HEADLINE_CHARS = 120
CLOSED_SUMMARY = "(closed book: no search was made)"
CLOSED_DOCUMENTS = "(none: closed book)"


def queries_schema(n: int) -> dict:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["queries"],
        "properties": {"queries": {"type": "array", "items": {"type": "string"}, "maxItems": n}},
    }


def reflect_schema(n: int) -> dict:
    schema = queries_schema(n)
    schema["properties"]["summary"] = {"type": "string"}
    schema["required"] = ["summary", "queries"]
    return schema


@dataclass(frozen=True)
class RetrievalAgent(ChatForecaster):
    """Seed → search → reflect (≤ `rounds` times) → final probability."""

    name: str = "retrieval-agent"
    rounds: int = 2
    queries: int = 3
    k: int = 5
    mode: str = "hybrid"
    max_docs: int = 8
    step_tokens: int = 160
    policy: str = policies.DEFAULT
    detector: str = ""
    PROMPTS: ClassVar[tuple[str, ...]] = (
        "retrieval_queries",
        "retrieval_reflect",
        "retrieval_final",
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if (
            self.mode not in MODES
            or min(
                int(self.rounds),
                int(self.queries),
                int(self.k),
                int(self.max_docs),
                int(self.step_tokens),
            )
            < 1
        ):
            raise ValueError(
                f"need mode in {MODES} and rounds, queries, k, max_docs, step_tokens ≥ 1"
            )
        policies.check(self.policy, self.detector)

    def prompt_names(self) -> tuple[str, ...]:
        return ("retrieval_final",) if self.policy == "none" else self.PROMPTS

    async def run(
        self, question: Question, ctx: Context, client: llm.ChatClient, usage: llm.UsageTally
    ) -> Forecast:
        fields = prompts.question_fields(question)
        usage.totals["prompts"] = {name: prompts.load(name).sha256 for name in self.prompt_names()}
        if self.policy == "none":
            return await self._closed_book(client, fields, usage)
        screen = policies.screen(self.policy, self.detector, self.models, question, ctx, usage)
        found, summary = await self._research(client, ctx, screen, fields, usage)
        shown = list(found.values())[: int(self.max_docs)]
        messages = prompts.load("retrieval_final").messages(
            **fields, summary=summary or "(none)", documents=_listing(shown)
        )
        return await self.final(
            client, messages, usage, rationale=summary, evidence=tuple(d.id for d in shown)
        )

    async def _closed_book(self, client, fields: dict, usage: llm.UsageTally) -> Forecast:
        """Policy `none`: the final question alone; the archive is never called."""
        messages = prompts.load("retrieval_final").messages(
            **fields, summary=CLOSED_SUMMARY, documents=CLOSED_DOCUMENTS
        )
        return await self.final(client, messages, usage)

    async def _research(
        self, client, ctx: Context, screen: policies.Screen, fields: dict, usage: llm.UsageTally
    ) -> tuple[dict, str]:
        """Seed, then up to `rounds` of search + reflection; stops when no new query is asked."""
        found: dict[str, Document] = {}
        queries, asked, summary = await self._seed(client, fields, usage), [], ""
        for round_ in range(int(self.rounds)):
            fresh = [q for q in queries if q.lower() not in {a.lower() for a in asked}][
                : int(self.queries)
            ]
            if not fresh:
                break
            for query in fresh:
                asked.append(query)
                await self._search(ctx, screen, query, found, usage, round_)
            summary, queries = await self._reflect(client, fields, found, asked, usage, round_)
        return found, summary

    async def _seed(self, client, fields: dict, usage: llm.UsageTally) -> list[str]:
        n = int(self.queries)
        messages = prompts.load("retrieval_queries").messages(**fields, n=n)
        reply = await client.complete(
            messages, schema=queries_schema(n), **self.step_request(usage)
        )
        queries = parse_queries(reply.content, n)
        fallback = not queries
        queries = queries or [fields["question"]]
        usage.add("seed", reply, raw=reply.content, queries=queries, fallback_to_question=fallback)
        return queries

    def step_request(self, usage: llm.UsageTally) -> dict:
        """Seed and reflection calls: the final call's parameters with a smaller token budget."""
        return {
            **self.request(usage),
            "max_tokens": min(int(self.step_tokens), int(self.max_tokens)),
        }

    async def _search(
        self,
        ctx: Context,
        screen: policies.Screen,
        query: str,
        found: dict,
        usage: llm.UsageTally,
        round_: int,
    ) -> None:
        """`ids`: what the archive returned; a document the screen withholds
        never enters `found`."""
        hits = ctx.search(query, int(self.k), self.mode)
        usage.add(
            "search",
            None,
            round=round_,
            query=query,
            mode=self.mode,
            k=int(self.k),
            ids=[hit.doc.id for hit in hits],
        )
        kept = await screen.keep(
            [hit.doc for hit in hits], {"op": "search", "query": query, "round": round_}
        )
        for doc in kept:
            found.setdefault(doc.id, doc)

    async def _reflect(
        self,
        client,
        fields: dict,
        found: dict,
        asked: list[str],
        usage: llm.UsageTally,
        round_: int,
    ) -> tuple[str, list[str]]:
        n = int(self.queries)
        shown = list(found.values())[: int(self.max_docs)]
        messages = prompts.load("retrieval_reflect").messages(
            **fields, documents=_listing(shown), n=n, asked="; ".join(asked)
        )
        reply = await client.complete(
            messages, schema=reflect_schema(n), **self.step_request(usage)
        )
        summary, queries = parse_reflection(reply.content, n)
        usage.add(
            "reflect",
            reply,
            round=round_,
            raw=reply.content,
            summary=summary,
            queries=queries,
            shown=[d.id for d in shown],
        )
        return summary, queries


def _listing(docs: list[Document]) -> str:
    if not docs:
        return "(no documents found)"
    return "\n".join(f"- {d.created_at.date().isoformat()} | {d.id} | {headline(d)}" for d in docs)


def headline(doc: Document) -> str:
    text = " ".join(f"{doc.title} {doc.text}".split())
    return text if len(text) <= HEADLINE_CHARS else text[:HEADLINE_CHARS] + "…"


def parse_queries(text: str, n: int) -> list[str]:
    """Search queries from a JSON answer, or from one query a line in free text."""
    value = _json(text)
    if isinstance(value, dict):
        value = value.get("queries")
        value = [value] if isinstance(value, str) else value
    if isinstance(value, list):
        items = [q for q in value if isinstance(q, str)]
    elif value is None and not text.lstrip().startswith(("{", "[")):
        items = [
            re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line) for line in (text or "").splitlines()
        ]
    else:
        items = []
    return _clean(items)[:n]


def parse_reflection(text: str, n: int) -> tuple[str, list[str]]:
    """(summary, follow-up queries) from a reflection; free text is all summary, no queries."""
    value = _json(text)
    if isinstance(value, dict):
        summary = value.get("summary") if isinstance(value.get("summary"), str) else ""
        queries = value.get("queries") if isinstance(value.get("queries"), list) else []
        return summary.strip(), _clean([q for q in queries if isinstance(q, str)])[:n]
    return " ".join((text or "").split())[:1000], []


def _clean(items: list[str]) -> list[str]:
    out: list[str] = []
    for item in (" ".join(i.strip().strip('"').split()) for i in items):
        if item and len(item) <= 200 and item.lower() not in (o.lower() for o in out):
            out.append(item)
    return out


def _json(text: str):
    try:
        return json.loads(text or "")
    except ValueError:
        match = re.search(r"\{.*\}", text or "", re.DOTALL)
        try:
            return json.loads(match.group(0)) if match else None
        except ValueError:
            return None
