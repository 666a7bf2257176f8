"""hindcast as an Inspect AI task: `inspect eval hindcast/replay --model … -T store=… -T archive=…`.

Loaded by Inspect through hindcast's entry point (group `inspect_ai`, name `hindcast`), which
also registers the `hindcast/<model spec>` model provider (`forecasters.inspect_provider`).

* Samples are the planned (market, t0) pairs of the replay planner (`replay.plan.prepare`,
  the sweep's own: the same markets, cutoffs and refusals). A sample's input is the question
  as it stood at t0 (prompt `inspect_replay`); its metadata is that question and t0, its
  `target` is empty: no outcome anywhere a solver can read.
* Tools: a setup step (run even when `--solver` replaces the default) gives every sample the
  six t0-bound tools (`search`, `read`, `thread`, `price_history`, `resolved_before`,
  `question`), closures over the Context the engine builds for that (market, t0); none takes
  a time. Their calls are kept in the sample's store (`hindcast:retrievals`, the run's
  retrieval format).
* The scorer parses the final answer with hindcast's parser and looks the outcome up in the
  market store (the scorer's closure, never the sample): per sample the Brier score, the
  market's Brier at the same t0 (its last price strictly before t0) and `failed`. A failed
  parse is `failed = 1` with the reason, counted by the `failures` metric — the Brier of such a
  sample is NaN inside the value and left out of `brier` only, as hindcast's leaderboard does.

Task arguments (`-T name=value`): store (default: the shipped markets/sample), version,
archive, snapshot, fractions (default 0.5; `0.25,0.75` or a list), offsets, at, ids, topics,
limit, vector_search, messages (the message limit per sample, default 30).
"""

from __future__ import annotations

import contextlib
import math
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import SampleScore, Score, Target, metric, scorer
from inspect_ai.solver import Generate, TaskState, generate, solver
from inspect_ai.util import store as sample_store

from hindcast import forecasters, markets, sample
from hindcast.forecasters import (
    PROMPT,
    evidence_of,
    inspect_provider,  # noqa: F401  (registers the hindcast/<model> provider)
    inspect_tools,
    question_messages,
    t0_tools,
)
from hindcast.llm import parse_probability
from hindcast.markets import price_at
from hindcast.replay import Plan, ReplaySpec, context_at, prepare, question_at, retriever_factory
from hindcast.runs import identity_form, retrievals_form, retrievals_of
from hindcast.scoring import brier
from hindcast.timeutil import iso, parse_utc

RETRIEVALS = "hindcast:retrievals"  # the sample store key of the tool-call log
SCORE = "hindcast"  # the key of the score's metadata import-inspect reads


def _task_name(short: str) -> str:
    """`hindcast/<short>` however hindcast is installed: Inspect prefixes the package name itself
    only for a package in site-packages or installed editable under its import name."""
    from inspect_ai._util.package import get_installed_package_name

    return short if get_installed_package_name(_task_name) == "hindcast" else f"hindcast/{short}"


def spec_of(args: dict) -> ReplaySpec:
    """The ReplaySpec of a task's arguments (what `inspect eval -T …` passed; also
    read back from a log)."""
    store = args.get("store") or sample("markets")
    version = args.get("version") or None
    return ReplaySpec(
        store=Path(store),
        version=version,
        ids=_market_ids(args.get("ids"), Path(store), version),
        topics=_strings(args.get("topics")),
        limit=int(args["limit"]) if args.get("limit") else None,
        archive=Path(args["archive"]) if args.get("archive") else None,
        snapshot=args.get("snapshot") or None,
        vector_search=args.get("vector_search") or "exact",
        fractions=tuple(float(f) for f in _strings(args.get("fractions", "0.5"))),
        offsets=_strings(args.get("offsets")),
        at=tuple(parse_utc(t) for t in _strings(args.get("at"))),
        forecasters=("market",),
    )


