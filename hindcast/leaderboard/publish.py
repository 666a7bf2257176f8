"""One call from scored runs to every file asked for: leaderboard tables, the per-forecast
table alongside them, and the HTML report.

The per-forecast table is written in each asked-for format that can hold it (CSV, JSON,
Parquet), and as CSV when only Markdown or HTML was asked for, so every export can be
recomputed from the rows it was computed from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from hindcast.errors import LeaderboardError
from hindcast.leaderboard import analysis, export, findings, report, viewer
from hindcast.leaderboard.forecastbench import checked_sets, write_forecast_sets
from hindcast.leaderboard.tables import Combined, combine, forecast_records
from hindcast.scoring import SLICES as SLICE_RULES
from hindcast.scoring import LeaderboardRow, PriceTable, bootstrap, leaderboard, load_prices

SLICES = tuple(SLICE_RULES)
FORECAST_FORMATS = ("csv", "json", "parquet")


@dataclass(frozen=True)
class Published:
    combined: Combined
    board: list[LeaderboardRow]
    paths: dict[str, Path]


def check_slice(by: str | None) -> str | None:
    if by is not None and by not in SLICES:
        raise LeaderboardError(f"unknown slice {by!r}; choose one of {', '.join(SLICES)}")
    return by


def publish(
    runs: Sequence,
    folder: Path,
    formats: Sequence[str],
    *,
    title: str,
    by: str | None = None,
    baseline: str = analysis.MARKET_PRICE,
    tolerance: float = analysis.TOLERANCE,
    questions: Mapping[str, str] | None = None,
    replicates: int = bootstrap.REPLICATES,
    prices: PriceTable | None = None,
    stored: viewer.Stored | None = None,
    excluded: Sequence[str] = (),
    audits: Sequence = (),
) -> Published:
    """Score `runs` (replay.RunScores; matched on (market, t0) when several) and write
    FOLDER/… files.
    Costs from `prices` (default: the shipped price table). `stored`: what the report's forecast
    viewer shows beyond the scored rows (viewer.from_store); the report's analysis sections are
    `leaderboard.findings.collect(runs)`. `excluded`: notes of rows left out before scoring
    (`--exclude-recalled`), written with the tables and as the report's first analysis section;
    `audits`: stored leak audits (Findings) shown after the analyses."""
    formats, by = export.check_formats(formats), check_slice(by)
    combined = combine(runs)
    if "html" in formats:
        analysis.check_baseline(combined.rows, baseline)
    records = forecast_records(combined)
    sets = checked_sets(records) if "forecastbench" in formats else None
    prices = prices or load_prices()
    board = leaderboard(combined.rows, by=by, replicates=replicates, prices=prices)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {
        f"leaderboard.{f}": export.write_leaderboard(
            f, board, folder, title, notes(combined) + list(excluded), by
        )
        for f in formats
        if f in export.TABLE_FORMATS
    }
    if "html" in formats:
        paths["report.html"] = report.write_html(
            folder,
            combined,
            board,
            title,
            runs=runs,
            baseline=baseline,
            tolerance=tolerance,
            questions=questions,
            replicates=replicates,
            prices=prices,
            stored=stored,
            findings=findings.excluded(excluded) + findings.collect(runs) + list(audits),
        )
    for fmt in [f for f in formats if f in FORECAST_FORMATS] or ["csv"]:
        paths[f"forecasts.{fmt}"] = export.write_forecasts(fmt, records, folder)
    if sets is not None:
        paths["forecastbench"] = write_forecast_sets(sets, folder)
    return Published(combined, board, paths)


def notes(combined: Combined) -> list[str]:
    return [
        combined.note(),
        "Failures are counted, never imputed. The per-forecast table (forecasts.*) beside this "
        "file holds every scored row.",
    ]
