"""Outcome-leak detectors: does a text (a document a forecaster read, or its rationale) reveal
how a market resolved, or report events after t0? Pluggable like forecasters: a detector is
named by a spec (`lexical`, `judge:model=local` …) and registered under that name.

A detector judges a text against the QUESTION as it stood at t0 (`records.Question`), never
against the outcome: it flags a text that states either outcome, so the same judgement is
made whatever happened. Verdict labels: "reveals-outcome", "after-t0", "neither".

The registry: a detector is made from its spec by the factory registered under the spec's name;
the built-ins (`hindcast.leaks.lexical`, `hindcast.leaks.judge`) are registered by the package
face, the way a plugin would register.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from hindcast.errors import ConfigError
from hindcast.records import Question
from hindcast.registry import Registry

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

    @property
    def unreadable(self) -> bool:
        """The detector could not decide (an LLM judge's unreadable answer): label "neither", score
        NaN and a reason saying so. Counted apart, never as a plain "neither"."""
        return math.isnan(self.score)


class LeakDetector(Protocol):
    name: str

    async def judge(self, text: str, question: Question) -> Verdict: ...


_FACTORIES: Registry[Callable[..., LeakDetector]] = Registry()
_RAW: set[str] = set()  # names whose factory reads the whole spec itself (composed detectors)


def register(name: str, factory: Callable[..., LeakDetector], *, raw: bool = False) -> None:
    """`factory(spec: str, params: dict[str, str], models) -> LeakDetector` for specs
    `name[:k=v,…]`; `raw`: the spec's rest is not read as k=v (params is empty), the factory
    parses `spec` itself (`cascade:lexical>judge:model=local`)."""
    _FACTORIES[name] = factory
    (_RAW.add if raw else _RAW.discard)(name)


def get_detector(spec: str, models=None) -> LeakDetector:
    """The detector a spec names (`lexical`, `judge:model=local` …); `models`: a Models value
    for detectors that call a model."""
    name, _, rest = spec.partition(":")
    if name not in _FACTORIES:
        raise ConfigError(
            f"unknown leak detector {spec!r}: use one of "
            f"{', '.join(sorted(_FACTORIES)) or '(none)'}"
        )
    if name in _RAW:
        return _FACTORIES[name](spec, {}, models)
    items = [item for item in rest.split(",") if item] if rest else []
    if any("=" not in item for item in items):
        raise ConfigError(f"leak detector {spec!r}: parameters are key=value, separated by commas")
    return _FACTORIES[name](spec, dict(item.split("=", 1) for item in items), models)


def names() -> list[str]:
    return sorted(_FACTORIES)


def check_params(spec: str, params: dict[str, str], known: tuple[str, ...]) -> None:
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ConfigError(
            f"leak detector {spec!r}: unknown parameter(s) {', '.join(unknown)} "
            f"(known: {', '.join(known)})"
        )
