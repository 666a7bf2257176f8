"""Scoring a stored run from its forecasts alone (no model is called): `load_scored` against the
market store version the run recorded, the leaderboard of it, and the snapshots it recorded."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hindcast import archive as archives
from hindcast import scoring
from hindcast.errors import RunStoreError
from hindcast.markets import MarketBundle, open_version
from hindcast.markets import venues as venue_registry
from hindcast.records import RunManifest
from hindcast.replay import coverage
from hindcast.runs import RunStore, manifest_of, stored_forecasts
from hindcast.scoring import (
    POLICIES,
    LeaderboardRow,
    PriceTable,
    ScoredRow,
    leaderboard,
    regimes,
    score_rows,
)

if TYPE_CHECKING:
    import polars as pl

    from hindcast.runs import StoredForecast


def board_json(board: Sequence[LeaderboardRow]) -> list[dict]:
    """Leaderboard rows as JSON-ready dicts (every column; a non-finite number is null)."""
    import math

    def plain(value: object) -> object:
        return None if isinstance(value, float) and not math.isfinite(value) else value

    return [{k: plain(v) for k, v in dataclasses.asdict(row).items()} for row in board]


def board_frame(board: Sequence[LeaderboardRow]) -> pl.DataFrame:
    """Leaderboard rows as a polars DataFrame (polars imported only here)."""
    import polars as pl

    columns = [f.name for f in dataclasses.fields(LeaderboardRow)]
    return (
        pl.DataFrame(
            [dataclasses.asdict(r) for r in board], schema=columns, infer_schema_length=None
        )
        if board
        else pl.DataFrame(schema=columns)
    )


def scoring_policies() -> dict:
    """The scoring policies in force: what a run scored now is scored under (and a new run's
    manifest records)."""
    return {**POLICIES, **coverage.POLICY}


@dataclass(frozen=True)
class RunScores:
    """A stored run, scored: its manifest (as recorded when the run was created), one ScoredRow
    per stored forecast, and the scoring policies that scored them (a run re-scored by a later
    release may have been created under other ones)."""

    run_id: str
    manifest: RunManifest
    rows: list[ScoredRow]
    policies: dict = dataclasses.field(default_factory=scoring_policies)

    def to_polars(self) -> pl.DataFrame:
        """One row per stored forecast (newest attempt): the scored row's columns, its usage
        figures (tokens, requests, cache hits, retries, latency, model name) in place of
        `usage`; polars imported only here."""
        import polars as pl

        fields = [f.name for f in dataclasses.fields(ScoredRow) if f.name != "usage"]
        rows = [
            {**{k: getattr(r, k) for k in fields}, **scoring.figures(r.usage)} for r in self.rows
        ]
        if not rows:
            return pl.DataFrame(schema=fields + list(scoring.figures({})))
        return pl.DataFrame(rows, infer_schema_length=None)


def empty_forecasters(rows: Sequence[ScoredRow]) -> tuple[str, ...]:
    """Forecasters with stored rows of which none is a valid probability."""
    valid: dict[str, bool] = {}
    for row in rows:
        valid[row.forecaster] = valid.get(row.forecaster, False) or row.probability is not None
    return tuple(sorted(name for name, ok in valid.items() if not ok))


def recorded_bundle(store: RunStore, rid: str) -> MarketBundle:
    """The market store version a stored run recorded (from its manifest)."""
    return _bundle_of(manifest_of(json.loads(store.run(rid).manifest_json)), rid)


def _bundle_of(run_manifest: RunManifest, rid: str) -> MarketBundle:
    recorded = run_manifest.market_store
    if recorded is None:
        raise RunStoreError(
            f"run {rid} records no market store (its manifest has no market_store root and "
            "version), so its forecasts cannot be scored: re-run the sweep with this hindcast"
        )
    return open_version(Path(recorded.root), recorded.version).bundle


def recorded_snapshots(scored: Sequence, archive: Path | None) -> list:
    """The archive snapshots the runs recorded, opened (and verified) from `archive`, else from
    the folder each run recorded; a recorded folder that no longer holds the snapshot is
    skipped (its documents are then listed by id), a folder given explicitly must hold it."""
    manifests = [s.manifest for s in scored]
    if archive is not None:
        ids = sorted({i for m in manifests if (i := m.identity.snapshot) is not None})
        return [archives.open_snapshot(Path(archive), sid) for sid in ids]
    recorded = sorted({(a.root, str(a.snapshot)) for m in manifests if (a := m.archive)})
    return [
        archives.open_snapshot(Path(root), sid)
        for root, sid in recorded
        if archives.snapshot_dir(Path(root), sid).is_dir()
    ]


def load_scored(
    run_store: RunStore,
    rid: str,
    bundle: MarketBundle | None = None,
    model_cutoffs: Path | None = None,
) -> RunScores:
    """Score a stored run from its forecasts alone (no forecaster is called), against the
    market store version the run recorded; label regimes (the model cutoff registry,
    `model_cutoffs` overriding the shipped one) and
    coverage strata."""
    run_manifest = manifest_of(json.loads(run_store.run(rid).manifest_json))
    bundle = bundle if bundle is not None else _bundle_of(run_manifest, rid)
    resolutions = {r.market_id: r for r in bundle.resolutions}
    markets = {m.id: m for m in bundle.markets}
    label = _regime_labeler(
        run_manifest.forecasters, resolutions, regimes.load_cutoffs(model_cutoffs)
    )
    rows = score_rows(
        stored_forecasts(run_store, rid),
        markets,
        resolutions,
        bundle.prices,
        label,
        run_store.coverage(rid),
        venue_registry.venues(bundle),
    )
    return RunScores(rid, run_manifest, rows, scoring_policies())


def score_run(
    run_store: RunStore,
    rid: str,
    bundle: MarketBundle | None = None,
    by: str | None = None,
    model_cutoffs: Path | None = None,
    prices: PriceTable | None = None,
) -> list[LeaderboardRow]:
    scores = load_scored(run_store, rid, bundle, model_cutoffs)
    return leaderboard_of(scores, by=by, prices=prices)


def leaderboard_of(
    scores: RunScores, by: str | None = None, prices: PriceTable | None = None
) -> list[LeaderboardRow]:
    """The leaderboard of a scored run (costs from `prices`; None: the shipped table)."""
    return leaderboard(scores.rows, by=by, prices=prices)


def _regime_labeler(provenance: Mapping, resolutions: dict, cutoffs: dict) -> Callable:
    def label(stored: StoredForecast) -> str:
        model = regimes.model_of(stored.forecaster, provenance.get(stored.forecaster))
        return regimes.regime(model, stored.t0, resolutions[stored.market_id].resolved_at, cutoffs)

    return label
