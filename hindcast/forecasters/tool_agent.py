"""Tool agent: the model drives `search`, `read` and `submit_forecast` through OpenAI tool calls.

The harness executes every tool against the t0-bound Context: no tool takes a date, and
any extra argument the model sends (`before`, `t0`, `date` …) is ignored and logged, so a
tool call cannot move t0. A forecast exists only through a valid `submit_forecast` call;
an invalid one is answered with the reason (the model may call again within `steps`
turns); no valid call in time is a recorded failure.

`policy` (see `forecasters.policies`): `pit` (the default) as above; `none` — closed book:
only `submit_forecast` is offered (prompt `tool_agent_closed`), and a `search` or `read` call
is answered with an error without touching the archive; `pit+filter` — every document a
`search` or `read` returns is judged by the `detector`; a flagged one is left out of the
search results, and reading it is answered like a document that does not exist (so the
answer does not hint that something revealing was found); each removal is logged as a
`withheld` step and in the harness's retrieval log.

Spec: `tool-agent:model=openai:gpt-4.1-mini,steps=6,k=5`,
`tool-agent:model=local,policy=pit+filter,detector=lexical`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

from hindcast.forecasters import policies
from hindcast.forecasters.base import Context
from hindcast.forecasters.retrieval_agent import MODES, headline
from hindcast.forecasters.zero_shot import ChatForecaster
from hindcast.llm import check, prompts
from hindcast.llm import client as llm
from hindcast.records import Document, Forecast, Question

READ_CHARS = 1500
NUDGE = "Use the tools. When you are ready, call submit_forecast with your probability."


def _tool(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


TOOLS = [
    _tool(
        "search",
        "Search the news archive as it stood on today's date; returns id, date and headline.",
        {"query": {"type": "string"}, "k": {"type": "integer", "minimum": 1, "maximum": 10}},
        ["query"],
    ),
    _tool(
        "read",
        "Read one document of the archive by its id.",
        {"doc_id": {"type": "string"}},
        ["doc_id"],
    ),
    _tool(
        "submit_forecast",
        "Submit the final probability that the question resolves YES.",
        {
            "probability": {"type": "number", "minimum": 0, "maximum": 1},
            "rationale": {"type": "string"},
        },
        ["probability"],
    ),
]
CLOSED_TOOLS = [t for t in TOOLS if t["function"]["name"] == "submit_forecast"]
NOT_VISIBLE = "error: no such document before today's date"
ALLOWED = {
    "search": {"query", "k"},
    "read": {"doc_id"},
    "submit_forecast": {"probability", "rationale"},
}


class Reach(NamedTuple):
    """What the tools of one forecast reach: the t0-bound Context, seen
    through the policy's Screen."""

    ctx: Context
    screen: policies.Screen


