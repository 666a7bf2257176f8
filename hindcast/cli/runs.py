"""`hindcast runs list|show` and `hindcast rescore`: read stored runs; never call a model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(help="Stored runs: list them, show one.", no_args_is_help=True)

_OUT = typer.Option(Path("runs"), "--out", help="The folder holding hindcast.db.")
_DB = typer.Option(None, "--db", help="Run database URL [default: sqlite:///OUT/hindcast.db].")


def _store(out: Path, db: Optional[str]):
    from hindcast.runs.store import RunStore, default_url

    return RunStore(db or default_url(out))


@app.command("list")
def list_runs(out: Path = _OUT, db: Optional[str] = _DB, as_json: bool = typer.Option(False, "--json")) -> None:
    """Every stored run: id, creation time, forecasters, markets, forecasts stored."""
    store = _store(out, db)
    rows = [_summary(store, run) for run in store.runs()]
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    from rich.table import Table

    from hindcast.cli.console import out_console

    table = Table(title=f"runs in {store.url}")
    for column in ("run", "created", "forecasters", "markets", "forecasts", "failed", "outages"):
        table.add_column(column)
    for r in rows:
        table.add_row(r["run"], r["created_at"], ", ".join(r["forecasters"]), str(r["markets"]), str(r["forecasts"]),
                      str(r["failed"]), str(r["outages"]))
    out_console().print(table)


@app.command("show")
def show(run_id: str, out: Path = _OUT, db: Optional[str] = _DB, as_json: bool = typer.Option(False, "--json"),
         prices: Optional[Path] = typer.Option(None, "--prices", help="TOML of model = { input = $, output = $ } per million tokens, over the shipped price table.")) -> None:
    """One run: its manifest (provenance), failure reasons, usage and cost per forecaster, and
    infrastructure attempts (outages: never stored as forecasts, asked again by the next run)."""
    from hindcast.scoring.costs import load_prices

    store = _store(out, db)
    run = store.run(run_id)
    detail = {**_summary(store, run), "manifest": json.loads(run.manifest_json), "failures": _failures(store, run_id),
              "usage": usage_by_forecaster(store.forecasts(run_id, all_attempts=True), load_prices(prices)),
              "attempts": [_attempt(a) for a in store.attempts(run_id)]}
    print(json.dumps(detail, indent=2, ensure_ascii=False) if as_json else _text(detail))


USAGE_FIELDS = ("requests", "cache_hits", "prompt_tokens", "completion_tokens", "retries", "latency_s")


def usage_by_forecaster(stored, prices) -> dict[str, dict]:
    """Per forecaster, over every stored attempt: requests, cache hits, tokens in/out,
    retries, latency and dollars ("unknown" when a model has no price; never 0 for it)."""
    totals: dict[str, dict] = {}
    for f in stored:
        usage = f.forecast.usage or {}
        t = totals.setdefault(f.forecaster, {**{k: 0 for k in USAGE_FIELDS}, "cost_usd": 0.0})
        for key in USAGE_FIELDS:
            t[key] += usage.get(key) or 0
        t["latency_s"] = round(t["latency_s"], 3)
        if usage.get("model_name") is not None and t["cost_usd"] != "unknown":
            cost = prices.cost(usage["model_name"], usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0)
            t["cost_usd"] = "unknown" if cost is None else round(t["cost_usd"] + cost, 6)
    return dict(sorted(totals.items()))


def _attempt(row) -> dict:
    return {"forecaster": row.forecaster, "market": row.market_id, "t0": row.t0, "repeat": row.repeat,
            "kind": row.kind, "reason": row.reason, "at": row.at}


def rescore(
    run_id: str,
    by: Optional[str] = typer.Option(None, "--by", help="Slice: topic, fraction, regime or coverage."),
    models: Optional[Path] = typer.Option(None, "--models", help="TOML of model = knowledge-cutoff date, over the shipped registry."),
    out: Path = _OUT, db: Optional[str] = _DB,
) -> None:
    """Score a stored run again from its stored forecasts alone (no model is called)."""
    from hindcast import api
    from hindcast.cli.common import fail
    from hindcast.cli.console import leaderboard_table, out_console
    from hindcast.scoring.aggregate import SLICES

    if by is not None and by not in SLICES:
        raise fail(f"--by {by!r}: use one of {', '.join(SLICES)}", code=2)
    board = api.score_run(_store(out, db), run_id, by=by, models=models)
    out_console().print(leaderboard_table(board, title=f"run {run_id}, re-scored from stored forecasts"))


def _summary(store, run) -> dict:
    forecasts = store.forecasts(run.id)
    identity = json.loads(run.spec_json)
    return {"run": run.id, "created_at": run.created_at, "forecasters": identity.get("forecasters", []),
            "markets": len(identity.get("markets", [])), "forecasts": len(forecasts),
            "failed": sum(1 for f in forecasts if not f.forecast.ok), "outages": len(store.attempts(run.id))}


def _failures(store, run_id: str) -> dict[str, int]:
    reasons: dict[str, int] = {}
    for f in store.forecasts(run_id):
        if not f.forecast.ok:
            key = f"{f.forecaster}: {f.forecast.error[:120]}"
            reasons[key] = reasons.get(key, 0) + 1
    return dict(sorted(reasons.items()))


def _text(detail: dict) -> str:
    m = detail["manifest"]
    lines = [f"run {detail['run']} created {detail['created_at']}",
             f"forecasts stored: {detail['forecasts']} ({detail['failed']} failed)",
             f"market store: {m['market_store']['version']} at {m['market_store']['root']}",
             f"archive snapshot: {m['identity'].get('snapshot') or 'none'}",
             f"hindcast revision: {m.get('git_revision')}; python {m.get('python')}",
             "forecasters:"] + [f"  {name}: {json.dumps(d)}" for name, d in m.get("forecasters", {}).items()]
    lines += ["failures:"] + [f"  {n} × {reason}" for reason, n in detail["failures"].items()] if detail["failures"] else []
    lines += ["usage (every stored attempt):"] + [f"  {name}: " + ", ".join(f"{k} {v}" for k, v in u.items())
                                                  for name, u in detail["usage"].items()]
    attempts = detail["attempts"]
    lines += [f"infrastructure attempts: {len(attempts)} (outages: not forecasts; the next run asks again)"]
    lines += [f"  {a['at']} {a['forecaster']} {a['market']} t0 {a['t0']} #{a['repeat']}: {a['reason'][:200]}"
              for a in attempts[-50:]]
    return "\n".join(lines)
