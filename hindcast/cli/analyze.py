"""`hindcast analyze RUN…`: the analyses of stored runs (no model is called, nothing is
written but the evidence strata): strata, the evidence strata (docs/evidence-strata.md: read
from the run database's `analyses` table, else computed in batches from the run's archive and
the model-free detector, never by a forecaster, and kept there),
difficulty-adjusted scores, aggregates of repeats, the defer-to-the-market
rule and walk-forward calibration (split at an instant); then the research figures
(hindcast.analysis): time-averaged scores, market-relative log score, pairwise relative skill, CORP
reliability, the mixture test, price convergence, event units and coherence — as tables
or one JSON document."""

from __future__ import annotations

import json
from typing import Optional

import typer

from hindcast import api
from hindcast.cli.common import DB_HELP, EXIT_USAGE, fail
from hindcast.cli.console import out_console
from hindcast.cli.leaderboard import open_existing
from hindcast.timeutil import parse_utc


def analyze(
    runs: list[str] = typer.Argument(
        ..., metavar="RUN...", help="Run id(s); several are matched on (market, t0)."
    ),
    split: Optional[str] = typer.Option(
        None,
        "--split",
        metavar="INSTANT",
        help="Walk-forward split: rules and "
        "calibrators are fitted on markets whose outcome was public before it and "
        "scored on the rest [default: the median market's public instant].",
    ),
    db: Optional[str] = typer.Option(
        None, "--db", metavar="PATH|URL", help=DB_HELP + " Read, never created."
    ),
    as_json: bool = typer.Option(
        False, "--json", help="One JSON document on stdout instead of tables."
    ),
    baseline: str = typer.Option(
        "market price",
        "--baseline",
        metavar="NAME",
        help="Relative skill is scaled so that this forecaster (or the market's price) is 1.",
    ),
    threshold: float = typer.Option(
        0.10,
        "--threshold",
        min=0.0,
        max=1.0,
        help="Price convergence: a forecast "
        "at least this far from the price at t0 disagrees with it.",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of every resample and permutation."),
    ray: Optional[str] = typer.Option(
        None,
        "--ray",
        metavar="ADDRESS",
        help="Evidence strata: search the archive on this Ray cluster.",
    ),
) -> None:
    """Analyse stored runs from their stored forecasts alone (no model is
    called; nothing is written)."""
    instant = _split(split)
    settings = {"baseline": baseline, "threshold": threshold, "seed": seed}
    findings = api.analyze(open_existing(db), runs, split=instant, ray=ray, **settings)
    if as_json:
        document = {
            "runs": list(runs),
            "split": split,
            "settings": settings,
            "findings": [f.to_json() for f in findings],
        }
        print(json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False))
        return
    for finding in findings:
        _print(finding)


def _split(text: str | None):

    try:
        return parse_utc(text) if text else None
    except ValueError as exc:
        raise fail(f"--split {text!r}: {exc}", EXIT_USAGE) from None


def _print(finding) -> None:
    from rich.table import Table

    table = Table(title=finding.title, title_justify="left")
    for column in finding.columns:
        table.add_column(column, overflow="fold")
    for row in finding.rows:
        table.add_row(*(_cell(v) for v in row))
    console = out_console()
    console.print(table)
    for note in finding.notes:
        console.print(f"  · {note}", highlight=False)


def _cell(value) -> str:
    if value is None:
        return "–"
    return f"{value:.4g}" if isinstance(value, float) else str(value)
