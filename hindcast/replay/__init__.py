"""Replaying markets at t0: the spec, cutoffs, the plan, the engine that runs and scores a sweep.
The face other packages import (loaded on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # what mypy sees; at run time each name loads on first use (`lazy`)
    from hindcast.replay import cutoffs, market_view, plan
    from hindcast.replay.coverage import POLICY
    from hindcast.replay.cutoffs import Cutoff, check_fraction
    from hindcast.replay.engine import SweepResult, cache_path, default_models, run_sweep
    from hindcast.replay.identity import run_id
    from hindcast.replay.layout import flatten_layout, load_toml, refuse_unknown
    from hindcast.replay.market_view import find_market, list_row
    from hindcast.replay.plan import (
        Plan,
        context_at,
        prepare,
        question_at,
        retriever_factory,
        select_markets,
    )
    from hindcast.replay.runner import Limits, Task
    from hindcast.replay.scored import (
        RunScores,
        board_json,
        leaderboard_of,
        load_scored,
        recorded_bundle,
        recorded_snapshots,
        score_run,
        scoring_policies,
    )
    from hindcast.replay.settings import replay_spec
    from hindcast.replay.spec import (
        SAMPLE_FORECASTERS,
        SAMPLE_SUBSETS,
        ReplaySpec,
        Text,
        Wording,
        config_error,
        did_you_mean,
        parse_offset,
        spec_from_mapping,
    )
    from hindcast.replay.sweep import Sweep, Unclaimed

_WHERE = {
    "board_json": "scored",
    "cache_path": "engine",
    "check_fraction": "cutoffs",
    "context_at": "plan",
    "Cutoff": "cutoffs",
    "cutoffs": "cutoffs",
    "default_models": "engine",
    "did_you_mean": "spec",
    "find_market": "market_view",
    "flatten_layout": "layout",
    "leaderboard_of": "scored",
    "list_row": "market_view",
    "load_scored": "scored",
    "load_toml": "layout",
    "market_view": "market_view",
    "parse_offset": "spec",
    "Plan": "plan",
    "plan": "plan",
    "POLICY": "coverage",
    "prepare": "plan",
    "question_at": "plan",
    "recorded_bundle": "scored",
    "recorded_snapshots": "scored",
    "refuse_unknown": "layout",
    "config_error": "spec",
    "Text": "spec",
    "Wording": "spec",
    "scoring_policies": "scored",
    "ReplaySpec": "spec",
    "replay_spec": "settings",
    "retriever_factory": "plan",
    "run_id": "identity",
    "run_sweep": "engine",
    "RunScores": "scored",
    "SAMPLE_FORECASTERS": "spec",
    "SAMPLE_SUBSETS": "spec",
    "score_run": "scored",
    "select_markets": "plan",
    "spec_from_mapping": "spec",
    "SweepResult": "engine",
    "Task": "runner",
    "Limits": "runner",
    "Sweep": "sweep",
    "Unclaimed": "sweep",
}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy(
    __name__,
    _WHERE,
    modules=(
        "cutoffs",
        "market_view",
        "plan",
    ),
)
