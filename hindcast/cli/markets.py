"""`hindcast markets …`: pull from Polymarket, import published files, list and show a store."""

from __future__ import annotations

import json
from dataclasses import asdict, is_dataclass
from datetime import datetime
from pathlib import Path
from typing import Optional

import typer

from hindcast.cli.common import default_sample, now

app = typer.Typer(help="Market stores: pull from Polymarket, import files, list, show.", no_args_is_help=True)
import_app = typer.Typer(help="Import market files published by others into a store.", no_args_is_help=True)
app.add_typer(import_app, name="import")

PULL_STORE = Path("markets/store")


def _instant(value: str | None, option: str) -> datetime | None:
    from hindcast.timeutil import parse_utc

    try:
        return parse_utc(value) if value else None
    except ValueError as exc:
        raise typer.BadParameter(f"{value!r} is not a date or ISO instant ({exc})", param_hint=option) from exc


# -- pull -------------------------------------------------------------------------------------
@app.command("pull")
def pull_command(
    since: Optional[str] = typer.Option(None, "--since", help="Only markets scheduled to end on or after this date."),
    until: Optional[str] = typer.Option(None, "--until", help="Only markets scheduled to end on or before this date."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Look at no more than N listed markets."),
    store: Path = typer.Option(PULL_STORE, "--store", help="Market store to write a new version into."),
    gamma_url: Optional[str] = typer.Option(None, "--gamma-url", help="Gamma API base URL [default: Polymarket's]."),
    clob_url: Optional[str] = typer.Option(None, "--clob-url", help="CLOB API base URL [default: Polymarket's]."),
    page_size: int = typer.Option(500, "--page-size", min=1, max=500, help="Gamma page size."),
    timeout: float = typer.Option(30.0, "--timeout", min=0.1, help="Seconds before one request times out."),
    attempts: int = typer.Option(5, "--attempts", min=1, help="Tries per request (429, 5xx, timeouts)."),
) -> None:
    """Pull resolved binary markets and their YES price histories; resumable if killed."""
    import httpx

    from hindcast.markets.polymarket import CLOB_URL, GAMMA_URL, PolymarketClient, RetryPolicy
    from hindcast.markets.pull import PullQuery, pull

    query = PullQuery(_instant(since, "--since"), _instant(until, "--until"), limit, page_size)
    retry = RetryPolicy(attempts=attempts, timeout=timeout)
    with httpx.Client(headers={"User-Agent": "hindcast"}) as http, _progress() as progress:
        client = PolymarketClient(http, gamma_url or GAMMA_URL, clob_url or CLOB_URL, retry)
        summary = pull(store, client, query, now(), progress)
    _print_summary(store, summary)


class _progress:
    """A rich progress bar on stderr for the history fetches, as a (done, total) callback."""

    def __enter__(self):
        from rich.progress import Progress

        from hindcast.cli.console import err_console

        self.bar = Progress(console=err_console(), transient=True)
        self.bar.start()
        self.task = self.bar.add_task("price histories", total=None)
        return self.update

    def update(self, done: int, total: int) -> None:
        self.bar.update(self.task, completed=done, total=total)

    def __exit__(self, *exc) -> None:
        self.bar.stop()


def _print_summary(store: Path, s) -> None:
    typer.echo(f"pulled {s.stored} market(s) into {store} (version {s.version})")
    typer.echo(f"  listed {s.listed}; price histories: {s.histories_fetched} fetched, "
               f"{s.histories_cached} from the pull cache, {s.histories_reused} reused from the store; "
               f"{s.no_history} market(s) without any price point")
    typer.echo(f"  skipped {sum(s.skipped.values())}" + "".join(f"\n    {n} × {why}" for why, n in sorted(s.skipped.items())))
    typer.echo(f"  failed {len(s.failed)}" + "".join(f"\n    {line}" for line in s.failed))


# -- import -----------------------------------------------------------------------------------
@import_app.command("forecastbench")
def import_forecastbench_command(
    markets: Path = typer.Option(..., "--markets", exists=True, dir_okay=False, help="markets.jsonl"),
    prices: Optional[Path] = typer.Option(None, "--prices", exists=True, dir_okay=False, help="prices_daily.csv"),
    store: Path = typer.Option(PULL_STORE, "--store", help="Market store to write a new version into."),
) -> None:
    """Import ForecastBench's markets.jsonl (+ prices_daily.csv) as a new store version."""
    from hindcast.markets.importers import import_forecastbench
    from hindcast.markets.store import write_version

    bundle = import_forecastbench(markets, prices)
    provenance = {"source": "forecastbench", "markets": str(markets), "prices": str(prices or ""),
                  "imported_at": _jsonable(now())}
    version = write_version(store, bundle, provenance)
    points = sum(len(h) for h in bundle.prices.values())
    typer.echo(f"imported {len(bundle.markets)} market(s), {points} price point(s) into {store} (version {version})")


# -- list -------------------------------------------------------------------------------------
@app.command("list")
def list_command(
    store: Optional[Path] = typer.Option(None, "--store", help="Market store to read (its LATEST version) [default: markets/sample]."),
    as_json: bool = typer.Option(False, "--json", help="One JSON array instead of a table."),
) -> None:
    """Every market of the store: id, resolution, topic, price points, question."""
    from hindcast.markets.store import open_version

    store = store or default_sample("markets")
    version = open_version(store)
    rows = [_list_row(version.bundle, m) for m in sorted(version.bundle.markets, key=lambda m: m.id)]
    if as_json:
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    _print_table(rows, f"{store} · version {version.id} · {len(rows)} market(s)")


def _list_row(bundle, market) -> dict:
    resolution = _resolution_of(bundle, market.id)
    return {"id": market.id, "status": resolution.status if resolution else None,
            "resolved_at": _jsonable(resolution.resolved_at) if resolution else None,
            "topic": market.topic, "price_points": len(bundle.prices.get(market.id, ())),
            "question": market.question}


def _print_table(rows: list[dict], title: str) -> None:
    from rich.table import Table

    from hindcast.cli.console import out_console

    table = Table(title=title)
    for column in ("id", "status", "resolved_at", "topic", "price_points", "question"):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(str(row[c]) for c in ("id", "status", "resolved_at", "topic", "price_points", "question")))
    out_console().print(table)