def _market_ids(value, store: Path, version: str | None) -> tuple[str, ...]:
    """The `ids` argument as market ids. Inspect reads `-T ids=0x05af…` as YAML, i.e. as a hex
    integer (its leading zeros gone): a number is matched back to the store's market id of that
    value (`0x…` read as hex, or a decimal id), else kept as `0x…` hex for the planner to refuse."""
    items = value if isinstance(value, (list, tuple)) else [value]
    numbers = [v for v in items if isinstance(v, int) and not isinstance(v, bool)]
    if not numbers:
        return _strings(value)

    known: dict[int, str] = {}
    for market in markets.open_version(store, version).bundle.markets:
        if market.id[:2].lower() == "0x":
            with contextlib.suppress(ValueError):
                known.setdefault(int(market.id, 16), market.id)
        if market.id.isdigit():
            known.setdefault(int(market.id), market.id)

    def one(v) -> str:
        number = isinstance(v, int) and not isinstance(v, bool)
        return known.get(v, f"0x{v:x}") if number else str(v).strip()

    return tuple(text for text in map(one, items) if text)


def _strings(value) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    return tuple(str(v).strip() for v in items if str(v).strip())


def replay(
    store: str | None = None,
    version: str | None = None,
    archive: str | None = None,
    snapshot: str | None = None,
    fractions: str | float | list = "0.5",
    offsets: str | list | None = None,
    at: str | list | None = None,
    ids: str | list | None = None,
    topics: str | list | None = None,
    limit: int | None = None,
    vector_search: str = "exact",
    messages: int = 30,
) -> Task:
    """Forecast each planned (market, t0) of a hindcast market store with t0-bound
    tools; scored by Brier."""
    args = {
        "store": store,
        "version": version,
        "archive": archive,
        "snapshot": snapshot,
        "fractions": fractions,
        "offsets": offsets,
        "at": at,
        "ids": ids,
        "topics": topics,
        "limit": limit,
        "vector_search": vector_search,
    }
    plan = prepare(spec_of(args))
    return Task(
        dataset=MemoryDataset(samples(plan), name="hindcast-replay"),
        setup=t0_bound(plan),
        solver=generate(),
        scorer=brier_scorer(plan),
        message_limit=int(messages),
        metadata={"hindcast": recorded(plan)},
    )


replay = task(name=_task_name("replay"))(replay)


def recorded(plan: Plan) -> dict:
    """What `hindcast import-inspect` needs from the log: the run identity of the plan and where
    its frozen inputs live (absolute paths), and the prompt."""
    archive = getattr(plan.snapshot, "archive", None)
    return {
        "run_identity": identity_form(plan.identity),
        "store": str(Path(plan.store_root).resolve()),
        "archive": str(Path(archive).resolve()) if archive is not None else None,
        "prompt": PROMPT,
    }


def samples(plan: Plan) -> list[Sample]:
    """One sample per planned (market, t0): the question as it stood, t0; no outcome."""
    out = []
    for cutoff in plan.cutoffs:
        question = question_at(plan.bundle, cutoff)
        system, user = question_messages(question)
        out.append(
            Sample(
                id=sample_id(cutoff.market_id, cutoff.t0),
                input=[
                    ChatMessageSystem(content=system["content"]),
                    ChatMessageUser(content=user["content"]),
                ],
                metadata={
                    "market_id": cutoff.market_id,
                    "t0": iso(cutoff.t0),
                    "label": cutoff.label,
                    **_question(question),
                },
            )
        )
    return out


def sample_id(market_id: str, t0) -> str:
    return f"{market_id}@{iso(t0)}"


def _question(question) -> dict:
    view = dict(forecasters.question_view(question))
    view.pop("market_id"), view.pop("t0")
    return view


