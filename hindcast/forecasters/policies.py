"""Retrieval policies of the document-reading agents (a sweep axis, set in the spec):

* `none` — closed book: no archive call at all; the agent answers from the question alone;
* `pit` — the harness's point-in-time filter only (the default: a spec without `policy`
  builds exactly the requests it built before policies existed);
* `pit+filter` — as `pit`, then every document the archive returns is judged by a leak
  detector (`detector=NAME`, `hindcast.leaks`) against the Question as it stood at t0,
  and a flagged one is withheld BEFORE the model sees it. Each removal is logged twice:
  a `withheld` step in the forecast's `usage["steps"]` (document id, the verdict, the call
  that returned it) and a `withhold` entry in the harness's retrieval log (`ctx.retrievals`,
  stored with the forecast), so a run records what the model was not shown.

A detector spec with parameters is written with `;` between them inside the forecaster
spec (whose parameters are separated by commas): `detector=judge:model=local;threshold=0.5`.
"""

from __future__ import annotations

import dataclasses
import threading
import weakref

from hindcast import leaks, llm
from hindcast.records import Document, Question

POLICIES = ("none", "pit", "pit+filter")
DEFAULT = "pit"
# Models → {detector spec → detector}: one detector per sweep (a detector may load an embedder
# or hold model clients), released with its Models
_DETECTORS: weakref.WeakKeyDictionary[object, dict[str, object]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def detector_spec(text: str) -> str:
    """The leak-detector spec a forecaster spec's `detector=` value names (`;` → `,`)."""
    return str(text or "").replace(";", ",")


def check(policy: str, detector: str) -> None:
    """A ValueError (the registry reports it as a ConfigError) for an inconsistent pair."""
    if policy not in POLICIES:
        raise ValueError(f"policy={policy!r}: use one of {', '.join(POLICIES)}")
    if (policy == "pit+filter") != bool(detector):
        raise ValueError(
            "policy=pit+filter needs detector=NAME, and detector= is only meaningful with it"
        )
    name = detector_spec(detector).partition(":")[0]
    if detector and name not in leaks.names():
        raise ValueError(
            f"unknown leak detector {name!r}: use one of {', '.join(leaks.names()) or '(none)'}"
        )


def document_text(doc: Document) -> str:
    """What a detector judges: the document's title and text."""
    return "\n".join(part for part in (doc.title, doc.text) if part)


class Screen:
    """One forecast's leak filter: each document judged once; a flagged one withheld and logged.

    `detector` None (policies `pit`, `none`) passes everything and logs nothing."""

    def __init__(self, detector, question: Question, ctx, usage) -> None:
        self.detector, self.question, self.ctx, self.usage = detector, question, ctx, usage
        self._verdicts: dict[str, leaks.Verdict] = {}

    async def keep(self, docs: list[Document], via: dict) -> list[Document]:
        """The documents the model may see; each withheld one logged with `via` (the
        call that returned it)."""
        kept, withheld = await self.split(docs)
        self.log(withheld, via)
        return kept

    async def split(
        self, docs: list[Document]
    ) -> tuple[list[Document], list[tuple[str, leaks.Verdict]]]:
        """(the documents the model may see, (id, verdict) of each withheld one), nothing logged."""
        if self.detector is None:
            return list(docs), []
        kept, withheld = [], []
        for doc in docs:
            verdict = await self._verdict(doc)
            if verdict.flagged:
                withheld.append((doc.id, verdict))
            else:
                kept.append(doc)
        return kept, withheld

    def log(self, withheld: list[tuple[str, leaks.Verdict]], via: dict) -> None:
        """A `withheld` step and a harness `withhold` entry for each removal."""
        for doc_id, verdict in withheld:
            record = dataclasses.asdict(verdict)
            self.usage.add("withheld", None, id=doc_id, verdict=record, **via)
            self.ctx.withhold(doc_id, record, via)

    async def _verdict(self, doc: Document) -> leaks.Verdict:
        if doc.id not in self._verdicts:
            self._verdicts[doc.id] = await self.detector.judge(document_text(doc), self.question)
        return self._verdicts[doc.id]


def screen(policy: str, detector: str, models, question: Question, ctx, usage) -> Screen:
    """The Screen of one forecast under `policy`: its detector built by `leaks.get_detector` with
    the forecaster's Models (the fallback Models outside an engine, as for its chat client)."""
    if policy != "pit+filter":
        return Screen(None, question, ctx, usage)
    if models is None:
        models = llm.FALLBACK.get()
    return Screen(detector_for(detector_spec(detector), models), question, ctx, usage)


def detector_for(spec: str, models) -> leaks.LeakDetector:
    """The detector `spec` names for `models`, built once (`leaks.get_detector`) and then shared
    by every forecast made with those Models."""
    with _LOCK:
        built = _DETECTORS.setdefault(models, {})
        if spec not in built:
            built[spec] = leaks.get_detector(spec, models)
        return built[spec]
