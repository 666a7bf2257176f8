"""Everything the HTML report shows, computed once into one typed record (`ReportRecord`).

`build` opens what the runs recorded (their market store versions), scores the slices, computes
the figures' data (fraction curves and their intervals, reliability bins, CORP calibration and
the research figures, topic verdicts, scores across runs) and the forecast viewer's records. The
view (`report_view`) only renders this record: it opens nothing and computes nothing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hindcast import analysis as research
from hindcast import markets
from hindcast.errors import HindcastError
from hindcast.leaderboard import analysis, viewer
from hindcast.leaderboard.tables import Combined, fraction_of
from hindcast.runs import manifest_form
from hindcast.scoring import Finding, PriceTable, bootstrap, leaderboard, vs_market

LISTED_MARKETS = 100  # per side (recovered, regressed) in a topic block's market list, at most
LISTED_ITEMS = 100  # of a list in the manifest shown (a run's market ids), at most


@dataclass(frozen=True)
class RunFacts:
    """A run's inputs and provenance, as the report's first and last sections show them."""

    run_id: str
    created: str | None
    snapshot: str
    store_version: object
    store_root: object
    git_revision: str | None
    python: str
    policies: Mapping
    recorded_policies: Mapping  # as recorded when the run was created
    packages: Mapping
    manifest_json: str  # the full manifest, indented JSON


@dataclass(frozen=True)
class Fractions:
    """Brier by lifetime fraction: each forecaster's curve, the market's, and the intervals."""

    curves: Mapping[str, Sequence[analysis.CurvePoint]]
    market: Sequence[analysis.CurvePoint]
    intervals: Mapping[str, Sequence[tuple[float, float, float]]]  # (fraction, low, high)
    min_markets: int = vs_market.MIN_MARKETS  # no interval from fewer markets


@dataclass(frozen=True)
class Research:
    """hindcast.analysis's figures: CORP calibration per forecaster (its diagrams and its table),
    then the other findings."""

    corp: Sequence  # hindcast.analysis.corp results, one per forecaster
    corp_table: Finding
    findings: Sequence[Finding]


@dataclass(frozen=True)
class TopicBlock:
    """One forecaster against the baseline: topic nets, and the markets listed (all of them up
    to 2 × LISTED_MARKETS; beyond, the most recovered and most regressed)."""

    forecaster: str
    nets: Sequence[analysis.TopicNet]
    listed: Sequence[analysis.MarketVerdict]
    n_markets: int


@dataclass(frozen=True)
class OverTime:
    """Each forecaster's mean Brier (and failures) in each run, runs in creation order."""

    run_ids: Sequence[str]
    created: Mapping[str, str | None]
    names: Sequence[str]
    scores: Mapping[tuple[str, str], tuple[float | None, int]]  # (forecaster, run) → score


@dataclass(frozen=True)
class ReportRecord:
    title: str
    inputs: Sequence[RunFacts]
    matching_note: str
    board: Sequence  # scoring.LeaderboardRow
    fractions: Fractions | None  # None: no cutoff at a lifetime fraction
    reliability: Mapping[str, Sequence]  # forecaster → metrics.ReliabilityBin
    research: Research | str  # or why it was not computed
    baseline: str
    tolerance: float
    topics: Sequence[TopicBlock]
    questions: Mapping[str, str]  # market → question, for the listed markets
    regime_board: Sequence
    findings: Sequence  # scoring.Finding, one section each
    over_time: OverTime | None  # None: a single run
    forecasts: Sequence[dict]  # the viewer's records (viewer.records)
    with_details: bool  # whether the viewer's records carry what the run store kept


def build(
    title: str,
    combined: Combined,
    board: Sequence,
    *,
    runs: Sequence,
    baseline: str,
    tolerance: float,
    questions: Mapping[str, str],
    replicates: int,
    prices: PriceTable,
    stored: viewer.Stored,
    findings: Sequence = (),
    bundles: Sequence = (),
) -> ReportRecord:
    rows = combined.rows
    topics = topic_blocks(rows, baseline, tolerance)
    listed = {v.market_id for t in topics for v in t.listed}
    return ReportRecord(
        title=title,
        inputs=[run_facts(r, stored.created.get(r.run_id)) for r in runs],
        matching_note=combined.note(),
        board=list(board),
        fractions=fractions(rows, replicates),
        reliability=analysis.reliability(rows),
        research=research_of(runs, combined, replicates, bundles),
        baseline=baseline,
        tolerance=tolerance,
        topics=topics,
        questions={m: q for m, q in questions.items() if m in listed},
        regime_board=leaderboard(rows, by="regime", replicates=replicates, prices=prices),
        findings=list(findings),
        over_time=over_time(combined, runs, stored.created),
        forecasts=viewer.records(runs, stored, questions, prices),
        with_details=bool(stored.details),
    )


def run_facts(run, created: str | None) -> RunFacts:
    manifest = run.manifest
    store = manifest.market_store
    return RunFacts(
        run_id=run.run_id,
        created=created,
        snapshot=str(manifest.identity.snapshot or "none (run without an archive)"),
        store_version=store.version if store else None,
        store_root=store.root if store else None,
        git_revision=manifest.git_revision,
        python=manifest.python,
        policies=run.policies,
        recorded_policies=manifest.scoring_policies,
        packages=manifest.packages,
        manifest_json=json.dumps(
            bounded(manifest_form(manifest)), indent=1, sort_keys=True, ensure_ascii=False
        ),
    )