@solver
def t0_bound(plan: Plan):
    """Give the sample the t0-bound tools of its (market, t0), built as the engine builds them."""
    cutoffs = {sample_id(c.market_id, c.t0): c for c in plan.cutoffs}
    retriever_for = retriever_factory(plan.snapshot, plan.index, plan.search)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        cutoff = cutoffs[str(state.sample_id)]
        ctx = context_at(plan, cutoff, repeat=state.epoch - 1, retriever_for=retriever_for)
        tools = t0_tools(question_at(plan.bundle, cutoff), ctx)
        keep = sample_store()
        keep.set(RETRIEVALS, [])
        state.tools = inspect_tools(
            tools, after=lambda: keep.set(RETRIEVALS, retrievals_form(tools.log()))
        )
        return state

    return solve


@metric
def forecasts():
    """Samples with a valid probability."""
    return _over(lambda scores: float(sum(1 for s in scores if _valid(s))))


@metric
def failures():
    """Samples whose answer held no valid probability (counted, never dropped)."""
    return _over(lambda scores: float(sum(1 for s in scores if not _valid(s))))


@metric(name="brier")
def mean_brier():
    """Mean Brier score over the valid forecasts (hindcast's leaderboard `Brier`)."""
    return _over(lambda scores: _mean([_value(s)["brier"] for s in scores if _valid(s)]))


@metric
def market_brier():
    """The market's mean Brier at the same t0s, on the valid forecasts with a price before t0."""
    return _over(lambda scores: _mean([_value(s)["market_brier"] for s in _paired(scores)]))


@metric
def brier_vs_market():
    """Brier − market Brier on those paired samples (below 0: the model beat the market)."""
    return _over(
        lambda scores: _mean(
            [_value(s)["brier"] - _value(s)["market_brier"] for s in _paired(scores)]
        )
    )


def _over(compute):
    """A metric function of the sample scores (Inspect reads the annotation
    to pass SampleScores)."""

    def value(scores: list[SampleScore]) -> float:
        return compute(scores)

    return value


def _value(s: SampleScore) -> dict:
    return s.score.value if isinstance(s.score.value, dict) else {}


def _valid(s: SampleScore) -> bool:
    return _value(s).get("failed") == 0


def _paired(scores: list[SampleScore]) -> list[SampleScore]:
    return [s for s in scores if _valid(s) and not _nan(_value(s).get("market_brier"))]


def _nan(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _mean(values: list[float]) -> float:
    return float(sum(values) / len(values)) if values else float("nan")


@scorer(metrics=[forecasts(), failures(), mean_brier(), market_brier(), brier_vs_market()])
def brier_scorer(plan: Plan):
    """Brier of the final answer against the outcome in the market store; the
    market's at the same t0."""
    outcomes = {r.market_id: r.outcome for r in plan.bundle.resolutions}
    cutoffs = {sample_id(c.market_id, c.t0): c for c in plan.cutoffs}

    async def score(state: TaskState, target: Target) -> Score:
        cutoff = cutoffs[str(state.sample_id)]
        outcome, text = outcomes[cutoff.market_id], state.output.completion if state.output else ""
        price = price_at(plan.bundle.prices.get(cutoff.market_id, ()), cutoff.t0)
        market = float(brier(price.p, outcome)) if price is not None else float("nan")
        parsed = parse_probability(text)
        retrievals: list[dict] = state.store.get(RETRIEVALS, [])
        error = None if parsed.probability is not None else f"invalid answer: {parsed.reason}"
        meta = {
            "market_id": cutoff.market_id,
            "t0": iso(cutoff.t0),
            "label": cutoff.label,
            "outcome": outcome,
            "market_price": price.p if price else None,
            "probability": parsed.probability,
            "error": error,
            "raw": text,
            "retrievals": retrievals,
            "evidence": list(evidence_of(retrievals_of(retrievals))),
        }
        own = (
            float(brier(parsed.probability, outcome))
            if parsed.probability is not None
            else float("nan")
        )
        return Score(
            value={"brier": own, "market_brier": market, "failed": 0 if error is None else 1},
            answer=text,
            explanation=error or f"p={parsed.probability} outcome={outcome:g}",
            metadata={SCORE: meta},
        )

    return score
