"""The library facade: what the CLI, the scheduler and users call. Time is passed in."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from hindcast.errors import HindcastError
from hindcast.forecasters import registry
from hindcast.forecasters.base import Context
from hindcast.leaderboard import export
from hindcast.markets.bundle import MarketBundle
from hindcast.markets.store import open_version
from hindcast.records import Market, Question
from hindcast.replay import cutoffs as cutoff_rules
from hindcast.replay.runner import Task, plan, run_tasks
from hindcast.replay.spec import ReplaySpec, run_id, run_identity
from hindcast.runs import manifest
from hindcast.runs.store import RunStore
from hindcast.scoring.aggregate import LeaderboardRow, leaderboard, score_rows


@dataclass(frozen=True)
class SweepResult:
    run_id: str
    resumed: bool
    planned: int
    executed: int
    markets: int
    board: list[LeaderboardRow]
    paths: dict[str, Path]


def sweep(spec: ReplaySpec, *, store: RunStore, out_dir: Path, now: datetime,
          on_plan: Callable[[int], None] = lambda n: None, advance: Callable[[], None] = lambda: None) -> SweepResult:
    """Forecast every missing (forecaster, market, t0) of the spec, then score and export."""
    forecasters = {name: registry.create(name) for name in spec.forecasters}
    version = open_version(spec.markets, spec.store_version)
    bundle = version.bundle
    markets = select_markets(bundle, spec)
    cutoffs = plan_cutoffs(bundle, markets, spec)
    identity = run_identity(spec, version.id, markets)
    rid = run_id(identity)
    created = store.ensure_run(rid, identity, manifest.build(identity, version.path), now)
    tasks = plan(spec.forecasters, cutoffs, store.done_keys(rid))
    on_plan(len(tasks))
    _execute(tasks, forecasters, spec, bundle, store, rid, advance)
    board = score_run(store, rid, bundle)
    paths = export.write_all(board, Path(out_dir) / rid, f"hindcast leaderboard — run {rid}", _notes(version.id, markets, cutoffs))
    return SweepResult(rid, not created, len(cutoffs) * len(spec.forecasters), len(tasks), len(markets), board, paths)


def select_markets(bundle: MarketBundle, spec: ReplaySpec) -> list[str]:
    """Markets of the spec with a Yes/No outcome, sorted by id; unknown ids are an error."""
    scorable = {r.market_id for r in bundle.resolutions if r.outcome is not None}
    known = {m.id for m in bundle.markets}
    missing = [m for m in spec.market_ids if m not in known]
    if missing:
        raise HindcastError(f"market(s) not in store {spec.markets}: {', '.join(missing)}")
    chosen = sorted(set(spec.market_ids) if spec.market_ids else scorable)
    chosen = [m for m in chosen if m in scorable]
    return chosen[: spec.limit] if spec.limit else chosen


def plan_cutoffs(bundle: MarketBundle, market_ids: list[str], spec: ReplaySpec) -> list[cutoff_rules.Cutoff]:
    markets = {m.id: m for m in bundle.markets}
    resolutions = {r.market_id: r for r in bundle.resolutions}
    lives = [cutoff_rules.lifetime(markets[i], resolutions[i], bundle.prices.get(i, ())) for i in market_ids]
    return cutoff_rules.schedule(lives, spec.fractions, spec.instants)


def score_run(store: RunStore, rid: str, bundle: MarketBundle) -> list[LeaderboardRow]:
    """Re-score a stored run from its forecasts alone: no forecaster is called."""
    resolutions = {r.market_id: r for r in bundle.resolutions}
    return leaderboard(score_rows(store.forecasts(rid), resolutions, bundle.prices))


def question_at(market: Market, cutoff: cutoff_rules.Cutoff) -> Question:
    """The market as it stood at the cutoff: its text and t0, nothing about the outcome."""
    return Question(market.id, market.question, market.description, cutoff.t0, market.url, market.topic,
                    market.scheduled_close)


def _execute(tasks: list[Task], forecasters: dict, spec: ReplaySpec, bundle: MarketBundle, store: RunStore,
             rid: str, advance) -> None:
    markets = {m.id: m for m in bundle.markets}

    def question_for(c):
        return question_at(markets[c.market_id], c)

    def context_for(c):
        return Context(c.t0, c.market_id, bundle.prices.get(c.market_id, ()), bundle.resolutions)

    def sink(task: Task, forecast) -> None:
        store.add(rid, task.forecaster, task.cutoff.market_id, task.cutoff.t0, task.cutoff.label, forecast)

    asyncio.run(run_tasks(tasks, forecasters, question_for, context_for, sink, spec.concurrency, advance))


def _notes(version_id: str, markets: list[str], cutoffs: list) -> list[str]:
    return [
        f"market store version {version_id}; {len(markets)} markets; {len(cutoffs)} (market, t0) cutoffs",
        "Brier: mean squared error of the YES probability (lower is better); market Brier: the market's last "
        "price strictly before the same t0, on the rows where it had one; skill = 1 − Brier/market Brier.",
        "Failures are counted, never imputed.",
    ]