# -- show -------------------------------------------------------------------------------------
@app.command("show")
def show_command(
    market_id: str = typer.Argument(..., metavar="ID", help="Market id (or a unique prefix of it)."),
    t0: Optional[str] = typer.Option(None, "--t0", help="Show the market as it stood at this instant."),
    store: Optional[Path] = typer.Option(None, "--store", help="Market store to read (its LATEST version) [default: markets/sample]."),
    as_json: bool = typer.Option(False, "--json", help="JSON instead of text."),
) -> None:
    """One market: record, effective resolution, lifetime, and the price at t0 with its instant."""
    from hindcast.markets.store import open_version

    bundle = open_version(store or default_sample("markets")).bundle
    view = market_view(bundle, _find(bundle, market_id), _instant(t0, "--t0"))
    typer.echo(json.dumps(view, indent=2, ensure_ascii=False) if as_json else _render(view))


def market_view(bundle, market, t0: datetime | None) -> dict:
    """Everything `show` prints, as plain JSON-ready data."""
    from hindcast.markets.bundle import description_at

    resolution = _resolution_of(bundle, market.id)
    history = bundle.prices.get(market.id, ())
    view = {"market": _jsonable(market), "meta": _jsonable(bundle.meta.get(market.id)),
            "resolution": _jsonable(resolution), "lifetime": _lifetime(market, resolution),
            "price_points": len(history)}
    if t0 is not None:
        _check_cutoff(market, resolution, t0)
        view["at_t0"] = {"t0": _jsonable(t0), "price": _price_view(history, t0),
                         "description": description_at(bundle, market.id, t0)}
    return view


def _check_cutoff(market, resolution, t0: datetime) -> None:
    from hindcast.errors import CutoffError
    from hindcast.timeutil import iso

    if resolution is not None and t0 >= resolution.resolved_at:
        raise CutoffError(f"market {market.id}: t0 {iso(t0)} is at or after its effective resolution "
                          f"{iso(resolution.resolved_at)}")
    if market.opened_at is not None and t0 < market.opened_at:
        raise CutoffError(f"market {market.id}: t0 {iso(t0)} is before it opened ({iso(market.opened_at)})")


def _price_view(history, t0: datetime) -> dict | None:
    from hindcast.markets.prices import price_at

    point = price_at(history, t0)
    return None if point is None else {"p": point.p, "t": _jsonable(point.t)}


def _lifetime(market, resolution) -> dict:
    start, end = market.opened_at, resolution.resolved_at if resolution else None
    days = (end - start).total_seconds() / 86400 if start and end else None
    return {"opened_at": _jsonable(start), "resolved_at": _jsonable(end), "days": days}


def _render(view: dict) -> str:
    m, r, life = view["market"], view["resolution"] or {}, view["lifetime"]
    lines = [f"{m['id']}  [{m['source']}, topic {m['topic']}]", m["question"], m["url"],
             f"resolution: {r.get('status', 'unknown')} at {r.get('resolved_at')} (public by {r.get('known_at')})",
             f"lifetime: {life['opened_at']} → {life['resolved_at']}"
             + (f" ({life['days']:.1f} days)" if life["days"] is not None else ""),
             f"price points: {view['price_points']}"]
    if "at_t0" in view:
        lines += _render_t0(view["at_t0"])
    return "\n".join(lines)


def _render_t0(at: dict) -> list[str]:
    price = at["price"]
    said = f"{price['p']} (the point at {price['t']})" if price else "none (no price point before t0)"
    return [f"at t0 {at['t0']}: price {said}", "description as it stood:", at["description"]]


def _find(bundle, wanted: str):
    from hindcast.errors import MarketDataError

    matches = [m for m in bundle.markets if m.id == wanted] or [m for m in bundle.markets if m.id.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise MarketDataError(f"no market {wanted!r} in this store")
    raise MarketDataError(f"{wanted!r} matches {len(matches)} markets: " + ", ".join(m.id for m in matches[:5]))


def _resolution_of(bundle, market_id: str):
    return next((r for r in bundle.resolutions if r.market_id == market_id), None)


def _jsonable(value):
    from hindcast.timeutil import iso

    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, datetime):
        return iso(value)
    if is_dataclass(value):
        return {k: _jsonable(v) for k, v in asdict(value).items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return str(value)
