"""The self-contained HTML report: one file, inline CSS/JS/SVG, no network, every string escaped.

Byte-reproducible: the same runs give the same file (no clock, seeded bootstrap, sorted
inputs). Text from markets and models reaches the page only through `html.escape`, and the
page's Content-Security-Policy runs no script but its own.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path

import numpy as np

from hindcast.errors import HindcastError
from hindcast.frozen import write_text_atomic
from hindcast.leaderboard import analysis, assets, display, plots, viewer
from hindcast.leaderboard.export import cell
from hindcast.leaderboard.tables import Combined, combine, fraction_of
from hindcast.records import RunManifest
from hindcast.scoring import PriceTable, bootstrap, leaderboard, load_prices, vs_market

TEXT = ' class="text"'
REGIMES = (
    "T1: t0 and resolution before the model's knowledge cutoff (the outcome may be memorised); "
    "T2: t0 after the cutoff, market resolved since (a true forecast); "
    "n/a: no knowledge cutoff known for the forecaster (baselines, unregistered models)."
)
BOARD_COLUMNS = (
    "forecaster",
    "slice",
    "n_forecasts",
    "n_failed",
    "n_markets",
    "brier",
    "brier_ci",
    "n_paired",
    "market_brier",
    "brier_diff",
    "diff_ci",
    "skill_vs_market",
    "skill_ci",
    "log_score",
    "accuracy",
    "mean_abs_diff_market",
    "ece",
    "tokens",
    "requests",
    "retries",
    "cost",
    "notes",
)
# What the leaderboard shows at a glance (it fits a 1280 px window): the headline comparison
# first, each value with its interval in one cell; the rows' notes go below the table and the
# other columns into a second table (collapsed).
HEADLINE = (  # header, the row's sort field, its text
    (
        "Brier − market [95% CI]",
        "brier_diff_vs_market",
        lambda r: _with(display.signed(r.brier_diff_vs_market), display.diff_ci(r)),
    ),
    ("Brier [95% CI]", "brier", lambda r: _with(display.number(r.brier), display.brier_ci(r))),
    ("market Brier", "market_brier", lambda r: display.number(r.market_brier)),
    ("skill vs market", "skill_vs_market", lambda r: display.number(r.skill_vs_market)),
    (
        "n markets",
        "n_markets",
        lambda r: f"{r.n_markets} (subset)" if r.subset else str(r.n_markets),
    ),
    ("n forecasts", "n_forecasts", lambda r: str(r.n_forecasts)),
    ("failed", "n_failed", lambda r: str(r.n_failed)),
)
MORE_COLUMNS = (
    "forecaster",
    "slice",
    "n_paired",
    "skill_ci",
    "log_score",
    "accuracy",
    "mean_abs_diff_market",
    "ece",
    "tokens",
    "requests",
    "retries",
    "cost",
)


def _with(value: str, interval: str) -> str:
    if interval == "—" or value == "—":
        return value
    return f"{value} ({interval})" if interval == display.TOO_SMALL else f"{value} {interval}"


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
) -> Path:
    """FOLDER/report.html. `stored`: what the viewer shows beyond the scored rows (rationale, raw
    answer, documents read; run creation instants); `findings`: hindcast.scoring.findings.Finding
    tables, one section each."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "report.html"
    analysis.check_baseline(combined.rows, baseline)
    prices = prices or load_prices()
    stored = stored or viewer.Stored()
    research = research_of(runs, combined, replicates)
    sections = [
        provenance_header(runs, stored.created),
        summary(combined, board),
        fraction_section(combined.rows, replicates),
        corp_section(research),
        reliability_section(combined.rows),
        topic_section(combined.rows, baseline, tolerance, questions or {}),
        regime_section(
            leaderboard(combined.rows, by="regime", replicates=replicates, prices=prices)
        ),
        research_sections(research),
        *[finding_section(f) for f in findings],
        over_time_section(combined, runs, stored.created),
        viewer_section(runs, stored, questions or {}, prices),
        provenance_section(runs),
    ]
    write_text_atomic(path, page(title, [s for s in sections if s]))
    return path


