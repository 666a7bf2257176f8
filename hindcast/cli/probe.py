"""`hindcast probe recall -f SPEC …`: the memorisation probe — does a model already know how
the markets resolved? Asks each model, without documents, plainly after resolution and at
the market's t0 (told to use only earlier knowledge); prints the share of markets whose
outcome it names correctly and confidently, per model and regime; stores every answer in
the probe results file (what `--exclude-recalled` reads). Answers come from the response
cache when asked before; an unreachable model stores nothing for the questions it missed
and exits 4 (re-run to ask them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer

from hindcast import audit, runs
from hindcast.cli.analyze import _print
from hindcast.cli.common import DB_HELP, default_sample
from hindcast.cli.console import out_console

app = typer.Typer(
    help="Memorisation probes: what a model knows without documents.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@app.command("recall")
def recall(
    forecasters: list[str] = typer.Option(
        ...,
        "--forecaster",
        "-f",
        help="A forecaster spec whose model is probed "
        "(zero-shot:model=local, zero-shot:model=openai:gpt-4.1-mini) or a model "
        "spec (local, openai:MODEL, openai-compatible:URL#MODEL); repeatable.",
    ),
    store: Optional[Path] = typer.Option(
        None, "--store", help="Market store directory [default: the shipped sample]."
    ),
    version: Optional[str] = typer.Option(
        None, "--store-version", help="Store version id [default: LATEST]."
    ),
    ids: Optional[list[str]] = typer.Option(
        None,
        "--market",
        "-m",
        help="Only this market id (repeatable) [default: every Yes/No market].",
    ),
    limit: Optional[int] = typer.Option(
        None, "--limit", min=1, help="At most N markets (first by id) [default: no limit]."
    ),
    fraction: float = typer.Option(
        0.5,
        "--fraction",
        help="The probe's t0 as a lifetime fraction of each market "
        "(1.0 = the day before resolution).",
    ),
    db: Optional[str] = typer.Option(
        None,
        "--db",
        metavar="PATH|URL",
        help=DB_HELP + " Only locates the response "
        "cache (responses.db) and the default results file beside it; never created (a "
        "PostgreSQL run database keeps both in its own tables).",
    ),
    recall_file: Optional[Path] = typer.Option(
        None,
        "--recall",
        metavar="FILE",
        help="The probe results file (what --recall of leaderboard and runs reads), merged "
        "with what it holds [default: recall.json beside the run database; a PostgreSQL run "
        "database keeps them in its table probe_answers].",
    ),
    registry: Optional[Path] = typer.Option(
        None,
        "--models",
        metavar="FILE",
        help="Model-cutoff registry (TOML) laid "
        "over the shipped one, for the regimes [default: the shipped registry].",
    ),
    no_cache: bool = typer.Option(
        False,
        "--no-cache",
        help="Ask again instead of replaying cached answers (answers "
        "are still recorded) [default: off].",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="One JSON document on stdout instead of the table."
    ),
) -> None:
    """Probe models for outcomes they already know; store the answers; print the rates
    per model and regime."""

    url = runs.db_url(db)
    results = recall_file or audit.default_recall_path(url)
    folder = results.parent if isinstance(results, Path) else None  # PostgreSQL: its own cache
    run = audit.probe_recall(
        forecasters,
        store or default_sample("markets"),
        results=results,
        version=version,
        ids=ids or (),
        limit=limit,
        fraction=fraction,
        registry=registry,  # all checked, then:
        open_models=lambda: audit.probe_models(url, folder, no_cache=no_cache),
    )
    if as_json:
        print(json.dumps(run.to_json(), indent=2, ensure_ascii=False, allow_nan=False))
        return
    _report(run)


def _report(run: Any) -> None:  # audit's RecallRun (not on the audit face)

    _print(run.finding)
    console = out_console()
    failures = sum(not a.ok for a in run.result.answers)
    console.print(
        f"{run.markets} market(s), {len(run.models)} model(s): {len(run.result.answers)} "
        f"answer(s), {failures} unreadable (counted, never imputed); results: "
        f"{run.to_json()['results']}",
        highlight=False,
    )
    for line in run.result.skipped:
        console.print(f"skipped {line}", highlight=False)
