"""The rows a leaderboard is computed from: one run as it is, several runs on their matched rows.

Several runs are compared only on the (market, t0) keys that every forecaster of every run
has a stored row for (a forecast or a counted failure), so no forecaster is scored on rows
another never saw. A forecaster name that occurs in more than one run is qualified as
`name@run_id`. Rows are put in one canonical order (forecaster, market, t0, repeat), the order of
every export, so a per-forecast table recomputes the leaderboard's means to the bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from hindcast.errors import LeaderboardError
from hindcast.scoring import usage
from hindcast.timeutil import iso


@dataclass(frozen=True)
class RunMatch:
    """How many (market, t0) keys a run had and how many of them every run shares."""

    run_id: str
    keys: int
    matched: int


@dataclass(frozen=True)
class Combined:
    """The rows to score (canonical order), with what matching kept of each run."""

    rows: list  # ScoredRow
    runs: list[RunMatch]
    matched_keys: int
    run_of: dict[str, str]  # forecaster label → run id

    def note(self) -> str:
        if len(self.runs) == 1:
            return (
                f"one run ({self.runs[0].run_id}): all {self.matched_keys} (market, t0) rows scored"
            )
        kept = "; ".join(f"{r.run_id}: {r.matched} of {r.keys}" for r in self.runs)
        return (
            f"{len(self.runs)} runs compared on their {self.matched_keys} matched (market, t0) "
            f"rows (rows every forecaster of every run has) — kept per run: {kept}"
        )


def combine(runs: Sequence) -> Combined:
    """The scored rows of one or more runs (`replay.RunScores`), matched when there are several."""
    if not runs:
        raise LeaderboardError("no run given")
    _check_distinct([r.run_id for r in runs])
    labelled = _labelled(runs)
    keys_by_run = {r.run_id: {_key(row) for row in r.rows} for r in runs}
    shared = _shared_keys(labelled) if len(runs) > 1 else set().union(*keys_by_run.values())
    rows = sorted((row for _, row in labelled if _key(row) in shared), key=canonical)
    if not rows:
        raise LeaderboardError(
            f"no scored rows to rank in run(s) {', '.join(keys_by_run)}"
            + (" once matched on (market, t0)" if len(runs) > 1 else "")
        )
    matches = [RunMatch(rid, len(keys), len(keys & shared)) for rid, keys in keys_by_run.items()]
    return Combined(rows, matches, len(shared), {row.forecaster: rid for rid, row in labelled})


def canonical(row) -> tuple:
    return row.forecaster, row.market_id, row.t0, row.repeat


def fraction_of(label: str) -> float | None:
    """0.25 for the cutoff label `f=0.25`; None for explicit instants (`at=…`)."""
    if not label.startswith("f="):
        return None
    try:
        return float(label[2:])
    except ValueError:
        return None


def forecast_record(row, run_id: str) -> dict:
    """One row of the per-forecast table: everything needed to recompute every score."""
    return {
        "run_id": run_id,
        "forecaster": row.forecaster,
        "market_id": row.market_id,
        "t0": iso(row.t0),
        "repeat": row.repeat,
        "label": row.label,
        "fraction": fraction_of(row.label),
        "topic": row.topic,
        "probability": row.probability,
        "error": row.error,
        "market_price": row.market_price,
        "outcome": row.outcome,
        "brier": row.brier,
        "market_brier": row.market_brier,
        "regime": row.regime,
        "coverage": row.coverage,
        **usage.figures(row.usage),
    }


def forecast_records(combined: Combined) -> list[dict]:
    return [forecast_record(row, combined.run_of[row.forecaster]) for row in combined.rows]


def _key(row) -> tuple:
    return row.market_id, row.t0


def _check_distinct(run_ids: list[str]) -> None:
    repeated = sorted({r for r in run_ids if run_ids.count(r) > 1})
    if repeated:
        raise LeaderboardError(f"run(s) given more than once: {', '.join(repeated)}")


def _labelled(runs: Sequence) -> list[tuple[str, object]]:
    """(run id, row) with forecaster names qualified by run where a name occurs in several runs."""
    owners: dict[str, set[str]] = {}
    for run in runs:
        for row in run.rows:
            owners.setdefault(row.forecaster, set()).add(run.run_id)
    return [
        (
            run.run_id,
            row
            if len(owners[row.forecaster]) == 1
            else replace(row, forecaster=f"{row.forecaster}@{run.run_id}"),
        )
        for run in runs
        for row in run.rows
    ]


def _shared_keys(labelled: list[tuple[str, object]]) -> set:
    per_forecaster: dict[str, set] = {}
    for _, row in labelled:
        per_forecaster.setdefault(row.forecaster, set()).add(_key(row))
    return set.intersection(*per_forecaster.values()) if per_forecaster else set()
