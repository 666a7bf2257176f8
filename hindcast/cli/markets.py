"""`hindcast markets …`: pull from Polymarket, import published files, list and show a store."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Optional

import typer

from hindcast import markets, replay
from hindcast.api import import_markets, pull
from hindcast.cli import markets_fbdatasets
from hindcast.cli.common import default_sample, now, verbosity
from hindcast.cli.console import Steps, out_console
from hindcast.cli.markets_show import render
from hindcast.cli.markets_venues import check_url, check_venue, pull_manifold
from hindcast.timeutil import parse_utc

app = typer.Typer(
    help="Market stores: pull from Polymarket, import files, list, show.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
import_app = typer.Typer(
    help="Import market files published by others into a store.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(import_app, name="import")

PULL_STORE = Path("markets/store")
READ_HELP = "Market store to read (its LATEST version) [default: markets/sample]."


def _instant(value: str | None, option: str, end_of_day: bool = False) -> datetime | None:
    """An ISO instant, or a bare date: its start (or, with end_of_day, its last second)."""
    from datetime import timedelta

    try:
        instant = parse_utc(value) if value else None
    except ValueError as exc:
        raise typer.BadParameter(
            f"{value!r} is not a date or ISO instant ({exc})", param_hint=option
        ) from exc
    bare_date = instant is not None and len(value.strip()) == 10
    return instant + timedelta(days=1, seconds=-1) if bare_date and end_of_day else instant


# -- pull -------------------------------------------------------------------------------------
@app.command("pull")
def pull_command(
    since: Optional[str] = typer.Option(
        None,
        "--since",
        help="Only markets scheduled to end (Kalshi: settled) on or after this date [default: no "
        "lower bound].",
    ),
    until: Optional[str] = typer.Option(
        None,
        "--until",
        help="Only markets scheduled to end (Kalshi: settled) on or before this "
        "date (a bare date includes its whole day) [default: no upper bound].",
    ),
    closed_since: Optional[str] = typer.Option(
        None,
        "--closed-since",
        help="Also every market closed on or after "
        "this date, whatever its end date (or lack of one) [default: none].",
    ),
    limit: Optional[int] = typer.Option(
        None, "--limit", min=1, help="Look at no more than N listed markets [default: every one]."
    ),
    store: Path = typer.Option(
        PULL_STORE, "--store", help="Market store to write a new version into."
    ),
    gamma_url: Optional[str] = typer.Option(
        None, "--gamma-url", help="Gamma API base URL [default: Polymarket's]."
    ),
    clob_url: Optional[str] = typer.Option(
        None, "--clob-url", help="CLOB API base URL [default: Polymarket's]."
    ),
    data_url: Optional[str] = typer.Option(
        None, "--data-url", help="Data API base URL (/v2/prices-history) [default: Polymarket's]."
    ),
    page_size: int = typer.Option(
        100,
        "--page-size",
        min=1,
        max=100,
        help="Gamma keyset page size (100 at most: Gamma clamps larger pages silently).",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="The pull's summary and counts as one JSON object."
    ),
    timeout: float = typer.Option(
        30.0, "--timeout", min=0.1, help="Seconds before one request times out."
    ),
    attempts: int = typer.Option(
        5, "--attempts", min=1, help="Tries per request (429, 5xx, timeouts)."
    ),
    venue: str = typer.Option("polymarket", "--venue", help="polymarket, kalshi or manifold."),
    kalshi_url: Optional[str] = typer.Option(
        None, "--kalshi-url", help="Kalshi API base URL, up to /trade-api/v2 [default: Kalshi's]."
    ),
    series: Optional[str] = typer.Option(
        None, "--series", help="Kalshi only: markets of this series ticker [default: every series]."
    ),
    manifold_url: Optional[str] = typer.Option(
        None, "--manifold-url", help="Manifold API base URL, up to /v0 [default: Manifold's]."
    ),
    per_minute: Optional[int] = typer.Option(
        None,
        "--requests-per-minute",
        min=1,
        help="Manifold only: at most this many requests in any minute [default: 500, the "
        "documented limit].",
    ),
    manifold_page: Optional[int] = typer.Option(
        None,
        "--manifold-page-size",
        min=1,
        max=1000,
        help="Manifold only: markets and bets asked for per page [default: 1000, the most].",
    ),
) -> None:
    """Pull resolved binary markets and their YES price histories (Polymarket), or settled binary
    markets and their hourly candles (--venue kalshi); resumable if killed."""
    check_venue(
        venue,
        kalshi_url=kalshi_url,
        series=series,
        gamma_url=gamma_url,
        clob_url=clob_url,
        data_url=data_url,
        closed_since=closed_since,
        manifold_url=manifold_url,
        per_minute=per_minute,
        manifold_page=manifold_page,
    )
    if venue == "manifold":
        when = (_instant(since, "--since"), _instant(until, "--until", end_of_day=True))
        with _progress() as progress:
            counts = pull_manifold(
                store,
                manifold_url,
                when,
                limit,
                (timeout, attempts, per_minute, manifold_page),
                as_json,
                progress,
            )
        _warn_short(counts)
        return _refuse_empty(store, counts)
    if venue == "kalshi":
        return _pull_kalshi(
            store, kalshi_url, series, since, until, limit, timeout, attempts, as_json
        )
    for url, option in (
        (gamma_url, "--gamma-url"),
        (clob_url, "--clob-url"),
        (data_url, "--data-url"),
    ):
        check_url(url, option)
    query = markets.PullQuery(
        _instant(since, "--since"),
        _instant(until, "--until", end_of_day=True),
        limit,
        page_size,
        _instant(closed_since, "--closed-since"),
    )
    with _progress() as progress:
        summary = pull(
            store,
            query,
            now=now(),
            progress=progress,
            gamma_url=gamma_url,
            clob_url=clob_url,
            data_url=data_url,
            attempts=attempts,
            timeout=timeout,
        )
    counts = summary.counts()
    if as_json:
        typer.echo(json.dumps(_summary_json(store, summary), indent=2))
    else:
        _print_summary(store, summary)
    _warn_short(counts)
    if counts.incomplete:
        typer.echo(
            f"hindcast: warning: {counts.incomplete} stored market(s) have a history shorter than "
            "their life (listed in the store manifest, incomplete_histories)",
            err=True,
        )
    _refuse_empty(store, counts)


def _pull_kalshi(
    store: Path, kalshi_url, series, since, until, limit, timeout, attempts, as_json: bool
) -> None:
    """`markets pull --venue kalshi`: the counts as text or JSON; fewer stored than
    listed said on stderr."""
    query = markets.KalshiQuery(
        series, _instant(since, "--since"), _instant(until, "--until", end_of_day=True), limit
    )
    with _progress() as progress:
        summary = pull(
            store,
            query,
            now=now(),
            progress=progress,
            kalshi_url=kalshi_url,
            attempts=attempts,
            timeout=timeout,
        )
    counts = summary.counts()
    if as_json:
        typer.echo(json.dumps(summary.as_dict(store), indent=2))
    else:
        _print_kalshi(store, summary)
    _warn_short(counts)
    if counts.incomplete:
        typer.echo(
            f"hindcast: warning: {counts.incomplete} stored Kalshi market(s) have no candle with "
            "a price (no trade in their life)",
            err=True,
        )
    _refuse_empty(store, counts)


def _print_kalshi(store: Path, s) -> None:
    typer.echo(f"pulled {s.stored} Kalshi market(s) into {store} ({_version(s)})")
    typer.echo(
        f"  listed {s.listed}: {s.listed_live} live (settled since the cutoff {s.cutoff}), "
        f"{s.listed_historical} historical"
    )
    typer.echo(
        f"  candles: {s.histories_fetched} fetched, {s.histories_cached} from the pull cache, "
        f"{s.histories_reused} reused from the store; {len(s.incomplete)} market(s) without any "
        "price point"
    )
    reasons = "".join(f"\n    {n} × {why}" for why, n in sorted(s.skipped.items()))
    typer.echo(f"  skipped {sum(s.skipped.values())}{reasons}")
    typer.echo(f"  failed {len(s.failed)}" + "".join(f"\n    {line}" for line in s.failed))


def _warn_short(counts) -> None:
    """A pull that stored fewer markets than it listed says so on stderr (a PullCounts)."""
    if counts.short:
        typer.echo(
            f"hindcast: warning: stored {counts.stored} of {counts.listed} listed market(s): "
            f"{counts.skipped_total} skipped, {counts.failed} failed (see the counts)",
            err=True,
        )


def _refuse_empty(store: Path, counts) -> None:
    """A pull that stored nothing wrote no version: said in one line, exit 1."""
    if counts.stored == 0:
        typer.echo(
            f"hindcast: error: stored 0 of {counts.listed} listed market(s): no version written "
            f"into {store} ({counts.skipped_total} skipped, {counts.failed} failed: see above)",
            err=True,
        )
        raise typer.Exit(1)


def _progress():
    """Progress of a pull on stderr, step by step (listing, then histories or candles): a bar
    on a terminal, else a line every few seconds and one as each step ends; nothing with -q."""
    return Steps("markets pull", "markets", quiet=verbosity() < 0)


def _version(s) -> str:
    return f"version {s.version}" if s.version else "no version written"


def _summary_json(store: Path, s) -> dict:
    counts = s.counts()
    return {
        "store": str(store),
        "version": s.version,
        "counts": counts.as_dict(),
        "stored_fewer_than_listed": counts.short,
        "failed": s.failed,
        "incomplete_histories": s.incomplete,
        "price_routes": dict(s.routes),
        "histories": {
            "fetched": s.histories_fetched,
            "cached": s.histories_cached,
            "reused": s.histories_reused,
            "changed": s.histories_changed,
        },
        "watching": len(s.pending),
        "rechecked_by_id": s.rechecked,
    }


def _print_summary(store: Path, s) -> None:
    typer.echo(f"pulled {s.stored} market(s) into {store} ({_version(s)})")
    typer.echo(
        f"  listed {s.listed}; stored {s.stored}; skipped {sum(s.skipped.values())}; failed "
        f"{len(s.failed)}; incomplete histories {len(s.incomplete)}"
    )
    typer.echo(
        f"  price histories: {s.histories_fetched} fetched, {s.histories_cached} from the pull "
        f"cache, {s.histories_reused} reused from the store; routes "
        + (", ".join(f"{route} × {n}" for route, n in sorted(s.routes.items())) or "-")
    )
    if s.histories_changed:
        typer.echo(
            f"  {len(s.histories_changed)} stored history(ies) changed by this pull: a new version "
            "(the previous one is kept)"
        )
    reasons = "".join(f"\n    {n} × {why}" for why, n in sorted(s.skipped.items()))
    typer.echo(f"  skipped {sum(s.skipped.values())}{reasons}")
    typer.echo(f"  failed {len(s.failed)}" + "".join(f"\n    {line}" for line in s.failed))
    typer.echo(
        f"  watching {len(s.pending)} market(s) listed before they resolved "
        f"({s.rechecked} asked for again by id this time)"
    )


# -- import -----------------------------------------------------------------------------------
@import_app.command("forecastbench")
def import_forecastbench_command(
    markets_file: Path = typer.Option(
        ...,
        "--markets-file",
        exists=True,
        dir_okay=False,
        metavar="FILE",
        help="ForecastBench's markets.jsonl (required; the store written is --store).",
    ),
    price_history: Optional[Path] = typer.Option(
        None,
        "--price-history",
        exists=True,
        dir_okay=False,
        metavar="FILE",
        help="ForecastBench's prices_daily.csv: YES price histories "
        "[default: none, markets without histories].",
    ),
    store: Path = typer.Option(
        PULL_STORE, "--store", help="Market store to write a new version into."
    ),
) -> None:
    """Import ForecastBench's markets.jsonl (+ prices_daily.csv) as a new store version."""

    version, bundle = import_markets(store, markets_file, price_history, now=now())
    points = sum(len(h) for h in bundle.prices.values())
    typer.echo(
        f"imported {len(bundle.markets)} market(s), {points} price point(s) into {store} "
        f"(version {version})"
    )