@dataclass(frozen=True)
class ToolAgent(ChatForecaster):
    """Up to `steps` model turns; each tool call runs against the Context bound to t0."""

    name: str = "tool-agent"
    steps: int = 6
    k: int = 5
    mode: str = "hybrid"
    structured: str = "none"
    policy: str = policies.DEFAULT
    detector: str = ""
    PROMPTS: ClassVar[tuple[str, ...]] = ("tool_agent",)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mode not in MODES or int(self.steps) < 1 or not 1 <= int(self.k) <= 10:
            raise ValueError(f"need mode in {MODES}, steps ≥ 1 and 1 ≤ k ≤ 10")
        policies.check(self.policy, self.detector)

    def prompt_names(self) -> tuple[str, ...]:
        return ("tool_agent_closed",) if self.policy == "none" else self.PROMPTS

    def tools(self) -> list[dict]:
        return CLOSED_TOOLS if self.policy == "none" else TOOLS

    async def run(
        self, question: Question, ctx: Context, client: llm.ChatClient, usage: llm.UsageTally
    ) -> Forecast:
        template = prompts.load(self.prompt_names()[0])
        usage.totals.update(template.record)
        messages = template.messages(**prompts.question_fields(question), steps=int(self.steps))
        evidence: dict[str, None] = {}
        screen = policies.screen(self.policy, self.detector, self.models, question, ctx, usage)
        for turn in range(int(self.steps)):
            forecast = await self._turn(client, messages, Reach(ctx, screen), evidence, usage, turn)
            if forecast is not None:
                return forecast
        last = usage.steps[-1] if usage.steps else {}
        return Forecast.failure(
            f"no valid submit_forecast call in {int(self.steps)} turn(s)",
            raw=json.dumps(last, default=str),
            usage=usage.record(),
        )

    async def _turn(
        self,
        client,
        messages: list[dict],
        reach: Reach,
        evidence: dict,
        usage: llm.UsageTally,
        turn: int,
    ) -> Forecast | None:
        """One model turn; its tool calls run and are answered in `messages`; a
        valid submission ends it."""
        reply = await client.complete(messages, tools=self.tools(), **self.request(usage))
        usage.add(
            "turn", reply, turn=turn, content=reply.content, tool_calls=list(reply.tool_calls)
        )
        messages.append(_assistant(reply))
        if not reply.tool_calls:
            messages.append({"role": "user", "content": NUDGE})
        for call in reply.tool_calls:
            result, submitted = await self._execute(call, reach, evidence, usage, turn)
            if submitted is not None:
                return Forecast(
                    submitted[0],
                    rationale=submitted[1],
                    evidence=tuple(evidence),
                    usage=usage.record(),
                    raw=call["arguments"],
                )
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        return None

    async def _execute(
        self, call: dict, reach: Reach, evidence: dict, usage: llm.UsageTally, turn: int
    ):
        """(tool result text, None) or ("", (probability, rationale)) for a valid submission.
        Under `pit+filter` the `withheld` steps of a call follow its `tool` step."""
        name, args, problem = _arguments(call)
        ignored = sorted(set(args) - ALLOWED.get(name, set()))
        withheld: list = []
        if problem is None:
            result, forecast, problem = await self._dispatch(name, args, reach, evidence, withheld)
        else:
            result, forecast = f"error: {problem}", None
        usage.add(
            "tool",
            None,
            turn=turn,
            tool=name,
            arguments=call["arguments"],
            ignored_arguments=ignored,
            error=problem,
            result=result[:2000],
        )
        reach.screen.log(withheld, {"op": name, "turn": turn, "arguments": call["arguments"]})
        return result, forecast

    async def _dispatch(self, name: str, args: dict, reach: Reach, evidence: dict, withheld: list):
        if name in ("search", "read") and self.policy == "none":
            return f"error: closed book: there is no archive to {name}", None, "closed book"
        if name == "search":
            return await self._search(args, reach, evidence, withheld)
        if name == "read":
            return await self._read(args, reach, evidence, withheld)
        if name == "submit_forecast":
            parsed = check(args.get("probability"), "tool")
            if parsed.probability is None:
                return f"error: {parsed.reason}; call submit_forecast again", None, parsed.reason
            return "", (parsed.probability, str(args.get("rationale") or "")), None
        return f"error: unknown tool {name!r}", None, f"unknown tool {name!r}"

    async def _search(self, args: dict, reach: Reach, evidence: dict, withheld: list):
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return "error: search needs a non-empty query", None, "search without a query"
        k = args.get("k", self.k)
        k = (
            min(max(int(k), 1), 10)
            if isinstance(k, (int, float)) and not isinstance(k, bool)
            else int(self.k)
        )
        docs = await _screened(
            [h.doc for h in reach.ctx.search(query, k, self.mode)], reach.screen, withheld
        )
        evidence.update((d.id, None) for d in docs)
        return json.dumps([_brief(d) for d in docs]), None, None

    async def _read(self, args: dict, reach: Reach, evidence: dict, withheld: list):
        doc = reach.ctx.read(str(args.get("doc_id", "")))
        docs = await _screened([doc] if doc is not None else [], reach.screen, withheld)
        if not docs:
            return NOT_VISIBLE, None, "document not visible" if doc is None else "document withheld"
        evidence[doc.id] = None
        return json.dumps({**_brief(doc), "text": doc.text[:READ_CHARS]}), None, None


async def _screened(
    docs: list[Document], screen: policies.Screen, withheld: list
) -> list[Document]:
    """The documents the screen lets through; (id, verdict) of the others added to `withheld`."""
    kept, out = await screen.split(docs)
    withheld.extend(out)
    return kept


def _arguments(call: dict) -> tuple[str, dict, str | None]:
    try:
        args = json.loads(call["arguments"] or "{}")
    except ValueError:
        return call["name"], {}, "arguments are not valid JSON"
    if not isinstance(args, dict):
        return call["name"], {}, "arguments are not a JSON object"
    return call["name"], args, None


def _brief(doc: Document) -> dict:
    return {"id": doc.id, "date": doc.created_at.date().isoformat(), "headline": headline(doc)}


def _assistant(reply: llm.ChatReply) -> dict:
    message: dict = {"role": "assistant", "content": reply.content or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for c in reply.tool_calls
        ]
    return message
