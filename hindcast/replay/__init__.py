"""Replaying markets at t0: the spec, cutoffs, the plan, the engine that runs and scores a sweep. The face other packages import (loaded on first use)."""

from __future__ import annotations

from hindcast.faces import lazy

_WHERE = {
    "board_json": "engine",
    "cache_path": "engine",
    "check_fraction": "cutoffs",
    "context_at": "plan",
    "Cutoff": "cutoffs",
    "cutoffs": "cutoffs",
    "default_models": "engine",
    "did_you_mean": "spec",
    "find_market": "market_view",
    "flatten_layout": "spec",
    "leaderboard_of": "engine",
    "list_row": "market_view",
    "load_scored": "engine",
    "load_toml": "spec",
    "market_view": "market_view",
    "parse_offset": "spec",
    "Plan": "plan",
    "plan": "plan",
    "POLICY": "coverage",
    "prepare": "plan",
    "question_at": "plan",
    "recorded_bundle": "engine",
    "ReplaySpec": "spec",
    "replay_spec": "settings",
    "retriever_factory": "plan",
    "run_id": "spec",
    "run_sweep": "engine",
    "RunScores": "engine",
    "SAMPLE_FORECASTERS": "spec",
    "SAMPLE_SUBSETS": "spec",
    "score_run": "engine",
    "select_markets": "plan",
    "spec_from_mapping": "spec",
    "SweepResult": "engine",
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
