"""`hindcast markets import forecastbench-datasets PATH`: ForecastBench's published question and
resolution sets, with `--histories freeze|store|venue` and `--include data,combination`
(docs/markets.md)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

if TYPE_CHECKING:
    from hindcast.cli.console import Steps
    from hindcast.markets import MarketBundle

from hindcast import markets
from hindcast.cli.common import now, verbosity
from hindcast.cli.console import Steps
from hindcast.cli.markets_venues import check_url

HISTORIES = ("freeze", "store", "venue")
URL_OPTIONS = ("gamma_url", "clob_url", "data_url", "manifold_url")


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
        help="freeze: each question's one price, at freeze_datetime; store: Polymarket and "
        "Manifold questions take their whole history from --venue-store, as it is (no "
        "network); venue: the same, after pulling into --venue-store the markets it lacks.",
    ),
    venue_store: Optional[Path] = typer.Option(
        None, "--venue-store", help="The store of Polymarket and/or Manifold pulls."
    ),
    include: Optional[str] = typer.Option(
        None,
        "--include",
        help="data, combination or data,combination: import those questions too, one per "
        "resolved row, replayed at their freeze instants only [default: skipped].",
    ),
    gamma_url: Optional[str] = typer.Option(
        None, "--gamma-url", help="--histories venue: Gamma API base URL [default: Polymarket's]."
    ),
    clob_url: Optional[str] = typer.Option(
        None, "--clob-url", help="--histories venue: CLOB API base URL [default: Polymarket's]."
    ),
    data_url: Optional[str] = typer.Option(
        None, "--data-url", help="--histories venue: Data API base URL [default: Polymarket's]."
    ),
    manifold_url: Optional[str] = typer.Option(
        None, "--manifold-url", help="--histories venue: Manifold API base URL, up to /v0."
    ),
    timeout: float = typer.Option(
        30.0, "--timeout", min=0.1, help="Seconds before one venue request times out."
    ),
    attempts: int = typer.Option(
        5, "--attempts", min=1, help="Tries per venue request (429, 5xx, timeouts)."
    ),
    as_json: bool = typer.Option(False, "--json", help="The counts as one JSON object."),
) -> None:
    """Import ForecastBench's published question and resolution sets, as they are."""
    urls = dict(zip(URL_OPTIONS, (gamma_url, clob_url, data_url, manifold_url)))
    included = _included(include)
    _check(histories, venue_store, urls)
    options = urls | {"timeout": timeout, "attempts": attempts}
    run(path, store, (histories, venue_store, options), included, as_json)


def _included(text: Optional[str]) -> frozenset[str]:
    include = markets.fbdatasets_extra.INCLUDE

    parts = {p.strip() for p in (text or "").split(",") if p.strip()}
    if text is not None and (not parts or parts - set(include)):
        raise typer.BadParameter(
            f"{text!r}: use {', '.join(include)} or both, comma-separated", param_hint="--include"
        )
    return frozenset(parts)


def _check(histories: str, venue_store: Optional[Path], urls: dict) -> None:
    if histories not in HISTORIES:
        raise typer.BadParameter(
            f"{histories!r}: use {', '.join(HISTORIES)}", param_hint="--histories"
        )
    if (histories != "freeze") != (venue_store is not None):
        raise typer.BadParameter(
            f"--histories {histories} "
            + (
                "takes no --venue-store"
                if histories == "freeze"
                else "takes the histories from a store of venue pulls: give it with --venue-store"
            ),
            param_hint="--venue-store",
        )
    for name, url in urls.items():
        option = "--" + name.replace("_", "-")
        if url is not None and histories != "venue":
            raise typer.BadParameter(
                "only --histories venue asks a venue (the URL is where it pulls from)",
                param_hint=option,
            )
        check_url(url, option)


def run(path: Path, store: Path, venue: tuple, include: frozenset, as_json: bool) -> None:
    """Read the files, pull what the venue store lacks (--histories venue), import, print."""
    histories, venue_store, options = venue
    files = markets.fbdatasets_files.read_files(path)
    # a malformed file fails before any pull
    markets.fbdatasets.import_datasets(files, None, include)
    pulls: dict = {}
    if histories == "venue":
        held = _held(venue_store)
        lacking = markets.fbdatasets_pull.missing(files, held)
        if any(lacking.values()):
            with _progress() as progress:
                pulls = markets.fbdatasets_pull.pull_missing(
                    venue_store, lacking, now(), options, progress
                )
    joined = venue_store if histories == "store" or (venue_store and _held(venue_store)) else None
    done = markets.fbdatasets.to_store(store, path, now(), joined, include, files)
    if as_json:
        return _json(store, done, pulls, histories)
    _print(path, store, done, pulls, histories, include)


def _progress() -> Steps:
    """The venue pulls' progress on stderr, as `markets pull` prints it; nothing with -q."""
    return Steps("markets import", "markets", quiet=verbosity() < 0)


def _held(venue_store: Path) -> MarketBundle | None:
    return (
        markets.open_version(venue_store).bundle
        if (Path(venue_store) / "LATEST").exists()
        else None
    )


def _json(store: Path, done: tuple, pulls: dict, histories: str) -> None:
    version, _, report, files = done
    document = {"store": str(store), "version": version, "commit": files.commit}
    document |= report.as_dict() | {"set_aside": files.set_aside, "histories": histories}
    document["venue_pulls"] = {
        venue: {"version": s.version, "counts": s.counts().as_dict(), "failed": list(s.failed)}
        for venue, s in pulls.items()
    }
    typer.echo(json.dumps(document, indent=2))


def _print(
    path: Path, store: Path, done: tuple, pulls: dict, histories: str, include: Iterable[str]
) -> None:
    version, bundle, report, files = done
    for venue, s in pulls.items():
        c = s.counts()
        reasons = "".join(f"\n    {n} × {why}" for why, n in c.skipped)
        typer.echo(
            f"pulled {venue} markets the venue store lacked: asked {c.listed}; stored {c.stored}; "
            f"skipped {c.skipped_total}; failed {c.failed} "
            f"({'version ' + s.version if s.version else 'no version written'}){reasons}"
            + "".join(f"\n    {line}" for line in s.failed)
        )
    where = f"commit {files.commit}" if files.commit else "files"
    typer.echo(
        f"imported {len(bundle.markets)} resolved question(s) from {len(files.files)} "
        f"file(s) ({where}) into {store} (version {version})"
    )
    for source, c in sorted(report.by_source.items()):
        reasons = "".join(f"\n    {n} × {why}" for why, n in sorted(c.skipped.items()))
        typer.echo(
            f"  {source}: {c.questions} question(s), {c.imported} imported "
            f"({c.venue_histories} with the venue's history, {c.derived} data or combination "
            f"question(s)), {sum(c.skipped.values())} skipped{reasons}"
        )
    for name, rows in sorted(report.orphan_rows.items()):
        typer.echo(f"  {name}: {rows} row(s) not read (its question set is not in {path})")
    for name, why in sorted(files.set_aside.items()):
        typer.echo(f"  set aside {name}: {why}")
    typer.echo(
        "  metaculus and infer questions carry one price, at freeze_datetime: replay them at "
        "their freeze instants only"
        + ("" if histories != "freeze" else "; so do all others without --histories venue/store")
    )
    if include:
        typer.echo(
            f"  {' and '.join(sorted(include))} questions (--include) have no market price and "
            "open at freeze_datetime: replay them at their freeze instants only"
        )
