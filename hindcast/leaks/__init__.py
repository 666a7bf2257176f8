"""Outcome-leak detectors (layer between `hindcast.llm` and `hindcast.forecasters`): does a text
reveal how a market resolved, or report events after t0? `registry` holds the Verdict record, the
detector protocol and the spec → detector registry; `lexical` is the model-free detector
(`lexical2` the same with the cues issue 30 asked for); `judge` the LLM judge; `cascade`
composes detectors (model-free first, a judge on what it cannot decide). The built-ins are
registered here, the way a plugin registers its own."""

from __future__ import annotations

from hindcast.leaks import cascade as _cascade
from hindcast.leaks import judge as _judge
from hindcast.leaks import lexical as _lexical
from hindcast.leaks import lexical2 as _lexical2
from hindcast.leaks.cascade import DEFAULT_BAND
from hindcast.leaks.judge import JUDGE_TEXT_CHARS
from hindcast.leaks.lexical import REVEAL_THRESHOLD, dates_after, outcome_cue, statements
from hindcast.leaks.registry import LABELS, LeakDetector, Verdict, get_detector, names, register

__all__ = [
    "DEFAULT_BAND",
    "JUDGE_TEXT_CHARS",
    "LABELS",
    "REVEAL_THRESHOLD",
    "LeakDetector",
    "Verdict",
    "dates_after",
    "get_detector",
    "names",
    "outcome_cue",
    "register",
    "statements",
]

register("lexical", _lexical.make)
register("lexical2", _lexical2.make)
register("judge", _judge.make)
register("cascade", _cascade.make, raw=True)