def bounded(value):
    """The manifest as shown: each list of more than LISTED_ITEMS items (a large run's market
    ids) cut to its first LISTED_ITEMS and a line saying how many more the run database holds."""
    if isinstance(value, dict):
        return {k: bounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        shown = [bounded(v) for v in value[:LISTED_ITEMS]]
        more = len(value) - LISTED_ITEMS
        return shown + [f"… and {more:,} more (the run's manifest in the run database)"] * (
            more > 0
        )
    return value


def fractions(rows: Sequence, replicates: int) -> Fractions | None:
    curves = analysis.fraction_curves(rows)
    if not curves:
        return None
    return Fractions(curves, analysis.market_curve(rows), fraction_intervals(rows, replicates))


def fraction_intervals(
    rows: Sequence, replicates: int
) -> dict[str, list[tuple[float, float, float]]]:
    """forecaster → (fraction, low, high): the market-clustered interval of its mean Brier there."""
    groups: dict[tuple[str, float], list] = {}
    for row in rows:
        fraction = fraction_of(row.label)
        if fraction is not None and row.brier is not None:
            groups.setdefault((row.forecaster, fraction), []).append(row)
    out: dict[str, list[tuple[float, float, float]]] = {}
    for (name, fraction), members in sorted(groups.items()):
        interval = mean_interval(members, f"{name}|{fraction!r}", replicates)
        if interval is not None:
            out.setdefault(name, []).append((fraction, interval.low, interval.high))
    return out


def mean_interval(members: Sequence, key: str, replicates: int):
    codes, n_markets = bootstrap.market_codes([r.market_id for r in members])
    if vs_market.too_few(n_markets):
        return None
    weights = bootstrap.draw_weights(n_markets, replicates, bootstrap.rng_for(0, key))
    return bootstrap.percentile_interval(
        bootstrap.replicate_means(weights, codes, np.array([r.brier for r in members]))
    )


def research_of(
    runs: Sequence, combined: Combined, replicates: int, opened: Sequence = ()
) -> Research | str:
    """hindcast.analysis over the combined rows and the market store versions the runs recorded
    (with their price paths and events; `opened`: those versions' bundles when the caller has
    them, else opened here), or the reason it could not be computed (a str)."""
    bundles = list(opened) or _recorded_bundles(runs)
    if isinstance(bundles, str):
        return bundles
    found = research.analyze(
        combined.rows, research.facts_of(bundles), research.Settings(replicates=replicates)
    )
    others = [f for f in found.findings() if f.key != "corp"]
    return Research(found.corp, research.corp.finding(found.corp), others)


def _recorded_bundles(runs: Sequence) -> list | str:
    """The market store versions the runs recorded, opened, or why one could not be (a str)."""
    bundles = []
    for run in runs:
        recorded = run.manifest.market_store
        try:
            if recorded is None:
                raise KeyError("market_store")
            bundles.append(markets.open_version(Path(recorded.root), recorded.version).bundle)
        except (KeyError, TypeError, OSError, HindcastError) as exc:
            return (
                f"run {run.run_id}: its market store version could not be opened "
                f"({type(exc).__name__}: {exc})"
            )
    return bundles


def topic_blocks(rows: Sequence, baseline: str, tolerance: float) -> list[TopicBlock]:
    blocks = []
    for name in analysis.forecasters(rows):
        if name != baseline:
            verdicts = analysis.market_verdicts(rows, name, baseline, tolerance)
            blocks.append(
                TopicBlock(name, analysis.topic_net(verdicts), listed(verdicts), len(verdicts))
            )
    return blocks


def listed(verdicts: Sequence[analysis.MarketVerdict]) -> list[analysis.MarketVerdict]:
    """Every market when there are at most 2 × LISTED_MARKETS; else the LISTED_MARKETS most
    recovered and the LISTED_MARKETS most regressed (by the Brier difference; ties by market id),
    in market order — the report's size stays bounded whatever the run's."""
    if len(verdicts) <= 2 * LISTED_MARKETS:
        return list(verdicts)

    def gain(v: analysis.MarketVerdict) -> tuple[float, str]:
        return (v.brier - v.baseline_brier, v.market_id)

    recovered = sorted((v for v in verdicts if v.verdict == "recovered"), key=gain)
    regressed = sorted((v for v in verdicts if v.verdict == "regressed"), key=gain, reverse=True)
    keep = {v.market_id for v in recovered[:LISTED_MARKETS] + regressed[:LISTED_MARKETS]}
    return [v for v in verdicts if v.market_id in keep]


def over_time(combined: Combined, runs: Sequence, created: Mapping[str, str]) -> OverTime | None:
    """With several runs: each forecaster's mean Brier in each run (on the matched rows), runs in
    creation order (given order where a run's creation instant is not known)."""
    if len(runs) < 2:
        return None
    order = sorted(range(len(runs)), key=lambda i: (created.get(runs[i].run_id) or "~", i))
    ids = [runs[i].run_id for i in order]
    scores = run_scores(combined)
    names = sorted({name for name, _ in scores})
    return OverTime(ids, {rid: created.get(rid) for rid in ids}, names, scores)


def run_scores(combined: Combined) -> dict[tuple[str, str], tuple[float | None, int]]:
    """(forecaster without its @run, run) → (mean Brier of its valid rows, failures)."""
    groups: dict[tuple[str, str], list] = {}
    for row in combined.rows:
        rid = combined.run_of[row.forecaster]
        groups.setdefault((row.forecaster.removesuffix(f"@{rid}"), rid), []).append(row.brier)
    return {k: (_mean(b), sum(v is None for v in b)) for k, b in groups.items()}


def _mean(values: Sequence) -> float | None:
    valid = [v for v in values if v is not None]
    return math.fsum(valid) / len(valid) if valid else None
