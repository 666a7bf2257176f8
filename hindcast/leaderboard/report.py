"""The self-contained HTML report: one file, inline CSS/JS/SVG, no network, every string escaped.

Byte-reproducible: the same runs give the same file (no clock, seeded bootstrap, sorted
inputs). Text from markets and models reaches the page only through `html.escape`, and the
page's Content-Security-Policy runs no script but its own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path

from hindcast.frozen import write_text_atomic
from hindcast.leaderboard import analysis, assets, display, plots
from hindcast.leaderboard.export import cell
from hindcast.leaderboard.tables import Combined, combine
from hindcast.scoring import bootstrap
from hindcast.scoring.aggregate import leaderboard
from hindcast.scoring.costs import PriceTable, load_prices

TEXT = ' class="text"'
REGIMES = ("T1: t0 and resolution before the model's knowledge cutoff (the outcome may be memorised); "
           "T2: t0 after the cutoff, market resolved since (a true forecast); "
           "n/a: no knowledge cutoff known for the forecaster (baselines, unregistered models).")
BOARD_COLUMNS = ("forecaster", "slice", "n_forecasts", "n_failed", "n_markets", "brier", "brier_ci", "n_paired",
                 "market_brier", "brier_diff", "diff_ci", "skill_vs_market", "skill_ci", "log_score", "accuracy",
                 "mean_abs_diff_market", "ece", "tokens", "requests", "retries", "latency", "cost", "notes")


def write_report(folder: Path, runs: Sequence, title: str, *, by: str | None = None,
                 baseline: str = analysis.MARKET_PRICE, tolerance: float = analysis.TOLERANCE,
                 questions: Mapping[str, str] | None = None, replicates: int = bootstrap.REPLICATES,
                 prices: PriceTable | None = None) -> Path:
    """Score `runs` (api.RunScores; matched when several) and write FOLDER/report.html."""
    combined = combine(runs)
    prices = prices or load_prices()
    board = leaderboard(combined.rows, by=by, replicates=replicates, prices=prices)
    return write_html(folder, combined, board, title, runs=runs, baseline=baseline, tolerance=tolerance,
                      questions=questions, replicates=replicates, prices=prices)


def write_html(folder: Path, combined: Combined, board: Sequence, title: str, *, runs: Sequence,
               baseline: str = analysis.MARKET_PRICE, tolerance: float = analysis.TOLERANCE,
               questions: Mapping[str, str] | None = None, replicates: int = bootstrap.REPLICATES,
               prices: PriceTable | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "report.html"
    analysis.check_baseline(combined.rows, baseline)
    sections = [summary(combined, board), fraction_section(combined.rows), reliability_section(combined.rows),
                topic_section(combined.rows, baseline, tolerance, questions or {}),
                regime_section(leaderboard(combined.rows, by="regime", replicates=replicates, prices=prices)),
                provenance_section(runs)]
    write_text_atomic(path, page(title, sections))
    return path


def page(title: str, sections: Sequence[str]) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{escape(assets.CSP)}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title><style>{assets.CSS}</style></head>\n<body>"
            f"<h1>{escape(title)}</h1>\n" + "\n".join(sections) + f"\n<script>{assets.JS}</script></body></html>\n")


def td(value, shown: str | None = None, text: bool = False) -> str:
    """A cell whose data-value sorts exactly (repr of floats) and whose text is rounded for reading."""
    raw = "" if value is None else (repr(value) if isinstance(value, float) else str(value))
    return f'<td{TEXT if text else ""} data-value="{escape(raw)}">{escape(cell(value) if shown is None else shown)}</td>'


def sortable(headers: Sequence[tuple[str, bool]], rows: Sequence[Sequence[str]], table_id: str = "") -> str:
    head = "".join(f'<th{TEXT if text else ""} scope="col">{escape(h)}</th>' for h, text in headers)
    body = "".join("<tr>" + "".join(cells) + "</tr>" for cells in rows)
    ident = f' id="{table_id}"' if table_id else ""
    return f'<div class="scroll"><table class="sortable"{ident}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def board_cell(row, key: str) -> str:
    column = display.COLUMNS[key]
    value = column.text(row) if column.sort is None else getattr(row, column.sort)
    return td(value, column.text(row), column.is_text)


def board_table(board: Sequence, table_id: str) -> str:
    columns = [c for c in BOARD_COLUMNS if c != "slice" or any(r.slice != "all" for r in board)]
    rows = [[board_cell(r, key) for key in columns] for r in board]
    return sortable([(display.COLUMNS[c].header, display.COLUMNS[c].is_text) for c in columns], rows, table_id)


def summary(combined: Combined, board: Sequence) -> str:
    legend = "".join(f'<p class="note">{escape(line)}</p>' for line in display.LEGEND)
    return ("<section id=\"leaderboard\"><h2>Leaderboard</h2>"
            f'<p class="note" id="matching">{escape(combined.note())}.</p>'
            '<p class="note">Failed forecasts are counted, never imputed. Click a column heading to sort.</p>'
            + board_table(board, "board") + f'<div id="legend">{legend}</div></section>')


def fraction_section(rows: Sequence) -> str:
    curves = analysis.fraction_curves(rows)
    market = analysis.market_curve(rows)
    if not curves:
        return ('<section id="fractions"><h2>Brier by lifetime fraction</h2><p class="note">No cutoffs at lifetime '
                "fractions in these runs (only explicit instants).</p></section>")
    chart = plots.fraction_chart({n: [(p.fraction, p.brier) for p in c] for n, c in curves.items()},
                                 [(p.fraction, p.brier) for p in market])
    return ('<section id="fractions"><h2>Brier by lifetime fraction</h2><p class="note">Mean Brier of each '
            "forecaster at each lifetime fraction of the market (0 = opened, 1 = the day before resolution), and "
            "the market's own price at the same t0 (dashed; over the (market, t0) rows that had a price).</p>"
            + chart + fraction_table(curves, market) + "</section>")


def fraction_table(curves: Mapping, market: Sequence) -> str:
    fractions = sorted({p.fraction for c in curves.values() for p in c} | {p.fraction for p in market})
    series = {**{n: {p.fraction: p for p in c} for n, c in curves.items()}, "market price at t0": {p.fraction: p for p in market}}
    headers = [("forecaster", True)] + [(f"f={f:g}", False) for f in fractions]
    rows = [[td(name, text=True)] + [td(s[f].brier if f in s else None) for f in fractions] for name, s in series.items()]
    return sortable(headers, rows, "fraction-table")


def reliability_section(rows: Sequence) -> str:
    tables = analysis.reliability(rows)
    diagrams = "".join(plots.reliability_diagram(name, bins, i) for i, (name, bins) in enumerate(tables.items()))
    return ('<section id="reliability"><h2>Reliability</h2><p class="note">Observed frequency of YES against the '
            "mean forecast in 10 equal-width bins of p (circle area grows with the bin's count); a calibrated "
            "forecaster lies on the dashed diagonal.</p>" f'<div class="grid-plots">{diagrams}</div></section>')


def topic_section(rows: Sequence, baseline: str, tolerance: float, questions: Mapping[str, str]) -> str:
    parts = [f'<section id="topics"><h2>Recovered and regressed markets by topic, against {escape(baseline)}</h2>',
             f'<p class="note" id="definition">For each forecaster F and the baseline B ({escape(baseline)}), a '
             "market is compared on its (market, t0) rows where both have a probability, by the mean Brier over "
             f"those rows. It is <b>recovered</b> when F's mean Brier is lower than B's by more than {tolerance:g}, "
             f"<b>regressed</b> when it is higher by more than {tolerance:g}, and tied otherwise. A topic's net is "
             "recovered − regressed markets.</p>"]
    for name in analysis.forecasters(rows):
        if name != baseline:
            parts.append(topic_block(name, analysis.market_verdicts(rows, name, baseline, tolerance), baseline, questions))
    return "".join(parts) + "</section>"


def topic_block(name: str, verdicts: Sequence, baseline: str, questions: Mapping[str, str]) -> str:
    nets = analysis.topic_net(verdicts)
    headers = [("topic", True), ("recovered", False), ("regressed", False), ("tied", False), ("net", False)]
    rows = [[td(n.topic, text=True), td(n.recovered), td(n.regressed), td(n.tied), td(n.net)] for n in nets]
    return (f"<h3>{escape(name)}</h3>" + plots.net_bars(nets, name, baseline) + sortable(headers, rows)
            + market_details(verdicts, questions))


def market_details(verdicts: Sequence, questions: Mapping[str, str]) -> str:
    headers = [("market", True), ("question", True), ("topic", True), ("rows", False), ("Brier", False),
               ("baseline Brier", False), ("verdict", True)]
    rows = [[td(v.market_id, text=True), td(questions.get(v.market_id, ""), text=True), td(v.topic, text=True),
             td(v.n_rows), td(v.brier), td(v.baseline_brier),
             f'<td class="text verdict-{v.verdict}" data-value="{v.verdict}">{v.verdict}</td>'] for v in verdicts]
    return f"<details><summary>{len(verdicts)} markets</summary>{sortable(headers, rows)}</details>"


def regime_section(board: Sequence) -> str:
    labelled = any(r.slice != "regime=n/a" for r in board)
    note = "" if labelled else (" No forecaster in these runs has a knowledge cutoff in the model registry, so "
                                "every row is n/a.")
    return ('<section id="regimes"><h2>Knowledge-cutoff regimes (T1/T2)</h2>'
            f'<p class="note">{escape(REGIMES + note)}</p>' + board_table(board, "regime-board") + "</section>")


def provenance_section(runs: Sequence) -> str:
    return '<section id="provenance"><h2>Run provenance</h2>' + "".join(run_block(r) for r in runs) + "</section>"


def run_block(run) -> str:
    manifest = run.manifest
    store = manifest.get("market_store", {})
    facts = [("run", run.run_id), ("market store version", store.get("version")), ("market store", store.get("root")),
             ("git revision", manifest.get("git_revision")), ("python", manifest.get("python")),
             ("scoring policies", _compact(manifest.get("scoring_policies"))), ("packages", _compact(manifest.get("packages")))]
    items = "".join(f"<dt>{escape(k)}</dt><dd>{escape(str(v))}</dd>" for k, v in facts)
    full = escape(json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False))
    return (f"<h3>{escape(run.run_id)}</h3><dl class=\"provenance\">{items}</dl>"
            f"<details><summary>full manifest</summary><pre>{full}</pre></details>")


def _compact(value) -> str:
    if not isinstance(value, dict):
        return str(value)
    return ", ".join(f"{k}={v}" for k, v in sorted(value.items()))