# -- list -------------------------------------------------------------------------------------
@app.command("list")
def list_command(
    store: Optional[Path] = typer.Option(None, "--store", help=READ_HELP),
    as_json: bool = typer.Option(False, "--json", help="One JSON array instead of a table."),
) -> None:
    """Every market of the store: id, resolution, topic, price points, question."""
    store = store or default_sample("markets")
    version = markets.open_version(store)
    rows = [
        replay.list_row(version.bundle, m)
        for m in sorted(version.bundle.markets, key=lambda m: m.id)
    ]
    if as_json:
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    _print_table(rows, f"{store} · version {version.id} · {len(rows)} market(s)")


def _print_table(rows: list[dict], title: str) -> None:
    """Polymarket ids cut to 12 characters (`show` takes any unique prefix; --json has them whole);
    Kalshi ids (`kalshi:<ticker>`) whole: their prefixes are alike."""
    from rich.table import Table

    table = Table(title=title)
    for column in ("id", "status", "resolved", "topic", "prices"):
        table.add_column(column, no_wrap=True)
    table.add_column("question", overflow="fold")
    for r in rows:
        table.add_row(
            r["id"] if r["id"].startswith("kalshi:") else r["id"][:12],
            str(r["status"]),
            (r["resolved_at"] or "")[:16],
            r["topic"],
            str(r["price_points"]),
            r["question"],
        )
    out_console().print(table)


# -- show -------------------------------------------------------------------------------------
@app.command("show")
def show_command(
    market_id: str = typer.Argument(
        ..., metavar="ID", help="Market id (or a unique prefix of it)."
    ),
    t0: Optional[str] = typer.Option(
        None,
        "--t0",
        help="Show the market as it stood at this instant [default: as stored, no price at t0].",
    ),
    store: Optional[Path] = typer.Option(None, "--store", help=READ_HELP),
    as_json: bool = typer.Option(False, "--json", help="JSON instead of text."),
) -> None:
    """One market: record, effective resolution, lifetime, and the price at t0 with its instant."""
    store = store or default_sample("markets")
    bundle = markets.open_version(store).bundle
    view = replay.market_view.market_view(
        bundle, replay.find_market(bundle, market_id, store), _instant(t0, "--t0")
    )

    typer.echo(json.dumps(view, indent=2, ensure_ascii=False) if as_json else render(view))


import_app.command("forecastbench-datasets")(markets_fbdatasets.import_datasets_command)
