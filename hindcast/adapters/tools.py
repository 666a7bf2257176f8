"""The t0-bound tools as the adapters use them, and the one-(market, t0) binding they serve.

The tools themselves (`t0_tools`, six closures over a Context, no time argument) are defined in
`hindcast.forecasters.tools` — the `command:` forecaster, a layer below, serves them too. Here:
`bind(...)` builds the Question and the t0-bound Context for one (market, t0) exactly as a sweep
does (`replay.plan.prepare` then `question_at` and `context_at`, the engine's own builders), so
every leak check and the retrieval log apply unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from hindcast.errors import ConfigError
from hindcast.forecasters import Context, Tools, t0_tools
from hindcast.records import Question
from hindcast.replay import Cutoff, Plan, ReplaySpec, context_at, prepare, question_at


@dataclass(frozen=True)
class Bound:
    """One (market, t0): the question as it stood, its Context, its tools, and
    the plan they came from."""

    question: Question
    ctx: Context
    tools: Tools
    cutoff: Cutoff
    plan: Plan

    def close(self) -> None:
        close = getattr(self.plan.index, "close", None)
        if close is not None:
            close()


def bind(
    store: Path,
    market: str,
    *,
    t0: datetime | None = None,
    fraction: float | None = None,
    archive: Path | None = None,
    version: str | None = None,
    snapshot: str | None = None,
    vector_search: str = "exact",
) -> Bound:
    """The question and t0-bound Context of `market` at `t0` (an instant) or at a lifetime
    `fraction`, from a frozen market store (and archive snapshot), as the engine builds them.
    A cutoff the engine would refuse is refused the same way."""
    if (t0 is None) == (fraction is None):
        raise ConfigError("give exactly one of t0 and fraction")
    spec = ReplaySpec(
        store=Path(store),
        version=version,
        ids=(market,),
        archive=archive,
        snapshot=snapshot,
        vector_search=vector_search,
        fractions=(fraction,) if fraction is not None else (),
        at=(t0,) if t0 is not None else (),
        forecasters=("market",),
    )
    plan = prepare(spec)
    if not plan.cutoffs:
        raise ConfigError(
            f"market {market} has no Yes/No resolution in store {store}: nothing to replay"
        )
    cutoff = plan.cutoffs[0]
    question, ctx = question_at(plan.bundle, cutoff), context_at(plan, cutoff)
    return Bound(question, ctx, t0_tools(question, ctx), cutoff, plan)
