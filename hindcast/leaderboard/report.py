"""The HTML report: report.html, one page with inline CSS/JS/SVG, no network, every string
escaped — and, for a run too large to carry its forecasts inline, their files beside it in
report.data/ (see `report_data`).

Three steps: `report_record.build` computes everything the page shows into one typed record
(it opens the stores the runs recorded and runs the analyses), `report_data.place` decides where
the forecast viewer's records go, and `report_view.render` renders the record (computing
nothing). Byte-reproducible: the same runs give the same files (no clock, seeded bootstrap,
sorted inputs). Text from markets and models reaches the page only through `html.escape` (or,
in report.data/, as JSON strings the page's script shows with `textContent`), and the page's
Content-Security-Policy runs no script but its own (and the files it loads).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from hindcast.frozen import write_text_atomic
from hindcast.leaderboard import analysis, report_data, report_record, report_view, viewer
from hindcast.leaderboard.tables import Combined, combine
from hindcast.scoring import PriceTable, bootstrap, leaderboard, load_prices


def write_report(
    folder: Path,
    runs: Sequence,
    title: str,
    *,
    by: str | None = None,
    baseline: str = analysis.MARKET_PRICE,
    tolerance: float = analysis.TOLERANCE,
    questions: Mapping[str, str] | None = None,
    replicates: int = bootstrap.REPLICATES,
    prices: PriceTable | None = None,
    stored: viewer.Stored | None = None,
    findings: Sequence = (),
) -> Path:
    """Score `runs` (replay.RunScores; matched when several) and write FOLDER/report.html."""
    combined = combine(runs)
    prices = prices or load_prices()
    board = leaderboard(combined.rows, by=by, replicates=replicates, prices=prices)
    return write_html(
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
        findings=findings,
    )


def write_html(
    folder: Path,
    combined: Combined,
    board: Sequence,
    title: str,
    *,
    runs: Sequence,
    baseline: str = analysis.MARKET_PRICE,
    tolerance: float = analysis.TOLERANCE,
    questions: Mapping[str, str] | None = None,
    replicates: int = bootstrap.REPLICATES,
    prices: PriceTable | None = None,
    stored: viewer.Stored | None = None,
    findings: Sequence = (),
    bundles: Sequence = (),
) -> Path:
    """FOLDER/report.html (and FOLDER/report.data/ when the forecasts do not fit in the page).
    `stored`: what the viewer shows beyond the scored rows (rationale, raw answer, documents
    read; run creation instants); `findings`: hindcast.scoring.findings.Finding tables, one
    section each; `bundles`: the market store versions the runs recorded, when the caller has
    them open (else opened here)."""
    analysis.check_baseline(combined.rows, baseline)
    record = report_record.build(
        title,
        combined,
        board,
        runs=runs,
        baseline=baseline,
        tolerance=tolerance,
        questions=questions or {},
        replicates=replicates,
        prices=prices or load_prices(),
        stored=stored or viewer.Stored(),
        findings=findings,
        bundles=bundles,
    )
    return write_record(folder, record)


def write_record(
    folder: Path,
    record: report_record.ReportRecord,
    inline_bytes: float = report_data.INLINE_BYTES,
) -> Path:
    """Write a built record: the viewer's files first (if any), then the page that indexes them
    (`inline_bytes`: the most forecast JSON the page carries itself)."""
    folder.mkdir(parents=True, exist_ok=True)
    placement = report_data.place(record.forecasts, inline_bytes)
    report_data.write(folder, placement)
    path = folder / "report.html"
    write_text_atomic(path, report_view.render(record, placement))
    return path
