"""`hindcast markets pull` across venues (the --venue check; Manifold's pull and counts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from hindcast import markets
from hindcast.api import pull
from hindcast.cli.common import now
from hindcast.http import carried_credential


def pull_manifold(store: Path, url, when, limit, http: tuple, as_json: bool, progress):
    """Pull into `store`; prints the summary; returns its PullCounts. `when`: (since, until);
    `http`: (timeout, attempts, requests per minute or None, page size or None)."""
    timeout, attempts, per_minute, page = http
    options = {"manifold_url": url, "attempts": attempts, "timeout": timeout}
    options |= {"per_minute": per_minute} if per_minute else {}
    options |= {"page_limit": page} if page else {}
    summary = pull(
        store,
        markets.ManifoldQuery(*when, limit),
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
    version = f"version {s.version}" if s.version else "no version written"
    typer.echo(f"pulled {s.stored} Manifold market(s) into {store} ({version})")
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


def check_venue(venue: str, **given) -> None:
    """--venue is polymarket, kalshi or manifold, and no option of another venue is given."""
    own = {
        "polymarket": ("gamma_url", "clob_url", "data_url", "closed_since"),
        "kalshi": ("kalshi_url", "series"),
        "manifold": ("manifold_url", "per_minute", "manifold_page"),
    }
    if venue not in own:
        raise typer.BadParameter(f"{venue!r}: use {', '.join(own)}", param_hint="--venue")
    for name in set(given) - set(own[venue]):
        if given[name] is not None:
            option = {
                "per_minute": "requests-per-minute",
                "manifold_page": "manifold-page-size",
            }.get(name, name.replace("_", "-"))
            raise typer.BadParameter(
                f"is not an option of --venue {venue}", param_hint="--" + option
            )
    for option in ("kalshi_url", "manifold_url"):
        check_url(given[option], "--" + option.replace("_", "-"))


def check_url(url: Optional[str], option: str) -> None:
    """A venue's base URL: http(s), and carrying no credential (refused without echoing it)."""

    if url is None:
        return
    if (what := carried_credential("url", url)) is not None:
        raise typer.BadParameter(f"carries {what}: give the URL without it", param_hint=option)
    if not url.startswith(("http://", "https://")):
        raise typer.BadParameter(f"{url!r} is not an http(s) URL", param_hint=option)