def page(title: str, sections: Sequence[str]) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{escape(assets.CSP)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{assets.CSS}</style></head>\n<body>"
        f"<h1>{escape(title)}</h1>\n"
        + "\n".join(sections)
        + f"\n<script>{assets.JS}</script></body></html>\n"
    )


def td(value, shown: str | None = None, text: bool = False) -> str:
    """A cell whose data-value sorts exactly (repr of floats) and whose text
    is rounded for reading."""
    raw = "" if value is None else (repr(value) if isinstance(value, float) else str(value))
    return (
        f"<td{TEXT if text else ''} "
        f'data-value="{escape(raw)}">{escape(cell(value) if shown is None else shown)}</td>'
    )


def sortable(
    headers: Sequence[tuple[str, bool]], rows: Sequence[Sequence[str]], table_id: str = ""
) -> str:
    head = "".join(f'<th{TEXT if text else ""} scope="col">{escape(h)}</th>' for h, text in headers)
    body = "".join("<tr>" + "".join(cells) + "</tr>" for cells in rows)
    ident = f' id="{table_id}"' if table_id else ""
    return (
        '<div class="scroll"><table '
        f'class="sortable"{ident}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
    )


def board_cell(row, key: str) -> str:
    column = display.COLUMNS[key]
    value = column.text(row) if column.sort is None else getattr(row, column.sort)
    return td(value, column.text(row), column.is_text)


def board_table(board: Sequence, table_id: str) -> str:
    """The headline columns of a board, its rows' notes below it, the other
    columns in a second table."""
    return (
        headline_table(board, table_id)
        + board_notes(board, f"{table_id}-notes")
        + f'<details class="more"><summary>More columns: {escape(_more_headers())}</summary>'
        + _columns_table(board, f"{table_id}-more", MORE_COLUMNS)
        + "</details>"
    )


def headline_table(board: Sequence, table_id: str) -> str:
    sliced = any(r.slice != "all" for r in board)
    headers = [
        ("forecaster", True),
        *([("slice", True)] if sliced else []),
        *[(h, False) for h, _, _ in HEADLINE],
    ]
    rows = [
        [
            _name_cell(r),
            *([td(r.slice, text=True)] if sliced else []),
            *[td(getattr(r, key), text_of(r)) for _, key, text_of in HEADLINE],
        ]
        for r in board
    ]
    return sortable(headers, rows, table_id)


def _name_cell(row) -> str:
    """The forecaster, at most two lines tall (the full name in its title
    and in the notes below)."""
    name = escape(row.forecaster)
    return (
        f'<td class="text name" data-value="{name}" title="{name}"><span '
        f'class="clamp">{name}</span></td>'
    )


def _columns_table(board: Sequence, table_id: str, keys: Sequence[str]) -> str:
    columns = [c for c in keys if c != "slice" or any(r.slice != "all" for r in board)]
    rows = [[board_cell(r, key) for key in columns] for r in board]
    return sortable(
        [(display.COLUMNS[c].header, display.COLUMNS[c].is_text) for c in columns], rows, table_id
    )


def _more_headers() -> str:
    return ", ".join(
        display.COLUMNS[c].header for c in MORE_COLUMNS if c not in ("forecaster", "slice")
    )


def board_notes(board: Sequence, list_id: str) -> str:
    """One line per row that has a note (subset, no interval, skill not shown, cost unknown)."""
    items = [
        f"<li><b>{escape(_row_name(r))}</b>: {escape(text)}</li>"
        for r in board
        if (text := "; ".join(n for n in (r.subset, display.notes(r)) if n))
    ]
    return f'<ul class="board-notes" id="{list_id}">{"".join(items)}</ul>' if items else ""


