"""Planning a sweep: a ReplaySpec resolved against its frozen inputs, before anything is run.

`prepare(spec)` opens the market store version, the archive snapshot and its index, selects
the markets, schedules every (market, t0) cutoff (refusing any that cannot be replayed) and
derives the run identity and id. Nothing here calls a forecaster or writes anything.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hindcast import archive
from hindcast.errors import HindcastError
from hindcast.forecasters import Context, Outcomes
from hindcast.markets import FREEZE_ROUTE, MarketBundle, market_at, open_version
from hindcast.records import Market, Question, Resolution, RunIdentity
from hindcast.replay import cutoffs as cutoff_rules
from hindcast.replay.identity import run_id, run_identity
from hindcast.replay.spec import ReplaySpec, parse_offset
from hindcast.timeutil import ONE_DAY, day_start, iso

if TYPE_CHECKING:
    from hindcast.archive import IndexReader, Snapshot


@dataclass(frozen=True)
class Plan:
    """A sweep resolved against its frozen inputs: what will be forecast, under which run id."""

    run_id: str
    identity: RunIdentity
    bundle: MarketBundle
    markets: list[str]
    cutoffs: list[cutoff_rules.Cutoff]
    snapshot: Snapshot | None
    index: IndexReader | None  # its opened embedding/full-text index
    store_root: Path
    search: dict = dataclasses.field(
        default_factory=dict
    )  # how vectors are searched, and where (TimeBoundRetriever keywords)

    def close(self) -> None:
        """Stop what the plan opened: the index's scan threads, the archive's Ray shards."""
        if self.index is not None:
            self.index.close()
        if "shards" in self.search:
            self.search["shards"].close()

    @cached_property
    def outcomes(self) -> Outcomes:
        """The bundle's outcomes, indexed once for every Context of the plan."""
        return Outcomes(self.bundle.resolutions)


def prepare(spec: ReplaySpec) -> Plan:
    """Open the frozen inputs, select markets, schedule cutoffs; refuse any invalid cutoff."""
    version = open_version(spec.store, spec.version)
    snapshot = open_snapshot(spec)
    index = open_index(snapshot)
    markets = select_markets(version.bundle, spec)
    cutoffs = plan_cutoffs(
        version.bundle, markets, spec, archive_end(snapshot) if spec.hindcast_rule else None
    )
    identity = run_identity(spec, version.id, markets, snapshot.id if snapshot else None)
    uncertain = uncertain_text(version.bundle, cutoffs)
    identity = dataclasses.replace(identity, question_text_uncertain=uncertain)
    search: dict = (
        {}
        if spec.vector_search == "exact"
        else {"vector_search": spec.vector_search, "nprobe": spec.nprobe}
    )
    if spec.ray is not None and index is not None:  # where: not part of what the run is
        search["shards"] = archive.fanout.open_shards(index, spec.ray)
    if index is not None:  # which vectors the run searched, and how, is part of what it is
        searched = {k: index.info.get(k) for k in ("embedder", "dims", "embedder_dtype")}
        identity = dataclasses.replace(identity, index=searched | approximate_search(index, spec))
    return Plan(
        run_id(identity),
        identity,
        version.bundle,
        markets,
        cutoffs,
        snapshot,
        index,
        Path(spec.store),
        search,
    )


def approximate_search(index: IndexReader, spec: ReplaySpec) -> dict:
    """In approx mode, the approximate index a run searches and its recall measured when it was
    built (so each run's manifest records it); refused before any forecast if there is none."""
    if spec.vector_search == "exact":
        return {}
    ann = index.info.get("ann")
    if not ann:
        raise HindcastError(
            f"--vector-search approx: the index {index.root} has no approximate index; "
            "run `hindcast archive embed --approx` first"
        )

    # a stopped rebuild is refused before any forecast
    archive.check_recorded(index.root, index.info)
    measured = {
        k: ann.get(k)
        for k in (
            "format",
            "lists",
            "nprobe",
            "codebook",
            "recall@10",
            "recall@10_mean",
            "probe_queries",
        )
    } | {k: ann[k] for k in ("partition", "projection", "threshold") if k in ann}
    return {
        "vector_search": {
            "mode": "approx",
            "nprobe_used": spec.nprobe or ann.get("nprobe"),
            **measured,
        }
    }


def select_markets(bundle: MarketBundle, spec: ReplaySpec) -> list[str]:
    """Markets of the spec with a Yes/No outcome, sorted by id; unknown ids are an error."""
    markets = {m.id: m for m in bundle.markets}
    resolutions = {r.market_id: r for r in bundle.resolutions}
    missing = [m for m in spec.ids if m not in markets]
    if missing:
        raise HindcastError(f"market(s) not in store {spec.store}: {', '.join(missing)}")
    chosen = [
        i
        for i in sorted(spec.ids or markets)
        if resolutions[i].outcome is not None
        and _matches(markets[i], resolutions[i], spec)
        and not excluded(bundle.meta.get(i), spec.exclude)
    ]
    return chosen[: spec.limit] if spec.limit else chosen


def _matches(market: Market, resolution: Resolution, spec: ReplaySpec) -> bool:
    return (
        (not spec.topics or market.topic in spec.topics)
        and (spec.resolved_after is None or resolution.resolved_at >= spec.resolved_after)
        and (spec.resolved_before is None or resolution.resolved_at < spec.resolved_before)
        and (spec.min_volume is None or (market.volume or 0.0) >= spec.min_volume)
    )


