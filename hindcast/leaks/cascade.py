"""Composed leak detectors: `cascade:<spec>[@lo-hi]>…><spec>` — a cheap detector first, a costly one
only on what the first cannot decide. E.g. `cascade:lexical>judge:model=local`: the model-free
`lexical` decides every text whose score lies outside its undecided band [lo, hi) (default
[DEFAULT_BAND]); only the texts inside it are sent to the LLM judge, whose verdict is the
cascade's. Every stage but the last may carry its band (`lexical@0.3-0.6`); the last decides
whatever reaches it.

Why a band on the score: `lexical` returns a Verdict whose score is its measured leak evidence
(0..1, thresholded at REVEAL_THRESHOLD into "reveals-outcome"); a score far below the threshold
(the text does not name the question's entities, or names them with no outcome wording) or far
above it is a confident verdict, one near it is not. Outside the band the first stage's label
stands as it is (an "after-t0" by dates included). The default band [0.2, 0.7) was read off the
score distribution of the shipped sample leak set (data/leakset: 133 of 509 rows fall in it, 63 of
the 80 positives that lexical does not flag at 0.5 or flags with score < 0.7; 9 positives lie
below 0.2 and 3 negatives at 0.7 or above) — see benchmarks/leak_detectors.py.

A stage's unreadable verdict (an LLM judge's answer that could not be read: score NaN) is the
cascade's verdict: never replaced by the first stage's guess. An outage propagates.

Cost: `stats` counts per stage the texts it judged and the seconds its calls took (summed call
latency; with concurrent calls their sum exceeds the wall time), and how many texts each stage
decided — what benchmarks/leak_detectors.py prints as the per-stage cost table.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from hindcast.errors import ConfigError
from hindcast.leaks.registry import LeakDetector, Verdict, get_detector
from hindcast.records import Question

DEFAULT_BAND = (0.2, 0.7)
_BAND = re.compile(r"@(\d*\.?\d+)-(\d*\.?\d+)$")


@dataclass
class StageCost:
    """What one stage of a cascade cost so far: texts it was asked about, the seconds those calls
    took (summed), and texts it decided (the rest went on to the next stage)."""

    name: str
    calls: int = 0
    seconds: float = 0.0
    decided: int = 0

    def to_json(self) -> dict:
        return {
            "stage": self.name,
            "calls": self.calls,
            "seconds": round(self.seconds, 4),
            "decided": self.decided,
        }


@dataclass
class Stage:
    detector: LeakDetector
    band: tuple[float, float] | None  # None: the last stage (decides everything it gets)
    cost: StageCost = field(init=False)

    def __post_init__(self) -> None:
        self.cost = StageCost(self.detector.name)

    def undecided(self, verdict: Verdict) -> bool:
        return self.band is not None and self.band[0] <= verdict.score < self.band[1]


class CascadeDetector:
    """Stages in order; each decides a text unless its verdict's score lies in its band."""

    def __init__(self, spec: str, stages: list[Stage]):
        self.spec, self.stages = spec, stages
        self.name = "cascade:" + ">".join(
            s.detector.name + (f"@{s.band[0]:g}-{s.band[1]:g}" if s.band else "") for s in stages
        )

    async def judge(self, text: str, question: Question) -> Verdict:
        trail: list[str] = []
        for stage in self.stages:
            started = time.perf_counter()
            try:
                verdict = await stage.detector.judge(text, question)
            finally:
                stage.cost.calls += 1
                stage.cost.seconds += time.perf_counter() - started
            if not stage.undecided(verdict):  # includes an unreadable verdict (NaN in no band)
                stage.cost.decided += 1
                return Verdict(
                    verdict.label,
                    verdict.score,
                    self.name,
                    "; ".join([*trail, f"{stage.detector.name}: {verdict.reason}"]),
                )
            lo, hi = stage.band or (0.0, 0.0)  # undecided: the stage has a band
            trail.append(
                f"{stage.detector.name} score {verdict.score:g} in [{lo:g}, {hi:g}): undecided"
            )
        raise AssertionError("the last stage of a cascade has no band")  # pragma: no cover

    @property
    def stats(self) -> list[dict]:
        return [s.cost.to_json() for s in self.stages]


def parse(spec: str) -> list[tuple[str, tuple[float, float] | None]]:
    """`cascade:a[@lo-hi]>b[@lo-hi]>…>z` → [(stage spec, band)]; the first stage's band defaults
    to DEFAULT_BAND, a middle stage's must be given, the last has none."""
    rest = spec.partition(":")[2]
    parts = [p.strip() for p in rest.split(">")]
    if len(parts) < 2 or not all(parts):
        raise ConfigError(
            f"leak detector {spec!r}: a cascade names two or more detectors separated by '>', "
            "e.g. cascade:lexical>judge:model=local"
        )
    out: list[tuple[str, tuple[float, float] | None]] = []
    for i, part in enumerate(parts):
        match = _BAND.search(part)
        band = (float(match.group(1)), float(match.group(2))) if match else None
        stage = part[: match.start()] if match else part
        last = i == len(parts) - 1
        if stage.partition(":")[0] == "cascade":
            raise ConfigError(f"leak detector {spec!r}: a cascade stage cannot be a cascade")
        if last and band is not None:
            raise ConfigError(f"leak detector {spec!r}: the last stage decides all; it has no band")
        if not last and band is None:
            if i:
                raise ConfigError(f"leak detector {spec!r}: give stage {stage!r} a band @lo-hi")
            band = DEFAULT_BAND
        if band is not None and not 0.0 <= band[0] <= band[1] <= 1.0:
            raise ConfigError(
                f"leak detector {spec!r}: band {band[0]:g}-{band[1]:g} of {stage!r} must satisfy "
                "0 ≤ lo ≤ hi ≤ 1"
            )
        out.append((stage, band))
    return out


def make(spec: str, params: dict[str, str], models=None) -> CascadeDetector:
    """Registered raw (the registry passes the whole spec; `params` is empty)."""
    stages = []
    for stage, band in parse(spec):
        try:
            stages.append(Stage(get_detector(stage, models), band))
        except ConfigError as exc:
            raise ConfigError(f"leak detector {spec!r}: {exc}") from None
    return CascadeDetector(spec, stages)