def _row_name(row) -> str:
    return row.forecaster if row.slice == "all" else f"{row.forecaster} ({row.slice})"


def summary(combined: Combined, board: Sequence) -> str:
    legend = "".join(f'<p class="note">{escape(line)}</p>' for line in display.LEGEND)
    return (
        '<section id="leaderboard"><h2>Leaderboard</h2><p class="note" '
        f'id="matching">{escape(combined.note())}.</p><p class="note">Failed forecasts are '
        "counted, never imputed. Click a column heading to sort.</p>"
        + board_table(board, "board")
        + f'<div id="legend">{legend}</div></section>'
    )


def fraction_section(rows: Sequence, replicates: int = bootstrap.REPLICATES) -> str:
    curves = analysis.fraction_curves(rows)
    market = analysis.market_curve(rows)
    if not curves:
        return (
            '<section id="fractions"><h2>Brier by lifetime fraction</h2><p class="note">No '
            "cutoffs at lifetime "
            "fractions in these runs (only explicit instants).</p></section>"
        )
    chart = plots.fraction_chart(
        {n: [(p.fraction, p.brier) for p in c] for n, c in curves.items()},
        [(p.fraction, p.brier) for p in market],
        fraction_intervals(rows, replicates),
    )
    return (
        '<section id="fractions"><h2>Brier by lifetime fraction</h2><p class="note">Mean '
        "Brier of each "
        "forecaster at each lifetime fraction of the market (0 = opened, 1 = the day before "
        "resolution), and "
        "the market's own price at the same t0 (dashed; over the (market, t0) rows that had "
        "a price). "
        "Whiskers: 95% interval of the mean, bootstrap over markets (none from fewer than "
        f"{vs_market.MIN_MARKETS} markets).</p>"
        + chart
        + fraction_table(curves, market)
        + "</section>"
    )


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


def reliability_section(rows: Sequence) -> str:
    tables = analysis.reliability(rows)
    diagrams = "".join(
        plots.reliability_diagram(name, bins, i) for i, (name, bins) in enumerate(tables.items())
    )
    return (
        '<section id="reliability"><h2>Reliability in fixed bins (ECE)</h2><p '
        'class="note">Observed frequency of YES against the '
        "mean forecast in 10 equal-width bins of p (circle area grows with the bin's count; "
        "whiskers: 95% Wilson "
        "interval of the frequency, rows taken as independent); a calibrated forecaster lies "
        "on the dashed "
        "diagonal.</p>"
        f'<div class="grid-plots">{diagrams}</div></section>'
    )


# ---- the research figures of hindcast.analysis (issue 29): CORP calibration first, the rest as tab
def research_of(runs: Sequence, combined: Combined, replicates: int):
    """hindcast.analysis over the combined rows and the market store versions the runs recorded
    (with their price paths and events), or the reason it could not be computed (a str)."""
    from hindcast import analysis
    from hindcast.markets import open_version

    bundles = []
    for run in runs:
        recorded = run.manifest.market_store
        try:
            bundles.append(open_version(Path(recorded["root"]), recorded["version"]).bundle)
        except (KeyError, TypeError, OSError, HindcastError) as exc:
            return (
                f"run {run.run_id}: its market store version could not be opened "
                f"({type(exc).__name__}: {exc})"
            )
    return analysis.analyze(
        combined.rows, analysis.facts_of(bundles), analysis.Settings(replicates=replicates)
    )


def corp_section(research) -> str:
    """The headline calibration figure: a CORP reliability diagram per forecaster
    and the decomposition."""
    head = '<section id="corp"><h2>Calibration: CORP reliability diagrams</h2>'
    if isinstance(research, str):
        return head + f'<p class="note">Not computed: {escape(research)}</p></section>'
    from hindcast.analysis import corp

    diagrams = "".join(corp_diagram(c, i) for i, c in enumerate(research.corp))
    table = finding_body(corp.finding(research.corp))
    return (
        head
        + '<p class="note">Each forecaster\'s recalibrated probability (isotonic regression of '
        "the outcome "
        "on its forecast, the CORP method) against its forecast; shaded: the 90% consistency "
        "band, where a "
        "calibrated forecaster's curve would fall; dashed: the diagonal. Below: Brier = MCB "
        "− DSC + UNC (exact), "
        "with the miscalibration test and the fixed-bin ECE beside it.</p>"
        f'<div class="grid-plots">{diagrams}</div>{table}</section>'
    )


