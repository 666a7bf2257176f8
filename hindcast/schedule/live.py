"""The service's live arm (`[live]`, job `live`): forecast open markets now, score them once they
resolve, and hindcast the same markets at the same instants for the backtest–live report.

Each tick (the service's `now`):

1. The forecast log is verified against the head recorded in the service state; a log that
   fails is refused (nothing more is appended to it) — `hindcast live verify` names the record.
2. Gamma lists the open markets (`markets.list_open`, the [markets] URLs); the named sweep's
   market filters (ids, topics, min_volume) select among them. Each of the sweep's
   forecasters is asked about every selected market it has no live forecast of younger
   than `every`, at t0 = now: the question as listed now, prices strictly before t0
   (the Context's filter), resolutions of other markets known before t0 (the newest market
   store), and the sweep's archive at the newest snapshot the service has indexed — the
   documents ingested by then, read through a TimeBoundRetriever (created_at < t0). The
   forecast path is the hindcast's (a `replay.Sweep` of live cutoffs): an answer that is no
   probability is a stored failure; an unreachable model is an outage (logged as an attempt, not
   stored, asked again next tick; the job ends `stopped`).
3. Every forecast is appended to the hash-chained log (`schedule.livelog`) *before* it is
   stored in the run store under the run `live-<sweep>` (label "live"), and the new head
   recorded in the service state.
4. Live forecasts of markets the market store now holds resolved are scored by
   `scoring.score_rows`, as a hindcast's are (a forecast whose t0 is not strictly before
   the effective resolution is counted apart, never scored). For each such market, the
   sweep's forecasters are replayed once at the same instants (`at = [the live t0s]`,
   hence the same lifetime fractions) by an ordinary `api.sweep`: the matched hindcast.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from hindcast import api, archive, markets, replay, runs, scoring
from hindcast.errors import ScheduleError, StoppedError
from hindcast.records import RunIdentity
from hindcast.replay import Cutoff, Task
from hindcast.schedule import livelog, logs
from hindcast.schedule.config import LiveConfig, ScheduleConfig
from hindcast.schedule.live_repair import cross_check, recover, sha
from hindcast.schedule.state import State
from hindcast.timeutil import iso, parse_utc

HEAD = "live:head"
HINDCAST = "live:hindcast:"  # + market id → the matched hindcast's run id
LABEL = "live"


def run_id(sweep: str) -> str:
    return f"live-{sweep}"


def head_of(state: State) -> livelog.Head:
    recorded = state.get(HEAD)
    return livelog.Head(recorded["seq"], recorded["sha256"]) if recorded else livelog.EMPTY


def checked_head(cfg: LiveConfig, state: State) -> livelog.Head:
    """The recorded head, once the log verifies up to it (else ScheduleError naming the record)."""
    verified = livelog.verify(cfg.log, head_of(state))
    if not verified.ok:
        number, why = verified.bad or (0, "")
        raise ScheduleError(
            f"live log {cfg.log}: record {number}: {why}; nothing is appended to a log that "
            "fails verification (hindcast live verify)"
        )
    return verified.head


def repair(log, state: State, store) -> list[str]:
    """Settle what a crashed tick left (`live_repair.recover`); what was done, also logged."""
    adopted, done = recover(log, head_of(state), store)
    if adopted is not None:
        state.set(HEAD, adopted.as_dict())
    for line in done:
        logs.event("live.recovered", detail=line)
    return done


def repair_config(config: ScheduleConfig) -> list[str]:
    """`repair` on the service config's live log and run database (`hindcast live repair`)."""
    if config.live is None:
        raise ScheduleError("the service config has no [live] table: there is no live log")
    store = runs.RunStore(config.db_url)
    try:
        return repair(config.live.log, State(store.engine), store)
    finally:
        store.close()


