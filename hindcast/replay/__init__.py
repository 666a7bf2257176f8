"""Replaying markets at t0: the spec, cutoffs, the plan, the engine that runs and scores a sweep.
The face other packages import (loaded on first use)."""

from __future__ import annotations

# isort: skip_file
# fmt: off
from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # each name loads from its module on first use (hindcast.faces.lazy)
    from hindcast.replay import cutoffs, market_view, plan
    from hindcast.replay.cutoffs import Cutoff, check_fraction
    from hindcast.replay.engine import SweepResult, cache_path, default_models, run_sweep
    from hindcast.replay.identity import run_id
    from hindcast.replay.layout import flatten_layout, load_toml, refuse_unknown
    from hindcast.replay.market_view import find_market, list_row
    from hindcast.replay.plan import (Plan, context_at, prepare, question_at, retriever_factory,
        select_markets)
    from hindcast.replay.runner import Limits, Task
    from hindcast.replay.scored import (RunScores, board_json, leaderboard_of, load_scored,
        recorded_bundle, recorded_snapshots, score_run, scoring_policies)
    from hindcast.replay.settings import replay_spec
    from hindcast.replay.spec import (SAMPLE_FORECASTERS, SAMPLE_SUBSETS, ReplaySpec, Text,
        Wording, config_error, did_you_mean, parse_offset, spec_from_mapping)
    from hindcast.replay.sweep import Sweep, Unclaimed

__all__ = ["Cutoff", "Limits", "Plan", "ReplaySpec", "RunScores", "SAMPLE_FORECASTERS",
    "SAMPLE_SUBSETS", "Sweep", "SweepResult", "Task", "Text", "Unclaimed", "Wording", "board_json",
    "cache_path", "check_fraction", "config_error", "context_at", "cutoffs", "default_models",
    "did_you_mean", "find_market", "flatten_layout", "leaderboard_of", "list_row", "load_scored",
    "load_toml", "market_view", "parse_offset", "plan", "prepare", "question_at",
    "recorded_bundle", "recorded_snapshots", "refuse_unknown", "replay_spec", "retriever_factory",
    "run_id", "run_sweep", "score_run", "scoring_policies", "select_markets", "spec_from_mapping"]
# fmt: on
__getattr__, __dir__ = lazy(__name__, __file__)