def corp_diagram(found, index: int) -> str:
    frame = plots.Frame(300, 300, (0.0, 1.0), (0.0, 1.0), margin=(28, 12, 44, 48))
    body = plots.axes(frame, plots.ticks(0, 1), plots.ticks(0, 1), "forecast", "recalibrated (CEP)")
    band = [(c.p, c.band_high) for c in found.curve] + [
        (c.p, c.band_low) for c in reversed(found.curve)
    ]
    body.append(
        '<polyline class="band" '
        f'points="{" ".join(f"{frame.x(x)},{frame.y(y)}" for x, y in band)}" '
        f'fill="{plots.colour(index)}" fill-opacity="0.15" stroke="none"/>'
    )
    body.append(
        f'<line class="diagonal" x1="{frame.x(0)}" y1="{frame.y(0)}" x2="{frame.x(1)}" '
        f'y2="{frame.y(1)}"/>'
    )
    curve = plots.polyline(frame, [(c.p, c.cep) for c in found.curve], plots.colour(index))
    body += (
        curve if len(found.curve) < 3 else curve[:1]
    )  # a marker where the forecaster used one or two values
    d = found.decomposition
    body.append(plots.text(frame.width / 2, 16, found.forecaster, cls="plot-title"))
    body.append(
        plots.text(
            frame.x(0.02),
            frame.y(0.95),
            f"MCB {d.mcb:.3f}  DSC {d.dsc:.3f}  UNC {d.unc:.3f}",
            anchor="start",
        )
    )
    return plots.svg(frame, body, f"CORP reliability diagram of {found.forecaster}")


def research_sections(research) -> str:
    """The other figures of hindcast.analysis, one table each (the CORP table
    sits in its own section)."""
    if isinstance(research, str):
        return (
            '<section id="finding-research" class="finding"><h2>Research figures</h2>'
            f'<p class="note">Not computed: {escape(research)}</p></section>'
        )
    return "".join(finding_section(f) for f in research.findings() if f.key != "corp")


def topic_section(
    rows: Sequence, baseline: str, tolerance: float, questions: Mapping[str, str]
) -> str:
    parts = [
        '<section id="topics"><h2>Recovered and regressed markets by topic, against '
        f"{escape(baseline)}</h2>",
        '<p class="note" id="definition">For each forecaster F and the baseline B '
        f"({escape(baseline)}), a "
        "market is compared on its (market, t0) rows where both have a probability, by the "
        "mean Brier over "
        "those rows. It is <b>recovered</b> when F's mean Brier is lower than B's by more "
        f"than {tolerance:g}, "
        f"<b>regressed</b> when it is higher by more than {tolerance:g}, and tied otherwise. "
        "A topic's net is "
        "recovered − regressed markets.</p>",
    ]
    for name in analysis.forecasters(rows):
        if name != baseline:
            parts.append(
                topic_block(
                    name,
                    analysis.market_verdicts(rows, name, baseline, tolerance),
                    baseline,
                    questions,
                )
            )
    return "".join(parts) + "</section>"


def topic_block(name: str, verdicts: Sequence, baseline: str, questions: Mapping[str, str]) -> str:
    nets = analysis.topic_net(verdicts)
    headers = [
        ("topic", True),
        ("recovered", False),
        ("regressed", False),
        ("tied", False),
        ("net", False),
    ]
    rows = [
        [td(n.topic, text=True), td(n.recovered), td(n.regressed), td(n.tied), td(n.net)]
        for n in nets
    ]
    return (
        f"<h3>{escape(name)}</h3>"
        + plots.net_bars(nets, name, baseline)
        + sortable(headers, rows)
        + market_details(verdicts, questions)
    )


