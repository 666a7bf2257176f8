"""The Forecaster protocol and the t0-bound Context: all a forecaster may see.

A forecaster receives a Question (the market as it stood at t0, no outcome) and a
Context whose every capability is bounded by t0 by the harness, not by the forecaster.

The Context is built eagerly from pre-t0 data only: it keeps the price points before t0,
the outcomes of *other* markets known before t0 (as `PastResolution`, id and outcome), and
an `Archive` handle. No attribute of it, private or not, leads to anything later: the
handle holds an opaque number, not the retriever, so walking a Context's attributes
reaches neither the index nor a month after month(t0) (and the retriever itself holds a
`BoundIndex` that refuses those months).
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, Protocol, Self, runtime_checkable

from hindcast.errors import ForecastError, LeakageError
from hindcast.forecasters.outcomes import KnownBefore, Outcomes, PastResolution
from hindcast.markets import history_before
from hindcast.records import Document, Forecast, PricePoint, Question, Resolution, Retrieval
from hindcast.timeutil import iso

if TYPE_CHECKING:
    from hindcast.llm import Models


@runtime_checkable
class Forecaster(Protocol):
    """Anything with a `name` and this one coroutine can be judged."""

    name: str

    async def forecast(self, question: Question, ctx: "Context") -> Forecast: ...


@runtime_checkable
class ModelForecaster(Forecaster, Protocol):
    """A Forecaster with the hooks the engine calls around a sweep, each with a no-op default.

    Subclass it to inherit the defaults (the baselines do) and override what applies (the model
    forecasters do). A plugin that implements only `Forecaster` is given the defaults by
    `hooked`.

    `cheap`: the forecaster calls no model and answers in microseconds from its Context alone
    (the baselines): a sweep computes and stores such forecasts in batches, never behind the
    model forecasts."""

    cheap: ClassVar[bool] = False

    def bind(self, models: Models) -> Self:
        """This forecaster calling its models through `models` (keys, HTTP clients, the cache)."""
        return self

    def for_attempt(self, attempt: int) -> Self:
        """This forecaster asking anew (not from a cache) for attempt `attempt` of a
        stored failure."""
        return self

    def model_name(self) -> str | None:
        """The bare model name the price table prices (None: no model)."""
        return None

    def provenance(self) -> dict:
        """What the run's manifest records of this forecaster (model, endpoint, prompt hashes)."""
        return {"class": type(self).__name__}

    async def aclose(self) -> None:
        """Release connections after a sweep."""


def hooked(forecaster: Forecaster) -> ModelForecaster:
    """The forecaster with the engine's hooks: itself when it has them all (it subclasses
    ModelForecaster, or implements them), else a view calling those it has and the defaults."""
    return forecaster if isinstance(forecaster, ModelForecaster) else _Hooked(forecaster)


class _Hooked(ModelForecaster):
    """A plugin implementing part of ModelForecaster: its own hooks, the defaults for the rest."""

    def __init__(self, inner: Forecaster) -> None:
        self.inner, self.name = inner, inner.name
        self.cheap = bool(getattr(inner, "cheap", False))  # type: ignore[misc]

    async def forecast(self, question: Question, ctx: Context) -> Forecast:
        return await self.inner.forecast(question, ctx)

    def bind(self, models: Models) -> Self:
        return self._rewrap("bind", models)

    def for_attempt(self, attempt: int) -> Self:
        return self._rewrap("for_attempt", attempt)

    def model_name(self) -> str | None:
        own = self._own("model_name")
        return own() if own else None

    def provenance(self) -> dict:
        own = self._own("provenance")
        return dict(own()) if own else {"class": type(self.inner).__name__}

    async def aclose(self) -> None:
        own = self._own("aclose")
        if own:
            await own()

    def _own(self, hook: str):
        method = getattr(self.inner, hook, None)  # the one place a plugin's hooks are looked up
        return method if callable(method) else None

    def _rewrap(self, hook: str, arg) -> Self:
        own = self._own(hook)
        return type(self)(own(arg)) if own else self


_RETRIEVERS: dict[
    int, object
] = {}  # Archive handle → its t0-bound retriever (while the handle lives)
_HANDLES = itertools.count(1)


class Archive:
    """A t0-bound retriever seen through an opaque handle: search, read and thread only.

    The retriever is kept in a module table under a number and released with the handle,
    so nothing reachable from a Context's attributes is the retriever, its index or a month
    file."""

    __slots__ = ("_handle", "__weakref__")

    def __init__(self, retriever) -> None:
        self._handle = next(_HANDLES)
        _RETRIEVERS[self._handle] = retriever
        weakref.finalize(self, _RETRIEVERS.pop, self._handle, None)

    def search(self, query: str, k: int, mode: str) -> list:
        return _RETRIEVERS[self._handle].search(query, k, mode)

    def read(self, doc_id: str) -> Document | None:
        return _RETRIEVERS[self._handle].read(doc_id)

    def thread(self, submission_id: str) -> list[Document]:
        return _RETRIEVERS[self._handle].thread(submission_id)


