"""`hindcast markets pull` across venues (the --venue check; Manifold's pull and counts) and
`hindcast markets import forecastbench-datasets`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

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


def import_datasets(path: Path, store: Path, histories: str, venue_store, as_json: bool) -> None:
    """`markets import forecastbench-datasets`: import, then the counts per source."""
    from hindcast.markets import fbdatasets

    if histories not in ("freeze", "venue"):
        raise typer.BadParameter(f"{histories!r}: use freeze or venue", param_hint="--histories")
    if (histories == "venue") != (venue_store is not None):
        raise typer.BadParameter(
            "--histories venue takes the histories from a store pulled from the venues: give "
            "it with --venue-store (and --venue-store only with --histories venue)",
            param_hint="--venue-store",
        )
    version, bundle, report, files = fbdatasets.to_store(store, path, now(), venue_store)
    if as_json:
        document = {"store": str(store), "version": version, "commit": files.commit}
        typer.echo(
            json.dumps(document | report.as_dict() | {"set_aside": files.set_aside}, indent=2)
        )
        return
    where = f"commit {files.commit}" if files.commit else "files"
    typer.echo(
        f"imported {len(bundle.markets)} resolved market question(s) from {len(files.files)} "
        f"file(s) ({where}) into {store} (version {version})"
    )
    for source, c in sorted(report.by_source.items()):
        reasons = "".join(f"\n    {n} × {why}" for why, n in sorted(c.skipped.items()))
        typer.echo(
            f"  {source}: {c.questions} question(s), {c.imported} imported "
            f"({c.venue_histories} with the venue's history), "
            f"{sum(c.skipped.values())} skipped{reasons}"
        )
    for name, rows in sorted(report.orphan_rows.items()):
        typer.echo(f"  {name}: {rows} row(s) not read (its question set is not in {path})")
    for name, why in sorted(files.set_aside.items()):
        typer.echo(f"  set aside {name}: {why}")
    typer.echo(
        "  metaculus and infer questions carry one price, at freeze_datetime: replay them at "
        "their freeze instants only"
        + ("" if histories == "venue" else "; so do all others without --histories venue")
    )


def import_datasets_command(
    path: Path = typer.Argument(
        ...,
        metavar="PATH",
        help="A clone or bare git directory of forecastingresearch/forecastbench-datasets, "
        "a folder of its files, or one file.",
    ),
    store: Path = typer.Option(
        Path("markets/store"), "--store", help="Market store to write into."
    ),
    histories: str = typer.Option(
        "freeze",
        "--histories",
        help="freeze: each question's one price, at freeze_datetime; venue: Polymarket and "
        "Manifold questions take their whole history from --venue-store.",
    ),
    venue_store: Optional[Path] = typer.Option(
        None, "--venue-store", help="A store pulled from Polymarket and/or Manifold."
    ),
    as_json: bool = typer.Option(False, "--json", help="The counts as one JSON object."),
) -> None:
    """Import ForecastBench's published question and resolution sets, as they are."""
    import_datasets(path, store, histories, venue_store, as_json)


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
    from hindcast.http import carried_credential

    if url is None:
        return
    if (what := carried_credential("url", url)) is not None:
        raise typer.BadParameter(f"carries {what}: give the URL without it", param_hint=option)
    if not url.startswith(("http://", "https://")):
        raise typer.BadParameter(f"{url!r} is not an http(s) URL", param_hint=option)
