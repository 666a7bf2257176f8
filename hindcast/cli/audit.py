"""`hindcast audit RUN`: judge, with leak detectors, every document each forecaster of a stored
run read and every rationale, against the question as it stood at t0; report per forecaster the
documents read and flagged, the forecasts that saw a flagged text, and the Brier with and
without them (paired, market-clustered intervals).

An unknown run or detector is refused before anything is opened for writing. Verdicts and the
finished audit are kept in audits.db beside the run database (the run database is only read),
so a second audit calls no detector and the report shows the audit. An unreachable judge
model stops the audit with exit 4 (re-run to resume), never a verdict.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from hindcast import audit as audits
from hindcast import replay, runs
from hindcast.cli.common import DB_HELP
from hindcast.cli.console import out_console

_DETECTOR = typer.Option(
    [],
    "--detector",
    metavar="SPEC",
    help="A leak detector: lexical, judge:model=local, "
    "judge:model=openai/gpt-4o-mini, cascade:lexical>judge:model=local (the judge only on what "
    "lexical leaves undecided) … (repeatable) [default: lexical].",
)
_ARCHIVE = typer.Option(
    None,
    "--archive",
    metavar="DIR",
    help="The archive folder holding the snapshot the run "
    "recorded [default: the folder the run recorded].",
)


def audit(
    run_id: str = typer.Argument(
        ..., metavar="RUN", help="Run id, as `hindcast runs list` shows it."
    ),
    detector: list[str] = _DETECTOR,
    as_json: bool = typer.Option(
        False,
        "--json",
        help="One JSON document on stdout: per-forecaster figures and "
        "every flagged text with each detector's verdict.",
    ),
    db: Optional[str] = typer.Option(
        None, "--db", metavar="PATH|URL", help=DB_HELP + " Read, never created."
    ),
    archive: Optional[Path] = _ARCHIVE,
    claims: bool = typer.Option(
        False,
        "--claims",
        help="Also judge each sentence of every rationale: the flagged sentences per forecast, "
        "weighted by stance × (p − market price at t0), and a summary per forecaster.",
    ),
) -> None:
    """Audit a stored run for outcome leaks in what its forecasters read and wrote."""
    specs = audits.check_detectors(detector)  # an unknown detector: one line, nothing opened
    # a missing file: one line, never created
    store = runs.RunStore(runs.db_url(db), read_only=True)
    try:
        store.run(run_id)  # an unknown run: one line, nothing written
        result = audits.audit(
            store,
            run_id,
            specs,
            archive=archive,  # the response cache opens once all is checked
            open_models=lambda: replay.default_models(store, Path("runs")),
            claims=claims,
        )
    finally:
        store.close()
    if as_json:
        print(json.dumps(result.to_json(), indent=2, ensure_ascii=False, allow_nan=False))
        return
    _print(result)


def _print(result) -> None:
    """The audit as one compact table (every figure is in --json), its notes
    and the flagged texts."""
    from rich.table import Table

    table = Table(title=result.finding.title, title_justify="left")
    for column in (
        "forecaster",
        "detector",
        "forecasts (failed)",
        "docs read / withheld / missing",
        "docs flagged (reveals / after t0)",
        "forecasts flagged: evidence / rationale / any",
        "Brier all",
        "Brier clean",
        "all − clean [95%]",
        "flagged − market [95%]",
    ):
        table.add_column(column, overflow="fold")
    for row in result.to_json()["forecasters"]:
        table.add_row(*_cells(row))
    console = out_console()
    console.print(table)
    for note in result.finding.notes:
        console.print(f"  · {note}", highlight=False, markup=False)
    console.print(
        f"{len(result.flagged)} flagged text(s); verdicts: {result.judged} judged now, "
        f"{result.cached} from the cache",
        highlight=False,
    )
    for item in result.flagged:
        what = f"document {item['doc_id']}" if item["kind"] == "document" else "rationale"
        console.print(
            f"  {item['forecaster']} · {item['market']} · {item['t0']} · {what}: {item['label']}",
            highlight=False,
            markup=False,
        )
    if result.claims is not None:
        _print_claims(result.claims, console)


def _print_claims(said: dict, console) -> None:
    """The claim-level section: a summary per forecaster, then each flagged sentence."""
    from rich.table import Table

    table = Table(title="Rationale claims stating a fact after t0", title_justify="left")
    for column in audits.CLAIM_COLUMNS:
        table.add_column(column.replace("_", " "), overflow="fold")
    for row in said["summary"]:
        table.add_row(*(_claim_cell(row[c]) for c in audits.CLAIM_COLUMNS))
    console.print(table)
    for note in said["notes"]:
        console.print(f"  · {note}", highlight=False, markup=False)
    for entry in (e for e in said["forecasts"] if e["flagged"]):
        for claim in entry["flagged"]:
            console.print(
                f"  {entry['forecaster']} · {entry['market']} · {entry['t0']} · claim "
                f"{claim['index']} ({claim['label']}, weight {_claim_cell(claim['weight'])}): "
                f"{claim['claim']}",
                highlight=False,
                markup=False,
            )


def _claim_cell(value) -> str:
    if value is None:
        return "–"
    return f"{value:+.4f}" if isinstance(value, float) else str(value)


def _cells(r: dict) -> tuple[str, ...]:
    return (
        r["forecaster"],
        r["detector"],
        f"{r['forecasts']} ({r['failed']})",
        f"{r['docs_read']} / {r['docs_withheld']} / {r['docs_missing']}",
        f"{r['docs_flagged']} ({r['reveals_outcome']} / {r['after_t0']})",
        f"{r['evidence_flagged']} / {r['rationales_flagged']} / {r['flagged_forecasts']}",
        _num(r["brier_all"]),
        _num(r["brier_clean"]),
        _with_interval(r["all_minus_clean"], r["delta_low"], r["delta_high"]),
        _with_interval(r["flagged_minus_market"], r["vs_market_low"], r["vs_market_high"]),
    )


def _num(value) -> str:
    return "–" if value is None else f"{value:.4f}"


def _with_interval(value, low, high) -> str:
    if value is None:
        return "–"
    return f"{value:+.4f} [{_num(low)}, {_num(high)}]" if low is not None else f"{value:+.4f}"
