"""`hindcast markets pull --venue manifold`: the pull, its counts as text or JSON."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from hindcast.cli.common import now


def pull_manifold(store: Path, url, when, limit, http: tuple, as_json: bool, progress):
    """Pull into `store`; prints the summary; returns its PullCounts. `when`: (since, until);
    `http`: (timeout, attempts, requests per minute or None, page size or None)."""
    from hindcast.api import pull
    from hindcast.markets import ManifoldQuery

    timeout, attempts, per_minute, page = http
    options = {"manifold_url": url, "attempts": attempts, "timeout": timeout}
    options |= {"per_minute": per_minute} if per_minute else {}
    options |= {"page_limit": page} if page else {}
    summary = pull(
        store,
        ManifoldQuery(*when, limit),
        now=now(),
        progress=progress,
        **options,
    )
    if as_json:
        typer.echo(json.dumps(summary.as_dict(store), indent=2))
    else:
        _print(store, summary)
    if summary.incomplete:
        typer.echo(
            f"hindcast: warning: {len(summary.incomplete)} stored Manifold market(s) have no bet "
            "(no price point in their life)",
            err=True,
        )
    return summary.counts()


def _print(store: Path, s) -> None:
    counts = s.counts()
    typer.echo(f"pulled {s.stored} Manifold market(s) into {store} (version {s.version})")
    typer.echo(
        f"  listed {counts.listed}; stored {counts.stored}; skipped {counts.skipped_total}; "
        f"failed {counts.failed}; {s.fractional} stored with a fractional (MKT) outcome"
    )
    typer.echo(
        f"  bets: {s.histories_fetched} market(s) fetched ({s.bets_read} bets), "
        f"{s.histories_cached} from the pull cache, {s.histories_reused} reused from the store; "
        f"{len(s.incomplete)} market(s) without any bet"
    )
    reasons = "".join(f"\n    {n} × {why}" for why, n in sorted(s.skipped.items()))
    typer.echo(f"  skipped {counts.skipped_total}{reasons}")
    typer.echo(f"  failed {counts.failed}" + "".join(f"\n    {line}" for line in s.failed))