# -- the job ------------------------------------------------------------------------------------
def run_live(ctx, snapshot_for) -> dict:
    """The `live` job (ctx: a schedule.jobs.JobContext; `snapshot_for(archive)`: the snapshot
    the service indexed last, `jobs.indexed_snapshot`)."""
    cfg, config = ctx.config.live, ctx.config
    spec = config.sweep(cfg.sweep).spec
    repair(cfg.log, ctx.state, ctx.store)
    head = checked_head(cfg, ctx.state)
    rid = ensure_run(ctx.store, cfg, spec, ctx.now)
    job = config.markets
    listing = markets.list_open(
        ctx.now,
        lambda found: chosen(found, spec, ctx.now, cfg.max_markets),
        gamma_url=job.gamma_url,
        clob_url=job.clob_url,
        data_url=job.data_url,
        attempts=job.attempts,
        timeout=job.timeout,
        user_agent="hindcast-live",
    )
    bundle = newest_bundle(spec.store)
    due = due_pairs(ctx.store, rid, spec.forecasters, listing.markets, ctx.now, cfg.every)
    stopped = None
    try:
        made = forecast_now(ctx, cfg, rid, spec, due, bundle, head, snapshot_for)
    except StoppedError as exc:  # outages: what was answered is logged and stored
        made, stopped = -1, str(exc)
    resolved = resolved_markets(ctx.store, rid, bundle)
    hindcasts = matched_hindcasts(ctx, spec, resolved, snapshot_for)
    detail = {
        "open": listing.listed,
        "selected": len(listing.markets),
        "skipped": dict(list(listing.skipped.items())[:20]),
        "due": len(due),
        "forecasts": made,
        "resolved_markets": len(resolved),
        "hindcasts": hindcasts,
        "head": head_of(ctx.state).as_dict(),
        "changed": made != 0 or bool(hindcasts),
    }
    if stopped:
        raise StoppedError(f"live: {stopped}")
    return detail


def ensure_run(store, cfg: LiveConfig, spec, now: datetime) -> str:
    """The live run of the sweep in the run store (created at its first tick)."""
    rid = run_id(cfg.sweep)
    identity = runs.identity_of(
        {
            "kind": "live",
            "sweep": cfg.sweep,
            "forecasters": list(spec.forecasters),
            "store_version": "live (each forecast: the log's store_version)",
            "snapshot": "live (each forecast: the log's snapshot)",
        }
    )
    built = runs.manifest.build(identity, spec.store, {}, spec.archive, replay.scoring_policies())
    store.ensure_run(rid, identity, built, now)
    return rid


def newest_bundle(store_root):
    from pathlib import Path

    return (
        markets.open_version(store_root).bundle if (Path(store_root) / "LATEST").exists() else None
    )


def chosen(found: list, spec, now: datetime, most: int) -> list:
    """The open markets the sweep's filters select, at most `most` of them: the largest by
    volume (then by id)."""
    kept = [m for m in found if selected(m, spec, now)]
    return sorted(kept, key=lambda m: (-(m.volume or 0.0), m.id))[:most]


def selected(market, spec, now: datetime) -> bool:
    """The sweep's market filters that apply to an open market (ids, topics, min_volume)."""
    return (
        (not spec.ids or market.id in spec.ids)
        and (not spec.topics or market.topic in spec.topics)
        and (spec.min_volume is None or (market.volume or 0.0) >= spec.min_volume)
        and (market.opened_at is None or market.opened_at < now)
    )


def due_pairs(store, rid: str, forecasters, markets, now: datetime, every) -> list[tuple]:
    """(forecaster, open market) pairs with no live forecast younger than `every`."""
    newest: dict[tuple[str, str], datetime] = {}
    for s in store.forecasts(rid):
        key = (s.forecaster, s.market_id)
        newest[key] = max(newest.get(key, s.t0), s.t0)
    return [
        (name, m)
        for m in markets
        for name in forecasters
        if (last := newest.get((name, m.market.id))) is None or now - last >= every
    ]


