"""The report's page, rendered from its record (`report_record.ReportRecord`) and the viewer's
placement (`report_data.Placement`). It opens nothing and computes nothing: each section below
turns values of the record into escaped HTML, in the order the page shows them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from hindcast.leaderboard import assets, display, plots, viewer
from hindcast.leaderboard.export import cell
from hindcast.leaderboard.report_board import board_table
from hindcast.leaderboard.report_data import CALLBACK, FOLDER, Placement
from hindcast.leaderboard.report_html import finding_section, page, sortable, td
from hindcast.leaderboard.report_record import OverTime, ReportRecord, RunFacts, TopicBlock
from hindcast.leaderboard.report_research import corp_section, research_sections

REGIMES = (
    "T1: t0 and resolution before the model's knowledge cutoff (the outcome may be memorised); "
    "T2: t0 after the cutoff, market resolved since (a true forecast); "
    "n/a: no knowledge cutoff known for the forecaster (baselines, unregistered models)."
)


def render(record: ReportRecord, placement: Placement) -> str:
    sections = [
        provenance_header(record.inputs),
        summary(record),
        fraction_section(record),
        corp_section(record.research),
        reliability_section(record.reliability),
        topic_section(record),
        regime_section(record.regime_board),
        research_sections(record.research),
        *[finding_section(f) for f in record.findings],
        over_time_section(record.over_time),
        viewer_section(record, placement),
        provenance_section(record.inputs),
    ]
    csp = assets.CSP_PAGED if placement.paged else assets.CSP
    return page(record.title, [s for s in sections if s], csp)


def summary(record: ReportRecord) -> str:
    legend = "".join(f'<p class="note">{escape(line)}</p>' for line in display.LEGEND)
    return (
        '<section id="leaderboard"><h2>Leaderboard</h2><p class="note" '
        f'id="matching">{escape(record.matching_note)}.</p><p class="note">Failed forecasts are '
        "counted, never imputed. Click a column heading to sort.</p>"
        + board_table(record.board, "board")
        + f'<div id="legend">{legend}</div></section>'
    )


def fraction_section(record: ReportRecord) -> str:
    found = record.fractions
    if found is None:
        return (
            '<section id="fractions"><h2>Brier by lifetime fraction</h2><p class="note">No '
            "cutoffs at lifetime "
            "fractions in these runs (only explicit instants).</p></section>"
        )
    chart = plots.fraction_chart(
        {n: [(p.fraction, p.brier) for p in c] for n, c in found.curves.items()},
        [(p.fraction, p.brier) for p in found.market],
        found.intervals,
    )
    return (
        '<section id="fractions"><h2>Brier by lifetime fraction</h2><p class="note">Mean '
        "Brier of each forecaster at each lifetime fraction of the market (0 = opened, 1 = the "
        "day before resolution), and the market's own price at the same t0 (dashed; over the "
        "(market, t0) rows that had a price). Whiskers: 95% interval of the mean, bootstrap "
        f"over markets (none from fewer than {found.min_markets} markets).</p>"
        + chart
        + fraction_table(found.curves, found.market)
        + "</section>"
    )


def fraction_table(curves: Mapping, market: Sequence) -> str:
    fractions = sorted(
        {p.fraction for c in curves.values() for p in c} | {p.fraction for p in market}
    )
    series = {
        **{n: {p.fraction: p for p in c} for n, c in curves.items()},
        "market price at t0": {p.fraction: p for p in market},
    }
    headers = [("forecaster", True)] + [(f"f={f:g}", False) for f in fractions]
    rows = [
        [td(name, text=True)] + [td(s[f].brier if f in s else None) for f in fractions]
        for name, s in series.items()
    ]
    return sortable(headers, rows, "fraction-table")


def reliability_section(tables: Mapping[str, Sequence]) -> str:
    diagrams = "".join(
        plots.reliability_diagram(name, bins, i) for i, (name, bins) in enumerate(tables.items())
    )
    return (
        '<section id="reliability"><h2>Reliability in fixed bins (ECE)</h2><p '
        'class="note">Observed frequency of YES against the mean forecast in 10 equal-width bins '
        "of p (circle area grows with the bin's count; whiskers: 95% Wilson interval of the "
        "frequency, rows taken as independent); a calibrated forecaster lies on the dashed "
        "diagonal.</p>"
        f'<div class="grid-plots">{diagrams}</div></section>'
    )


def topic_section(record: ReportRecord) -> str:
    baseline, tolerance = escape(record.baseline), record.tolerance
    parts = [
        f'<section id="topics"><h2>Recovered and regressed markets by topic, against {baseline}'
        "</h2>",
        f'<p class="note" id="definition">For each forecaster F and the baseline B ({baseline}), '
        "a market is compared on its (market, t0) rows where both have a probability, by the "
        "mean Brier over those rows. It is <b>recovered</b> when F's mean Brier is lower than "
        f"B's by more than {tolerance:g}, <b>regressed</b> when it is higher by more than "
        f"{tolerance:g}, and tied otherwise. A topic's net is recovered − regressed markets.</p>",
    ]
    parts += [topic_block(b, record.baseline, record.questions) for b in record.topics]
    return "".join(parts) + "</section>"


def topic_block(block: TopicBlock, baseline: str, questions: Mapping[str, str]) -> str:
    headers = [
        ("topic", True),
        ("recovered", False),
        ("regressed", False),
        ("tied", False),
        ("net", False),
    ]
    rows = [
        [td(n.topic, text=True), td(n.recovered), td(n.regressed), td(n.tied), td(n.net)]
        for n in block.nets
    ]
    return (
        f"<h3>{escape(block.forecaster)}</h3>"
        + plots.net_bars(block.nets, block.forecaster, baseline)
        + sortable(headers, rows)
        + market_details(block, questions)
    )


def market_details(block: TopicBlock, questions: Mapping[str, str]) -> str:
    headers = [
        ("market", True),
        ("question", True),
        ("topic", True),
        ("rows", False),
        ("Brier", False),
        ("baseline Brier", False),
        ("verdict", True),
    ]
    rows = [
        [
            td(v.market_id, text=True),
            td(questions.get(v.market_id, ""), text=True),
            td(v.topic, text=True),
            td(v.n_rows),
            td(v.brier),
            td(v.baseline_brier),
            f'<td class="text verdict-{v.verdict}" data-value="{v.verdict}">{v.verdict}</td>',
        ]
        for v in block.listed
    ]
    shown = len(block.listed)
    summary = (
        f"{block.n_markets} markets"
        if shown == block.n_markets
        else f"{block.n_markets} markets; {shown} listed: the most recovered and the most "
        "regressed (every row is in the per-forecast table, forecasts.*)"
    )
    return f"<details><summary>{summary}</summary>{sortable(headers, rows)}</details>"


def regime_section(board: Sequence) -> str:
    labelled = any(r.slice != "regime=n/a" for r in board)
    note = (
        ""
        if labelled
        else (
            " No forecaster in these runs has a knowledge cutoff in the model registry, so "
            "every row is n/a."
        )
    )
    return (
        '<section id="regimes"><h2>Knowledge-cutoff regimes (T1/T2/T3)</h2>'
        f'<p class="note">{escape(REGIMES + note)}</p>'
        + board_table(board, "regime-board")
        + "</section>"
    )


def provenance_header(inputs: Sequence[RunFacts]) -> str:
    """At the top: each run's archive snapshot id and market store version
    (and creation instant)."""
    rows = [
        [
            td(r.run_id, text=True),
            td(r.created, text=True),
            td(r.snapshot, text=True),
            td(r.store_version, text=True),
        ]
        for r in inputs
    ]
    headers = [
        ("run", True),
        ("created", True),
        ("archive snapshot", True),
        ("market store version", True),
    ]
    return (
        '<section id="inputs"><h2>Inputs</h2><p class="note">What every figure below was '
        "computed from (the full manifests are under Run provenance at the end).</p>"
        + sortable(headers, rows, "inputs-table")
        + "</section>"
    )


def provenance_section(inputs: Sequence[RunFacts]) -> str:
    return (
        '<section id="provenance"><h2>Run provenance</h2>'
        + "".join(run_block(r) for r in inputs)
        + "</section>"
    )


def run_block(run: RunFacts) -> str:
    """A run's provenance: the scoring policies that scored it (those recorded when the run was
    created too, when they differ: a run re-scored by a later release), then its manifest."""
    facts = [
        ("run", run.run_id),
        ("market store version", run.store_version),
        ("market store", run.store_root),
        ("git revision", run.git_revision),
        ("python", run.python),
        ("scoring policies", _compact(run.policies)),
        *(
            [("scoring policies recorded at creation", _compact(run.recorded_policies))]
            if run.recorded_policies != run.policies
            else []
        ),
        ("packages", _compact(run.packages)),
    ]
    items = "".join(f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>" for k, v in facts)
    return (
        f'<h3>{escape(run.run_id)}</h3><dl class="provenance">{items}</dl>'
        f"<details><summary>full manifest</summary><pre>{escape(run.manifest_json)}</pre></details>"
    )


def _compact(value) -> str:
    if not isinstance(value, dict):
        return str(value)
    return ", ".join(f"{k}={v}" for k, v in sorted(value.items()))


def over_time_section(found: OverTime | None) -> str:
    if found is None:
        return ""
    headers = [("forecaster", True)] + [
        (f"{rid} ({found.created.get(rid) or 'created ?'})", False) for rid in found.run_ids
    ]
    rows = [
        [td(name, text=True)]
        + [_score_cell(found.scores.get((name, rid))) for rid in found.run_ids]
        for name in found.names
    ]
    return (
        '<section id="over-time"><h2>Scores across runs</h2><p class="note">Mean Brier of '
        "each forecaster in each run, on the matched (market, t0) rows, runs ordered by when "
        "they were created (oldest first); in brackets, failed forecasts (counted, never "
        "imputed). – : not in that run.</p>"
        + sortable(headers, rows, "over-time-table")
        + "</section>"
    )


def _score_cell(score) -> str:
    if score is None:
        return td(None, "–")
    brier, failed = score
    return td(brier, f"{cell(brier)} ({failed})" if failed else cell(brier))


def viewer_section(record: ReportRecord, placement: Placement) -> str:
    """Every stored forecast, searchable and paged by the page's script: the records as JSON in
    an attribute, or (a large run) an index of the files beside the page that hold them."""
    missing = (
        ""
        if record.with_details
        else (
            " Rationales, raw answers and documents read are not in this report "
            "(it was written without the run store)."
        )
    )
    where = (
        f'data-forecasts="{escape(placement.inline)}"'
        if placement.inline is not None
        else f'data-folder="{FOLDER}" data-callback="{CALLBACK}" '
        f'data-chunks="{escape(placement.index())}"'
    )
    beside = (
        ""
        if placement.inline is not None
        else f" They are read from the {len(placement.chunks)} files in {FOLDER}/ beside this "
        "page (keep that folder with it), a file when a page first needs it."
    )
    return (
        '<section id="forecasts"><h2>Forecasts</h2><p class="note">Every stored forecast '
        f"(newest attempt) of every run: {placement.total}. Type to filter (every word must "
        f"appear in the forecast's text); {viewer.PAGE_SIZE} a page. Documents: each archive "
        "call of the forecast and the documents it returned, with their source and creation "
        f"instant.{escape(missing)}{escape(beside)}</p>"
        f'<div id="viewer" data-page-size="{viewer.PAGE_SIZE}" {where}>'
        '<p class="note">The forecast viewer needs the page\'s own script.</p></div></section>'
    )
