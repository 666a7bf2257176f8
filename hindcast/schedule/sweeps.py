"""Configured sweeps, run incrementally: only (forecaster, market) pairs not swept yet.

`api.sweep`'s run id is a hash of its frozen inputs (store version, market ids, snapshot,
schedule), so a sweep over a newer store version is a new run. A configured sweep is
therefore a *series* of batch runs under its stable name: each tick plans the pairs of the
sweep's selected markets (in the newest store version) that no closed batch of the series
covered (so whose rows are not in the run store), groups them into batches (forecasters with the
same missing markets together), and runs each batch as an ordinary `api.sweep` restricted to those
markets and pinned to that store version and snapshot. A batch is recorded (pending, with its full
spec) before it runs and closed after, so a killed batch is resumed under the same run id —
`api.sweep` then makes only its missing forecasts — and its markets are never planned twice.

The cutoff schedule (fractions, offsets, instants, Hindcast rule, repeats, seed) is fixed
for a sweep name: rows made under another schedule would not be comparable, so a changed
schedule is refused (name the changed sweep anew). Filters and forecasters may change: a
forecaster added later is run on every market the series already covers.

With `retry_failed` in the sweep's spec, each tick also re-runs every closed batch whose
run still has a forecast failure never retried (under the same run id, asking again only
for those, once each — a failure that fails again is not asked a third time by the
service; the old attempts are kept). Budgets (`max_cost`, `max_tokens`) are per batch run; a batch
stopped by a budget or a circuit breaker stays pending and is resumed at the next tick.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, replace
from datetime import datetime
from pathlib import Path

from hindcast import api, leaderboard, markets, replay, runs
from hindcast.errors import ScheduleError
from hindcast.replay import ReplaySpec
from hindcast.schedule.config import SweepConfig
from hindcast.schedule.state import Batch, State
from hindcast.timeutil import iso, parse_utc

SERVICE_RETRIES = (
    1  # the service asks again for a stored failure once (the CLI: each --retry-failed)
)
SCHEDULE_FIELDS = ("fractions", "offsets", "instants", "hindcast_rule", "repeats", "seed")


def run_series(
    cfg: SweepConfig,
    state: State,
    store,
    out_dir: Path,
    now: datetime,
    snapshot_for: Callable[[Path], str | None],
    advance: Callable[[], None],
    models=None,
) -> dict:
    """Resume pending batches of the sweep, then plan and run the new ones; a summary."""
    check_schedule(cfg, state)
    results = [
        run_batch(b, state, store, out_dir, now, advance, models)
        for b in state.batches(cfg.name, "pending")
    ]
    for spec in plan_batches(cfg, state, snapshot_for):
        batch = state.open_batch(cfg.name, spec_json(spec), now)
        results.append(run_batch(batch, state, store, out_dir, now, advance, models))
    if cfg.spec.retry_failed:
        results += [
            retry_batch(b, store, out_dir, now, advance, models)
            for b in state.batches(cfg.name, "done")
            if store.retry_attempts(b.run_id, SERVICE_RETRIES)
        ]
    return {
        "sweep": cfg.name,
        "batches": results,
        "markets": sum(r["markets"] for r in results),
        "forecasts": sum(r["executed"] for r in results),
    }


def run_batch(
    batch: Batch, state: State, store, out_dir: Path, now: datetime, advance, models=None
) -> dict:

    result = api.sweep(
        spec_of(batch.spec), runs=store, out=out_dir, now=now, advance=advance, models=models
    )
    state.close_batch(batch.id, result.run_id, now)
    return {
        "batch": batch.id,
        "run_id": result.run_id,
        "markets": result.markets,
        "executed": result.executed,
        "resumed": result.resumed,
    }


def retry_batch(batch: Batch, store, out_dir: Path, now: datetime, advance, models=None) -> dict:
    """Ask again for the stored forecast failures of a closed batch (same run, new attempts)."""

    spec = replace(spec_of(batch.spec), retry_failed=True)
    result = api.sweep(
        spec,
        runs=store,
        out=out_dir,
        now=now,
        advance=advance,
        models=models,
        retry_limit=SERVICE_RETRIES,
    )
    return {
        "batch": batch.id,
        "run_id": result.run_id,
        "markets": 0,
        "executed": result.executed,
        "resumed": True,
        "retried": True,
    }


def plan_batches(cfg: SweepConfig, state: State, snapshot_for) -> list[ReplaySpec]:
    """The spec of each batch to run now: the sweep's spec restricted to a group of
    forecasters and their missing markets, pinned to the newest store version and snapshot."""
    if not (Path(cfg.spec.store) / "LATEST").exists():
        return []  # nothing pulled or imported yet
    version = markets.open_version(cfg.spec.store)
    selected = selected_markets(version.bundle, cfg.spec)
    done = done_pairs(cfg.name, state)
    groups: dict[tuple[str, ...], list[str]] = {}
    for name in cfg.spec.forecasters:
        missing = tuple(m for m in selected if (name, m) not in done)
        if missing:
            groups.setdefault(missing, []).append(name)
    snapshot = snapshot_for(cfg.spec.archive) if cfg.spec.archive else None
    return [
        replace(cfg.spec, version=version.id, ids=ids, forecasters=tuple(names), snapshot=snapshot)
        for ids, names in groups.items()
    ]


def selected_markets(bundle, spec: ReplaySpec) -> list[str]:
    """The spec's markets in this store version; its `ids`, if any, are a filter here (a
    market not pulled yet is simply not selected yet)."""
    if not spec.ids:
        return replay.select_markets(bundle, spec)
    present = {m.id for m in bundle.markets}
    ids = tuple(i for i in spec.ids if i in present)
    return replay.select_markets(bundle, replace(spec, ids=ids)) if ids else []


def done_pairs(sweep: str, state: State) -> set[tuple[str, str]]:
    """(forecaster, market) pairs of the sweep's closed batches. A batch is closed only after
    `api.sweep` returned, i.e. with every row of its plan stored (forecast or failure); a
    pair for which the cutoff rules gave no t0 is done too, rather than planned again."""
    return {
        (f, m)
        for b in state.batches(sweep, "done")
        for f in b.spec["forecasters"]
        for m in b.spec["market_ids"]
    }


def check_schedule(cfg: SweepConfig, state: State) -> None:
    key, schedule = f"sweep:{cfg.name}:schedule", _schedule(cfg.spec)
    recorded = state.get(key)
    if recorded is None:
        state.set(key, schedule)
    elif recorded != schedule:
        changed = ", ".join(
            f"{k} {recorded[k]} → {schedule[k]}"
            for k in SCHEDULE_FIELDS
            if recorded[k] != schedule[k]
        )
        raise ScheduleError(
            f"sweep {cfg.name!r}: its cutoff schedule changed since its first batch ({changed}); "
            "its stored forecasts follow the old one — give the changed sweep a new name"
        )


def _schedule(spec: ReplaySpec) -> dict:
    data = spec_json(spec)
    return {k: data[k] for k in SCHEDULE_FIELDS}


# -- the series' merged scores -------------------------------------------------------------------
def series_scores(sweep: str, state: State, store):
    """Every scored row of the sweep's closed batches as one `replay.RunScores` named after the
    sweep (None before its first batch); each run is scored against its own store version."""
    batches = state.batches(sweep, "done")
    if not batches:
        return None
    scored = [replay.load_scored(store, b.run_id) for b in batches]
    rows = sorted((row for run in scored for row in run.rows), key=leaderboard.canonical)
    forecasters = {name: f for run in scored for name, f in run.manifest.forecasters.items()}
    manifest = replace(  # the provenance of the newest batch
        scored[-1].manifest,
        identity=runs.identity_of({}),
        forecasters=forecasters,
        extra={"sweep": sweep, "runs": [b.run_id for b in batches]},
    )
    return replay.RunScores(sweep, manifest, rows)


# -- a spec as JSON (batches record theirs whole) -------------------------------------------------
_PATHS, _INSTANTS = {"markets", "archive"}, {"resolved_after", "resolved_before"}
# recorded batches keep the spec's former field names (stored state reads back unchanged)
_STORED = {"store": "markets", "version": "store_version", "ids": "market_ids", "at": "instants"}
_FIELD = {stored: name for name, stored in _STORED.items()}


def spec_json(spec: ReplaySpec) -> dict:
    out = {}
    for f in fields(ReplaySpec):
        value, key = getattr(spec, f.name), _STORED.get(f.name, f.name)
        if key in _PATHS:
            value = None if value is None else str(value)
        elif key in _INSTANTS:
            value = None if value is None else iso(value)
        elif key == "instants":
            value = [iso(t) for t in value]
        elif isinstance(value, tuple):
            value = [list(v) if isinstance(v, tuple) else v for v in value]
        out[key] = value
    return out


def spec_of(data: dict) -> ReplaySpec:
    values = {
        k: tuple(tuple(v) if isinstance(v, list) else v for v in x) if isinstance(x, list) else x
        for k, x in data.items()
    }
    for name in _PATHS:
        values[name] = None if values[name] is None else Path(values[name])
    for name in _INSTANTS:
        values[name] = None if values[name] is None else parse_utc(values[name])
    values["instants"] = tuple(parse_utc(t) for t in values["instants"])
    return ReplaySpec(**{_FIELD.get(k, k): v for k, v in values.items()})
