"""Outcome-leak detectors (layer between `hindcast.llm` and `hindcast.forecasters`): does a text
reveal how a market resolved, or report events after t0? `registry` holds the Verdict record, the
detector protocol and the spec → detector registry; `lexical` is the model-free detector
(`lexical2` the same with the cues issue 30 asked for); `judge` the LLM judge; `cascade`
composes detectors (model-free first, a judge on what it cannot decide). The built-ins are
registered here, the way a plugin registers its own."""

from __future__ import annotations

from hindcast.leaks import cascade, judge, lexical, lexical2
from hindcast.leaks.cascade import DEFAULT_BAND, CascadeDetector, StageCost
from hindcast.leaks.judge import JUDGE_TEXT_CHARS, JudgeAnswer, JudgeDetector, parse_judge
from hindcast.leaks.lexical import (
    REVEAL_THRESHOLD,
    LexicalDetector,
    dates_after,
    outcome_cue,
    statements,
    topic_share,
)
from hindcast.leaks.lexical2 import Lexical2Detector
from hindcast.leaks.registry import LABELS, LeakDetector, Verdict, get_detector, names, register

__all__ = [
    "DEFAULT_BAND",
    "JUDGE_TEXT_CHARS",
    "LABELS",
    "REVEAL_THRESHOLD",
    "CascadeDetector",
    "JudgeAnswer",
    "JudgeDetector",
    "LeakDetector",
    "Lexical2Detector",
    "LexicalDetector",
    "StageCost",
    "Verdict",
    "dates_after",
    "get_detector",
    "names",
    "outcome_cue",
    "parse_judge",
    "register",
    "statements",
    "topic_share",
]

register("lexical", lexical.make)
register("lexical2", lexical2.make)
register("judge", judge.make)
register("cascade", cascade.make, raw=True)
