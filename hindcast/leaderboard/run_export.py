"""Exports of stored runs: the files a sweep writes into OUT/<run id>/, and `export_runs`,
the leaderboard of stored runs (scored again from their forecasts alone) in chosen formats."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hindcast import analysis as research
from hindcast import audit
from hindcast.leaderboard import analysis, export, findings, publish, report, viewer
from hindcast.leaderboard.tables import combine
from hindcast.replay import load_scored, recorded_bundle, recorded_snapshots


def write_run(out_dir: Path, plan, scores, board, prices, run_store=None) -> dict[str, Path]:
    """A sweep's exports: leaderboard tables and the HTML report in OUT/<run id>/.
    (`plan`: a replay.plan.Plan; `scores`: its replay.scored.RunScores; `board` its leaderboard;
    `run_store`: the RunStore the run is in, for the report's forecast viewer — without it the
    viewer shows the scored rows only, no rationale, raw answer or documents.)"""
    folder, title = Path(out_dir) / plan.run_id, f"hindcast leaderboard — run {plan.run_id}"
    notes = run_notes(plan.identity.store_version, plan.markets, plan.cutoffs)
    paths = export.write_all(board, folder, title, notes)
    questions = {m.id: m.question for m in plan.bundle.markets}
    stored = (
        viewer.from_store(run_store, [plan.run_id], [plan.snapshot] if plan.snapshot else [])
        if run_store
        else None
    )
    combined = combine([scores])  # the board is the sweep's: the page shows what the CSV has
    paths["html"] = report.write_html(
        folder,
        combined,
        board,
        title,
        runs=[scores],
        questions=questions,
        prices=prices,
        stored=stored,
        findings=findings.collect([scores], rows=combined.rows)
        + _plan_evidence(plan, scores, run_store),
        bundles=[plan.bundle],
    )
    return paths


def _plan_evidence(plan, scores, store) -> list:
    """The evidence strata of a sweep's cutoffs when `hindcast analyze` kept them (the sweep
    never computes them: its wall time stays as it was); else a note saying how."""
    if plan.index is None:
        return [audit.evidence.not_computed(audit.evidence.NO_INDEX)]
    labels = audit.evidence.plan_labels(plan, store.url if store is not None else None)
    if labels is None:
        return [audit.evidence.not_computed(audit.evidence.NOT_YET)]
    return [audit.evidence.finding(scores.rows, labels)]


def run_notes(version_id: str, markets: list[str], cutoffs: list) -> list[str]:
    return [
        f"market store version {version_id}; {len(markets)} markets; {len(cutoffs)} (market, "
        "t0) cutoffs",
        "Brier: mean squared error of the YES probability (lower is better); market Brier: the "
        "market's last price strictly before the same t0, on the rows where it had one; skill = "
        "1 − Brier/market Brier.",
        "95% intervals: bootstrap over markets (2,000 replicates, seed 0). Failures are "
        "counted, never imputed.",
    ]


def export_runs(
    store,
    runs: Sequence[str],
    out: Path,
    formats: Sequence[str] = export.FORMATS,
    *,
    title: str | None = None,
    by: str | None = None,
    baseline: str = analysis.MARKET_PRICE,
    tolerance: float = analysis.TOLERANCE,
    prices=None,
    archive: Path | None = None,
    recall: Path | str | None = None,
) -> publish.Published:
    """Score stored runs (no model is called; several: matched on (market, t0)) against the
    market store versions they recorded, and write the leaderboard, the per-forecast table
    and the report into `out`. `archive`: the archive folder holding the snapshots the runs
    recorded, so the report's viewer shows each document's source and instant (the run store
    keeps only the ids a forecast read). `recall`: memorisation-probe results (a file, or a
    PostgreSQL URL) whose recalled (model, market) pairs are left out before scoring
    (`--exclude-recalled`)."""
    formats = export.check_formats(formats)
    bundles = [recorded_bundle(store, rid) for rid in runs]
    scored = [load_scored(store, rid, bundle) for rid, bundle in zip(runs, bundles)]
    excluded: list[str] = []
    if recall is not None:
        scored, excluded = audit.exclude_recalled_runs(scored, recall)
    questions = {m.id: m.question for bundle in bundles for m in bundle.markets}
    stored = viewer.from_store(store, runs, recorded_snapshots(scored, archive))
    return publish.publish(
        scored,
        out,
        formats,
        title=title or default_title(runs),
        by=by,
        baseline=baseline,
        tolerance=tolerance,
        questions=questions,
        prices=prices,
        stored=stored,
        excluded=excluded,
        audits=_audits(store, runs, scored, bundles, archive) if "html" in formats else (),
    )


def analyze_runs(run_store, runs: Sequence[str], split=None, ray=None, **settings) -> list:
    """Stored runs' analyses as Findings (no model called): the leaderboard's findings with the
    resolution and evidence strata, then `hindcast.analysis`'s (settings are its)."""
    bundles = [recorded_bundle(run_store, rid) for rid in runs]
    scored = [load_scored(run_store, rid, bundle) for rid, bundle in zip(runs, bundles)]
    rows = combine(scored).rows
    found = findings.with_resolution(findings.collect(scored, split, rows), scored, rows, bundles)
    snapshots = recorded_snapshots(scored, None)
    strata = audit.evidence.runs_finding(run_store.url, scored, bundles, snapshots, rows, ray=ray)
    return [*found[:2], strata, *found[2:], *research.findings(rows, bundles, **settings)]


def _stored_audits(store, runs: Sequence[str], scored: Sequence) -> list:
    """The leak audits `hindcast audit` kept for these runs (marked stale if
    a run changed since)."""
    return audit.stored_findings(store.url, runs, {s.run_id: s.rows for s in scored})


def _audits(store, runs: Sequence[str], scored: Sequence, bundles: Sequence, archive) -> list:
    """What the report shows after the analyses (only the report: a CSV, Parquet or Markdown
    export waits for nothing but the rows): the kept leak audits and evidence strata."""
    return _stored_audits(store, runs, scored) + _run_evidence(store, scored, bundles, archive)


def _run_evidence(store, scored: Sequence, bundles: Sequence, archive: Path | None) -> list:
    """The evidence strata of stored runs as `hindcast analyze` kept them (nothing is computed
    for an export: a pair not kept yet makes the section say how to compute them)."""
    snapshots = recorded_snapshots(scored, archive)
    rows = combine(scored).rows
    return [
        audit.evidence.runs_finding(
            store.url, scored, bundles, snapshots, rows, keep=False, compute=False
        )
    ]


def default_title(runs: Sequence[str]) -> str:
    return f"hindcast leaderboard — run{'s' if len(runs) > 1 else ''} {', '.join(runs)}"