# -- asking -------------------------------------------------------------------------------------
def forecast_now(ctx, cfg: LiveConfig, rid: str, spec, due, bundle, head, snapshot_for) -> int:
    """Ask every due pair at t0 = now through the hindcast's Sweep (a plan of live cutoffs); log,
    then store, each."""
    if not due:
        return 0

    by_id = {m.market.id: m for _, m in due}
    snapshot, index = open_archive(spec, snapshot_for)
    sources = {
        "snapshot": snapshot.id if snapshot is not None else None,
        "store_version": bundle_version(spec.store) if bundle is not None else None,
    }
    writer = Writer(cfg, ctx.state, rid, head, sources, by_id)
    plan = live_plan(rid, spec, due, bundle, (snapshot, index), ctx.now)
    sweep = replay.Sweep(
        plan, ctx.store, ctx.models, live_limits(spec), replay.Unclaimed(ctx.now), writer
    )
    sweep.forecasters(spec.forecasters)
    tasks = [Task(name, Cutoff(m.market.id, ctx.now, LABEL)) for name, m in due]

    async def ask() -> None:
        try:
            await sweep.run(tasks, ctx.advance)
        finally:
            await sweep.aclose()
            await ctx.models.aclose()

    try:
        asyncio.run(ask())
    finally:
        plan.close()  # the index's scan threads, and its Ray shards when the sweep has `ray`
    return writer.made


def live_plan(rid: str, spec, due, bundle, snapshot_index: tuple, now: datetime):
    """The plan of one tick: the due open markets as listed now (their prices so far), the
    resolutions of the newest market store, the archive at its newest indexed snapshot, one
    cutoff per market at t0 = now."""
    listed = {m.market.id: m for _, m in due}
    stored = bundle.markets if bundle is not None else ()
    by_id = {m.id: m for m in stored} | {i: m.market for i, m in listed.items()}
    resolutions = bundle.resolutions if bundle is not None else ()
    snapshot, index = snapshot_index
    identity = RunIdentity(
        store_version=bundle_version(spec.store) if bundle is not None else "",
        snapshot=snapshot.id if snapshot is not None else None,
        markets=tuple(sorted(listed)),
        forecasters=tuple(spec.forecasters),
        subsets=(),
        fractions=(),
        offsets=(),
        instants=(iso(now),),
        hindcast_rule=False,
        repeats=1,
        seed=spec.seed,
    )
    return replay.Plan(
        rid,
        identity,
        markets.MarketBundle(
            tuple(by_id.values()),
            tuple(r for r in resolutions if r.market_id in by_id),
            {i: tuple(m.history) for i, m in listed.items()},
        ),
        sorted(listed),
        [Cutoff(i, now, LABEL) for i in sorted(listed)],
        snapshot,
        index,
        Path(spec.store),
        archive.fanout.searched_on(index, spec.ray),  # the sweep's [archive] ray: on the cluster
    )


def live_limits(spec):
    return replay.Limits(concurrency=spec.concurrency, breaker_threshold=spec.breaker_threshold)


class Writer:
    """The live sweep's journal: each forecast is appended to the log before it is stored, and
    the new head recorded after (the Sweep calls it one forecast at a time)."""

    def __init__(
        self, cfg: LiveConfig, state: State, rid: str, head, sources: dict, markets
    ) -> None:
        self.cfg, self.state, self.rid, self.markets = cfg, state, rid, markets
        self.head, self.sources, self.made = head, sources, 0

    @contextmanager
    def entry(self, task, question, forecast) -> Iterator[None]:
        m = self.markets[task.cutoff.market_id]
        body = record_body(self.rid, task.forecaster, m, question, forecast) | self.sources
        _, head = livelog.append(self.cfg.log, self.head, body)
        yield
        self.state.set(HEAD, head.as_dict())
        self.head, self.made = head, self.made + 1

    def outage(self, task) -> None:
        logs.event("live.outage", forecaster=task.forecaster, market=task.cutoff.market_id)


def record_body(rid: str, forecaster: str, m, question, forecast) -> dict:
    """What the log keeps of one live forecast: enough to check the stored one against."""
    seen = [p for p in m.history if p.t < question.t0]
    return {
        "kind": "forecast",
        "run_id": rid,
        "forecaster": forecaster,
        "market_id": m.market.id,
        "t0": iso(question.t0),
        "probability": forecast.probability,
        "error": forecast.error,
        "rationale_sha256": sha(forecast.rationale),
        "evidence": list(forecast.evidence),
        "question_sha256": sha(question.question + "\n" + question.description),
        "prices_seen": len(seen),
        "last_price": [iso(seen[-1].t), seen[-1].p] if seen else None,
    }