def market_details(verdicts: Sequence, questions: Mapping[str, str]) -> str:
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
        for v in verdicts
    ]
    return f"<details><summary>{len(verdicts)} markets</summary>{sortable(headers, rows)}</details>"


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


def provenance_section(runs: Sequence) -> str:
    return (
        '<section id="provenance"><h2>Run provenance</h2>'
        + "".join(run_block(r) for r in runs)
        + "</section>"
    )


def run_block(run) -> str:
    """A run's provenance: the scoring policies that scored it (those recorded when the run was
    created too, when they differ: a run re-scored by a later release), then its manifest."""
    manifest = run.manifest
    store = manifest.market_store
    recorded = manifest.scoring_policies
    facts = [
        ("run", run.run_id),
        ("market store version", store.get("version")),
        ("market store", store.get("root")),
        ("git revision", manifest.git_revision),
        ("python", manifest.python),
        ("scoring policies", _compact(run.policies)),
        *(
            [("scoring policies recorded at creation", _compact(recorded))]
            if recorded != run.policies
            else []
        ),
        ("packages", _compact(manifest.packages)),
    ]
    items = "".join(f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>" for k, v in facts)
    full = escape(json.dumps(manifest.to_dict(), indent=1, sort_keys=True, ensure_ascii=False))
    return (
        f'<h3>{escape(run.run_id)}</h3><dl class="provenance">{items}</dl>'
        f"<details><summary>full manifest</summary><pre>{full}</pre></details>"
    )


def _compact(value) -> str:
    if not isinstance(value, dict):
        return str(value)
    return ", ".join(f"{k}={v}" for k, v in sorted(value.items()))


def provenance_header(runs: Sequence, created: Mapping[str, str]) -> str:
    """At the top: each run's archive snapshot id and market store version
    (and creation instant)."""
    rows = [
        [
            td(r.run_id, text=True),
            td(created.get(r.run_id), text=True),
            td(_snapshot(r.manifest), text=True),
            td(r.manifest.market_store.get("version"), text=True),
        ]
        for r in runs
    ]
    headers = [
        ("run", True),
        ("created", True),
        ("archive snapshot", True),
        ("market store version", True),
    ]
    return (
        '<section id="inputs"><h2>Inputs</h2><p class="note">What every figure below was '
        "computed from "
        "(the full manifests are under Run provenance at the end).</p>"
        + sortable(headers, rows, "inputs-table")
        + "</section>"
    )


def _snapshot(manifest: RunManifest) -> str:
    return str(manifest.identity.get("snapshot") or "none (run without an archive)")


def finding_section(finding) -> str:
    """One analysis (a hindcast.scoring.findings.Finding) as a titled table with its notes."""
    return (
        f'<section id="finding-{_slug(finding.key)}" '
        f'class="finding"><h2>{escape(finding.title)}</h2>'
        f"{finding_body(finding)}</section>"
    )


def finding_body(finding) -> str:
    """A finding's notes and table (or "No rows.")."""
    notes = "".join(f'<p class="note">{escape(n)}</p>' for n in finding.notes)
    rows = [[finding_cell(v) for v in row] for row in finding.rows]
    texts = [
        all(isinstance(row[i], str) or row[i] is None for row in finding.rows)
        and bool(finding.rows)
        for i in range(len(finding.columns))
    ]
    table = sortable(list(zip(finding.columns, texts)), rows, f"finding-{_slug(finding.key)}-table")
    return notes + (table if finding.rows else '<p class="note">No rows.</p>')


def finding_cell(value) -> str:
    """A finding's cell: short text kept on one line, long text (a reason, a note)
    wrapped in a wide cell."""
    cell_html = td(
        value if not isinstance(value, float) or math.isfinite(value) else None,
        number(value),
        isinstance(value, str),
    )
    return (
        cell_html.replace('<td class="text"', '<td class="text long"', 1)
        if isinstance(value, str) and len(value) > 40
        else cell_html
    )


def number(value) -> str:
    """A finding's value as read: None (or not finite) "–", floats to 4 decimals (3 significant
    digits under 0.001, thousands separated from 1,000), the rest as is."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if isinstance(value, bool) or not isinstance(value, float):
        return str(value)
    if value == 0 or 0.001 <= abs(value) < 1000:
        return f"{value:.4f}".rstrip("0").rstrip(".") if value != 0 else "0"
    return f"{value:,.1f}" if abs(value) >= 1000 else f"{value:.3g}"


def _slug(key: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in key)


def over_time_section(combined: Combined, runs: Sequence, created: Mapping[str, str]) -> str:
    """With several runs: each forecaster's mean Brier in each run (on the matched rows), runs in
    creation order (given order where a run's creation instant is not known)."""
    if len(runs) < 2:
        return ""
    order = sorted(range(len(runs)), key=lambda i: (created.get(runs[i].run_id) or "~", i))
    ids = [runs[i].run_id for i in order]
    scores = _run_scores(combined)
    names = sorted({name for name, _ in scores})
    headers = [("forecaster", True)] + [
        (f"{rid} ({created.get(rid) or 'created ?'})", False) for rid in ids
    ]
    rows = [
        [td(name, text=True)] + [_score_cell(scores.get((name, rid))) for rid in ids]
        for name in names
    ]
    return (
        '<section id="over-time"><h2>Scores across runs</h2><p class="note">Mean Brier of '
        "each forecaster "
        "in each run, on the matched (market, t0) rows, runs ordered by when they were "
        "created (oldest first); "
        "in brackets, failed forecasts (counted, never imputed). – : not in that run.</p>"
        + sortable(headers, rows, "over-time-table")
        + "</section>"
    )


def _run_scores(combined: Combined) -> dict[tuple[str, str], tuple[float | None, int]]:
    """(forecaster without its @run, run) → (mean Brier of its valid rows, failures)."""
    groups: dict[tuple[str, str], list] = {}
    for row in combined.rows:
        rid = combined.run_of[row.forecaster]
        groups.setdefault((row.forecaster.removesuffix(f"@{rid}"), rid), []).append(row.brier)
    return {
        k: (
            math.fsum(v for v in b if v is not None) / len([v for v in b if v is not None])
            if any(v is not None for v in b)
            else None,
            sum(v is None for v in b),
        )
        for k, b in groups.items()
    }


def _score_cell(score) -> str:
    if score is None:
        return td(None, "–")
    brier, failed = score
    return td(brier, f"{cell(brier)} ({failed})" if failed else cell(brier))


def viewer_section(
    runs: Sequence, stored: viewer.Stored, questions: Mapping[str, str], prices: PriceTable
) -> str:
    """Every stored forecast, searchable and paged by the page's script (data as
    JSON in an attribute)."""
    data = viewer.records(runs, stored, questions, prices)
    missing = (
        ""
        if stored.details
        else (
            " Rationales, raw answers and documents read are not in this report "
            "(it was written without the run store)."
        )
    )
    return (
        '<section id="forecasts"><h2>Forecasts</h2><p class="note">Every stored forecast '
        "(newest attempt) of "
        f"every run: {len(data)}. Type to filter (every word must appear in the forecast's text); "
        f"{viewer.PAGE_SIZE} a page. Documents: each archive call of the forecast and the "
        "documents it "
        f"returned, with their source and creation instant.{escape(missing)}</p>"
        f'<div id="viewer" data-page-size="{viewer.PAGE_SIZE}" '
        f'data-forecasts="{escape(viewer.attribute(data))}">'
        '<p class="note">The forecast viewer needs the page\'s own script.</p></div></section>'
    )
