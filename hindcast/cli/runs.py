"""`hindcast runs list|show` and `hindcast rescore`: read stored runs; never call a model.

Read-only: the run database is opened without creating it, its tables or its folder
(`RunStore(read_only=True)`); a missing database is "no run database at …" (exit 1 for
`runs show` and `rescore`; `runs list` prints that there are no runs and exits 0).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from hindcast import api, audit, replay, runs, scoring
from hindcast.cli.common import DB_HELP, RECALL_FILE_HELP, RECALL_HELP, fail
from hindcast.cli.console import leaderboard_table, out_console
from hindcast.errors import NoRunDatabase
from hindcast.http import redact

app = typer.Typer(
    help="Stored runs: list them, show one.", no_args_is_help=True, rich_markup_mode=None
)

_DB = typer.Option(None, "--db", help=DB_HELP)
_PRICES = typer.Option(
    None,
    "--prices",
    help="TOML of model = { input = $, output = $ } per million tokens, over "
    "the shipped price table [default: the shipped table].",
)


def _store(db: Optional[str]):
    """The run database, opened read-only."""
    return runs.RunStore(runs.db_url(db), read_only=True)


@app.command("list")
def list_runs(
    db: Optional[str] = _DB,
    as_json: bool = typer.Option(False, "--json", help="One JSON array on stdout [default: off]."),
) -> None:
    """Every stored run: id, creation time, forecasters, markets, forecasts stored. With no
    run database, says so and exits 0 (nothing is created)."""

    try:
        store = _store(db)
    except NoRunDatabase as exc:
        print("[]" if as_json else f"no runs: {exc}")
        return
    rows = [_summary(store, run) for run in store.runs()]
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    from rich.table import Table

    table = Table(title=f"runs in {redact(store.url)}")
    for column in ("run", "created", "forecasters", "markets", "forecasts", "failed", "outages"):
        table.add_column(column)
    for r in rows:
        table.add_row(
            r["run"],
            r["created_at"],
            ", ".join(r["forecasters"]),
            str(r["markets"]),
            str(r["forecasts"]),
            str(r["failed"]),
            str(r["outages"]),
        )
    out_console().print(table)


@app.command("show")
def show(
    run_id: str = typer.Argument(..., help="Run id, as `hindcast runs list` shows it."),
    db: Optional[str] = _DB,
    as_json: bool = typer.Option(
        False, "--json", help="One JSON document on stdout [default: off]."
    ),
    prices: Optional[Path] = _PRICES,
) -> None:
    """One run: its manifest (provenance), failure reasons, usage and cost per forecaster, and
    infrastructure attempts (outages: never stored as forecasts, asked again by the next run)."""
    table = scoring.load_prices(prices)
    store = _store(db)
    run = store.run(run_id)
    usage = scoring.summarize(store.forecasts(run_id, all_attempts=True), table)
    detail = {
        **_summary(store, run),
        "manifest": json.loads(run.manifest_json),
        "failures": _failures(store, run_id),
        "usage": {name: _usage(u) for name, u in usage.items()},
        "attempts": [_attempt(a) for a in store.attempts(run_id)],
    }
    print(json.dumps(detail, indent=2, ensure_ascii=False) if as_json else _text(detail))


USAGE_FIELDS = (
    "requests",
    "cache_hits",
    "prompt_tokens",
    "completion_tokens",
    "retries",
    "latency_s",
)


def _usage(summary) -> dict:
    """A forecaster's usage over every stored attempt (`scoring.usage.summarize`): None where
    not recorded; `cost` is its text ("unknown" when unpriced, "—" without a model)."""
    import dataclasses

    return {**dataclasses.asdict(summary), "cost": summary.cost_text()}


def _attempt(row) -> dict:
    return {
        "forecaster": row.forecaster,
        "market": row.market_id,
        "t0": row.t0,
        "repeat": row.repeat,
        "kind": row.kind,
        "reason": row.reason,
        "at": row.at,
    }


def rescore(
    run_id: str = typer.Argument(..., help="Run id, as `hindcast runs list` shows it."),
    by: Optional[str] = typer.Option(
        None,
        "--by",
        help="Slice: topic, fraction, regime, coverage, policy or venue [default: no slice].",
    ),
    models: Optional[Path] = typer.Option(
        None,
        "--models",
        help="TOML of model = knowledge-cutoff date, over the "
        "shipped registry [default: the shipped registry].",
    ),
    db: Optional[str] = _DB,
    prices: Optional[Path] = _PRICES,
    as_json: bool = typer.Option(
        False,
        "--json",
        help="One JSON document on stdout (run id, counts, leaderboard rows) [default: off].",
    ),
    exclude_recalled: bool = typer.Option(False, "--exclude-recalled", help=RECALL_HELP),
    recall: Optional[Path] = typer.Option(None, "--recall", metavar="FILE", help=RECALL_FILE_HELP),
) -> None:
    """Score a stored run again from its stored forecasts alone (no model is
    called; nothing is written)."""
    if by is not None and by not in scoring.SLICES:
        raise fail(f"--by {by!r}: use one of {', '.join(scoring.SLICES)}", code=2)
    table = scoring.load_prices(prices)
    scores = api.rescore(_store(db), run_id, model_cutoffs=models)
    excluded: list[str] = []
    if exclude_recalled:
        [scores], excluded = audit.exclude_recalled_runs(
            [scores], recall or audit.default_recall_path(runs.db_url(db))
        )
    board = replay.leaderboard_of(scores, by=by, prices=table)
    if as_json:
        document = rescore_document(scores, board)
        print(
            json.dumps(
                {**document, "excluded": excluded} if exclude_recalled else document,
                indent=2,
                ensure_ascii=False,
                allow_nan=False,
            )
        )
        return
    out_console().print(
        leaderboard_table(board, title=f"run {run_id}, re-scored from stored forecasts")
    )
    for note in excluded:
        out_console().print(f"excluded: {note}", highlight=False)


def rescore_document(scores, board) -> dict:
    """`rescore --json`: the run id, counts, every leaderboard column and the scoring policies that
    scored them."""
    rows = scores.rows
    return {
        "run_id": scores.run_id,
        "forecasts": len(rows),
        "failed": sum(1 for r in rows if r.probability is None),
        "markets": len({r.market_id for r in rows}),
        "leaderboard": replay.board_json(board),
        "scoring_policies": scores.policies,
    }


def _summary(store, run) -> dict:
    forecasts = store.forecasts(run.id)
    identity = runs.identity_of(json.loads(run.spec_json))
    return {
        "run": run.id,
        "created_at": run.created_at,
        "forecasters": list(identity.forecasters),
        "markets": len(identity.markets),
        "forecasts": len(forecasts),
        "failed": sum(1 for f in forecasts if not f.forecast.ok),
        "outages": len(store.attempts(run.id)),
    }


def _failures(store, run_id: str) -> dict[str, int]:
    reasons: dict[str, int] = {}
    for f in store.forecasts(run_id):
        if not f.forecast.ok:
            key = f"{f.forecaster}: {f.forecast.error[:120]}"
            reasons[key] = reasons.get(key, 0) + 1
    return dict(sorted(reasons.items()))


def _text(detail: dict) -> str:
    m = detail["manifest"]
    lines = [
        f"run {detail['run']} created {detail['created_at']}",
        f"forecasts stored: {detail['forecasts']} ({detail['failed']} failed)",
        f"market store: {m['market_store']['version']} at {m['market_store']['root']}",
        f"archive snapshot: {m['identity'].get('snapshot') or 'none'}",
        f"hindcast revision: {m.get('git_revision')}; python {m.get('python')}",
        "forecasters:",
    ] + [f"  {name}: {json.dumps(d)}" for name, d in m.get("forecasters", {}).items()]
    lines += (
        ["failures:"] + [f"  {n} × {reason}" for reason, n in detail["failures"].items()]
        if detail["failures"]
        else []
    )
    lines += ["usage (every stored attempt):"] + [
        f"  {name}: {_usage_text(u)}" for name, u in detail["usage"].items()
    ]
    attempts = detail["attempts"]
    lines += [
        f"infrastructure attempts: {len(attempts)} (outages: not forecasts; the next run "
        "asks again)"
    ]
    lines += [
        f"  {a['at']} {a['forecaster']} {a['market']} t0 {a['t0']} #{a['repeat']}: "
        f"{a['reason'][:200]}"
        for a in attempts[-50:]
    ]
    return "\n".join(lines)


def _usage_text(u: dict) -> str:
    if u["cost_status"] == "no model":
        return f"no model ({u['n_forecasts']} forecasts)"
    shown = ", ".join(f"{k} {_or_not_recorded(u[k])}" for k in USAGE_FIELDS)
    return f"{shown}, cost {u['cost']}" + (
        f" (no price for {', '.join(u['unpriced'])})" if u["unpriced"] else ""
    )


def _or_not_recorded(value) -> str:
    if value is None:
        return "not recorded"
    return f"{value:.3f}" if isinstance(value, float) else str(value)