def open_archive(spec, snapshot_for):
    """The sweep's archive at the newest snapshot the service indexed (None, None: no archive)."""
    if spec.archive is None:
        return None, None

    sid = snapshot_for(spec.archive)
    if sid is None:
        return None, None
    snapshot = archive.open_snapshot(spec.archive, sid)
    return snapshot, archive.open_index(snapshot)


def bundle_version(store_root) -> str:
    return markets.open_version(store_root).id


# -- scoring and the matched hindcasts ------------------------------------------------------------
def resolved_markets(store, rid: str, bundle) -> dict[str, list[datetime]]:
    """Market id → the live t0s (sorted) of its forecasts, for every market the store holds
    resolved Yes/No with each t0 strictly before the effective resolution."""
    if bundle is None:
        return {}
    resolutions = {r.market_id: r for r in bundle.resolutions if r.outcome is not None}
    found: dict[str, set[datetime]] = {}
    for s in store.forecasts(rid):
        r = resolutions.get(s.market_id)
        if r is not None and s.t0 < r.resolved_at:
            found.setdefault(s.market_id, set()).add(s.t0)
    return {m: sorted(t0s) for m, t0s in sorted(found.items())}


def live_scores(store, rid: str, bundle, models=None) -> tuple[list, int]:
    """The live run's scored rows (`scoring.score_rows`, regimes labelled as a hindcast's), and
    how many forecasts of resolved markets were made at or after their effective resolution
    (counted, never scored)."""
    if bundle is None:
        return [], 0
    resolutions = {r.market_id: r for r in bundle.resolutions}
    stored = [s for s in store.forecasts(rid) if s.market_id in resolutions]
    late = [s for s in stored if s.t0 >= resolutions[s.market_id].resolved_at]
    cutoffs = scoring.load_cutoffs(models)

    def label(s) -> str:
        resolved = resolutions[s.market_id].resolved_at
        return scoring.regimes.regime(scoring.model_of(s.forecaster, None), s.t0, resolved, cutoffs)

    rows = scoring.score_rows(
        [s for s in stored if s not in late],
        {m.id: m for m in bundle.markets},
        resolutions,
        bundle.prices,
        label,
        None,
        markets.venues.venues(bundle),
    )
    return rows, len(late)


def matched_hindcasts(ctx, spec, resolved: dict, snapshot_for) -> list[dict]:
    """For each newly resolved market, the sweep's forecasters replayed at its live t0s."""

    done = []
    for market, t0s in resolved.items():
        key = HINDCAST + market
        recorded = ctx.state.get(key)
        if recorded and recorded.get("t0s") == [iso(t) for t in t0s]:
            continue
        hindcast = replace(
            spec,
            ids=(market,),
            fractions=(),
            offsets=(),
            hindcast_rule=False,
            at=tuple(t0s),
            version=bundle_version(spec.store),
            snapshot=snapshot_for(spec.archive) if spec.archive else None,
        )
        result = api.sweep(
            hindcast,
            runs=ctx.store,
            out=ctx.config.runs_out,
            now=ctx.now,
            advance=ctx.advance,
            models=ctx.models,
        )
        ctx.state.set(key, {"run_id": result.run_id, "t0s": [iso(t) for t in t0s]})
        done.append({"market": market, "run_id": result.run_id, "instants": len(t0s)})
    return done


def hindcast_runs(state: State) -> dict[str, dict]:
    """Market id → its matched hindcast ({run_id, t0s})."""
    return {k.removeprefix(HINDCAST): v for k, v in state.values(HINDCAST).items()}


def t0s_of(recorded: dict) -> list[datetime]:
    return [parse_utc(t) for t in recorded["t0s"]]


# -- verification ----------------------------------------------------------------------------------
def verify(log, config: ScheduleConfig | None = None) -> livelog.Verified:
    """The log's chain; with the service config also its recorded head (nothing cut off) and
    every forecast record against the run store's stored forecast (nothing edited there)."""
    if config is None:
        return livelog.verify(log)

    store = runs.RunStore(config.db_url, read_only=True)
    verified = livelog.verify(log, head_of(State(store.engine, create=False)))
    if not verified.ok:
        return verified
    bad = cross_check(verified.records, store)
    return replace(verified, bad=bad) if bad else verified