class Context:
    """t0-bound capabilities. Built by the harness; the forecaster cannot change t0.

    `retriever` is a TimeBoundRetriever already bound to this t0 (or None when the run
    has no archive); the Context keeps only an `Archive` handle to it. Every document it
    returns is checked again here, and every call is logged in `retrievals` so a run
    records what each forecast read. `resolutions` may hold every market's resolution:
    only the other markets' outcomes known before t0 are kept.
    """

    __slots__ = (
        "_t0",
        "_history",
        "_resolutions",
        "_market_id",
        "_archive_handle",
        "_log",
        "_repeat",
    )

    def __init__(
        self,
        t0,
        market_id: str,
        history: Sequence[PricePoint],
        resolutions: Sequence[Resolution] | Outcomes,
        retriever=None,
        repeat: int = 0,
    ) -> None:
        if retriever is not None and retriever.t0 != t0:
            raise LeakageError(f"retriever bound to {iso(retriever.t0)}, context to {iso(t0)}")
        self._t0 = t0
        self._market_id = market_id
        self._history = history_before(history, t0)
        known = resolutions if isinstance(resolutions, Outcomes) else Outcomes(resolutions)
        self._resolutions: KnownBefore = known.before(t0, market_id)
        self._archive_handle = Archive(retriever) if retriever is not None else None
        self._log: list[Retrieval] = []
        self._repeat = repeat

    @property
    def t0(self):
        return self._t0

    @property
    def repeat(self) -> int:
        """Which repeat of this (forecaster, market, t0) this is: 0, 1, … (part of cache keys)."""
        return self._repeat

    def price_history(self) -> tuple[PricePoint, ...]:
        """The market's YES prices known strictly before t0, oldest first."""
        for point in self._history:
            if point.t >= self._t0:
                raise LeakageError(f"price at {iso(point.t)} is not before t0 {iso(self._t0)}")
        return self._history

    def resolved_before(self) -> tuple[PastResolution, ...]:
        """Other markets whose Yes/No outcome was certainly public before t0."""
        return self._resolutions.listed()

    def resolved_counts(self) -> tuple[int, float]:
        """How many other markets' Yes/No outcomes were certainly public before t0, and how many
        of them were Yes (what `resolved_before()` lists, counted without listing it)."""
        return self._resolutions.counts()

    def search(self, query: str, k: int = 10, mode: str = "hybrid") -> list:
        """Archive hits (doc, score, mode) created before t0, best first."""
        hits = self._archive().search(query, k, mode)
        self._checked([h.doc for h in hits], "search", {"query": query, "k": k, "mode": mode})
        return hits

    def read(self, doc_id: str) -> Document | None:
        """One archive document if it was visible before t0, else None."""
        doc = self._archive().read(doc_id)
        self._checked([doc] if doc else [], "read", {"doc_id": doc_id})
        return doc

    def thread(self, submission_id: str) -> list[Document]:
        """A submission and its comments created before t0, in time order."""
        docs = self._archive().thread(submission_id)
        self._checked(docs, "thread", {"doc_id": submission_id})
        return docs

    def withhold(self, doc_id: str, verdict: dict, via: dict) -> None:
        """Record that the forecaster's leak filter (policy `pit+filter`) kept document `doc_id`,
        returned by the call `via`, from the model: a `withhold` entry (returning no ids) with the
        detector's verdict, so the stored retrievals say what was read and what was withheld."""
        detail = {"doc_id": doc_id, "verdict": dict(verdict), "via": dict(via)}
        self._log.append(Retrieval("withhold", (), detail))

    def note(self, op: str, **fields) -> None:
        """Record a tool call that returned no archive document (a read of the price history or
        of the past resolutions): an entry with no `ids`, so the stored retrievals list every
        tool call a forecaster made."""
        self._log.append(Retrieval(op, (), fields))

    @property
    def retrievals(self) -> tuple[Retrieval, ...]:
        """Every archive call so far, with the ids it returned (and every `withhold` entry)."""
        return tuple(self._log)

    def _archive(self) -> Archive:
        if self._archive_handle is None:
            raise ForecastError(
                "this run has no archive snapshot: search, read and thread are unavailable"
            )
        return self._archive_handle

    def _checked(self, docs: list[Document], op: str, detail: dict[str, object]) -> None:
        for doc in docs:
            if doc.created_at >= self._t0:
                raise LeakageError(
                    f"document {doc.id} created {iso(doc.created_at)} is not before t0 "
                    f"{iso(self._t0)}"
                )
        self._log.append(Retrieval(op, tuple(d.id for d in docs), detail))
