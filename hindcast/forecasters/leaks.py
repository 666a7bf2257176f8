"""Outcome-leak detectors: does a text (a document a forecaster read, or its rationale) reveal
how a market resolved, or report events after t0? Pluggable like forecasters: a detector is
named by a spec (`lexical`, `judge:model=local` …) and registered under that name.

A detector judges a text against the QUESTION as it stood at t0 (`records.Question`), never
against the outcome: it flags a text that states either outcome, so the same judgement is
made whatever happened. Verdict labels: "reveals-outcome", "after-t0", "neither".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from hindcast.errors import ConfigError
from hindcast.records import Question

LABELS = ("reveals-outcome", "after-t0", "neither")


@dataclass(frozen=True)
class Verdict:
    label: str  # one of LABELS
    score: float  # the detector's confidence that the text leaks, 0..1 (thresholded into `label`)
    detector: str  # the detector's full spec (with a template hash for an LLM judge)
    reason: str = ""

    @property
    def flagged(self) -> bool:
        return self.label != "neither"


class LeakDetector(Protocol):
    name: str

    async def judge(self, text: str, question: Question) -> Verdict: ...


_FACTORIES: dict[str, Callable[..., LeakDetector]] = {}


def register(name: str, factory: Callable[..., LeakDetector]) -> None:
    """`factory(spec: str, params: dict[str, str], models) -> LeakDetector` for specs `name[:k=v,…]`."""
    _FACTORIES[name] = factory


def get_detector(spec: str, models=None) -> LeakDetector:
    """The detector a spec names (`lexical`, `judge:model=local` …); `models`: a Models value
    for detectors that call a model."""
    name, _, rest = spec.partition(":")
    if name not in _FACTORIES:
        raise ConfigError(f"unknown leak detector {spec!r}: use one of {', '.join(sorted(_FACTORIES)) or '(none)'}")
    params = dict(item.split("=", 1) for item in rest.split(",") if item) if rest else {}
    return _FACTORIES[name](spec, params, models)


def names() -> list[str]:
    return sorted(_FACTORIES)
