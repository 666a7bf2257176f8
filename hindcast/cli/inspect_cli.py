"""`hindcast import-inspect LOG`: an Inspect AI log of `hindcast/replay`
stored as a hindcast run."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from hindcast import adapters, runs
from hindcast.cli.common import DB_HELP, now


def import_inspect(
    log: Path = typer.Argument(
        ...,
        metavar="LOG",
        help="An Inspect log (.eval or .json) of `inspect eval hindcast/replay`.",
    ),
    db: str | None = typer.Option(None, "--db", metavar="PATH|URL", help=DB_HELP),
    as_json: bool = typer.Option(
        False, "--json", help="One JSON document on stdout [default: off]."
    ),
) -> None:
    """Store an Inspect log's forecasts as a hindcast run (then `hindcast leaderboard RUN`,
    `analyze`, `audit` apply). Needs the `inspect` extra. Re-importing stores nothing twice."""

    # the whole log is read and checked before the database is opened
    run = adapters.read_inspect(log)
    store = runs.RunStore(runs.db_url(db))
    done = adapters.store_inspect(run, store, now())
    if as_json:
        print(json.dumps(done.__dict__, indent=2))
        return
    print(
        f"run {done.run_id}: {done.forecaster}: {done.samples} samples, {done.stored} forecasts "
        f"stored now ({done.failures} forecast failures), {done.outages} outages (errored "
        "samples, not forecasts)"
    )
    print(
        f"leaderboard: hindcast leaderboard {done.run_id} --out DIR" + (f" --db {db}" if db else "")
    )