def excluded(meta: Any, exclude: tuple[str, ...]) -> bool:
    """The market belongs to a class the spec excludes (disputed; rules updated at any time).
    `meta`: the market's MarketMeta in its bundle, or None (not on the markets face)."""
    return meta is not None and (
        ("disputed" in exclude and meta.disputed)
        or ("rules-updated" in exclude and meta.rules_updated_at is not None)
    )


def uncertain_text(bundle: MarketBundle, cutoffs: list) -> tuple[dict, ...] | None:
    """The cutoffs whose question text is uncertain: the market's rules were updated at or
    after t0, so the text a forecaster is shown may not have existed at t0. Recorded in the
    run identity (and so in its manifest) only when there is one: runs without keep their id."""
    marked = [
        {"market_id": c.market_id, "t0": iso(c.t0), "rules_updated_at": iso(meta.rules_updated_at)}
        for c in cutoffs
        for meta in [bundle.meta.get(c.market_id)]
        if meta is not None and meta.rules_updated_at is not None and meta.rules_updated_at >= c.t0
    ]
    return tuple(marked) if marked else None


def plan_cutoffs(
    bundle: MarketBundle,
    market_ids: list[str],
    spec: ReplaySpec,
    archive_end: datetime | None = None,
) -> list[cutoff_rules.Cutoff]:
    markets = {m.id: m for m in bundle.markets}
    resolutions = {r.market_id: r for r in bundle.resolutions}
    lives = [
        cutoff_rules.lifetime(markets[i], resolutions[i], bundle.prices.get(i, ()))
        for i in market_ids
    ]
    offsets = [(parse_offset(o), o) for o in spec.offsets]
    frozen = freeze_only(bundle, market_ids)
    return [
        cutoff
        for life in lives
        for cutoff in (
            [cutoff_rules.freeze_cutoff(life, frozen[life.market_id])]
            if life.market_id in frozen
            else cutoff_rules.schedule(
                [life], spec.fractions, spec.at, offsets, archive_end, spec.hindcast_rule
            )
        )
    ]


def freeze_only(bundle: MarketBundle, market_ids: list[str]) -> dict[str, datetime]:
    """Markets whose price and text are known at one instant only (a ForecastBench question
    without a venue history: Metaculus, INFER, data, combination), id → that instant. A later
    cutoff would score against a stale price, an earlier one read an unfrozen text."""
    return {
        i: meta.rules_updated_at
        for i in market_ids
        for meta in [bundle.meta.get(i)]
        if meta is not None and meta.price_route == FREEZE_ROUTE and meta.rules_updated_at
    }


def subset_rule(spec: ReplaySpec, markets: list[str]) -> Callable[[str, str], bool]:
    """A forecaster with a subset size runs on that many markets, taken in a fixed hash order."""
    order = sorted(markets, key=lambda m: hashlib.sha256(m.encode()).hexdigest())
    subsets = {name: set(order[:n]) for name, n in spec.subsets}
    return lambda forecaster, market: forecaster not in subsets or market in subsets[forecaster]


def question_at(bundle: MarketBundle, cutoff: cutoff_rules.Cutoff) -> Question:
    """The market as it stood at the cutoff (its description version of that time) and t0;
    nothing about the outcome."""
    market = market_at(bundle, cutoff.market_id, cutoff.t0)
    return Question(
        market.id,
        market.question,
        market.description,
        cutoff.t0,
        market.url,
        market.topic,
        market.scheduled_close,
    )


def context_at(
    p: Plan,
    cutoff: cutoff_rules.Cutoff,
    repeat: int = 0,
    retriever_for: Callable[[datetime], object] | None = None,
) -> Context:
    """The t0-bound Context a forecaster of this plan receives at `cutoff` (the one builder:
    the engine and the adapters both call it). `retriever_for`: `retriever_factory(...)` of
    the plan, made once by a caller building many contexts."""
    made = (
        retriever_for
        if retriever_for is not None
        else retriever_factory(p.snapshot, p.index, p.search)
    )
    return Context(
        cutoff.t0,
        cutoff.market_id,
        p.bundle.prices.get(cutoff.market_id, ()),
        p.outcomes,
        made(cutoff.t0),
        repeat,
    )


def open_snapshot(spec: ReplaySpec) -> Snapshot | None:
    """The spec's archive snapshot (None: a sweep without an archive)."""
    if spec.archive is None:
        return None

    return archive.open_snapshot(Path(spec.archive), spec.snapshot)


def open_index(snapshot: Snapshot | None) -> IndexReader | None:
    """A sweep given an archive needs its index: refused before any forecast, not per forecast."""
    if snapshot is None:
        return None

    return archive.open_index(snapshot)


def retriever_factory(
    snapshot: Snapshot | None, index: IndexReader | None, search: dict | None = None
) -> Callable[[datetime], object]:
    """t0 → a TimeBoundRetriever over the snapshot as it stood at t0 (None without an archive);
    `search`: how vectors are searched (`vector_search`, `nprobe`)."""
    if snapshot is None:
        return lambda t0: None

    return lambda t0: archive.TimeBoundRetriever(snapshot, t0, index=index, **(search or {}))


def archive_end(snapshot: Snapshot | None) -> datetime | None:
    """The instant after the archive's last full day (for the Hindcast rule)."""
    if snapshot is None or not snapshot.months:
        return None
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    files = snapshot.partition_files(snapshot.months[-1])
    last = max(
        pc.max(pq.read_table(f, columns=["created_at"])["created_at"]).as_py() for f in files
    )
    return day_start(last) + ONE_DAY
