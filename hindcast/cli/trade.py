"""`hindcast trade RUN`: what each forecaster of a stored run would have earned trading against
the market price at t0 (no model is called; nothing is written but the --trades CSV).

The fee schedule is read (and checked) before the run database is opened, and the CSV is
written last, so a bad --fees file or a missing run writes nothing. The --trades path is
checked first: an input (the run database, the fee file), a folder, or an existing file that
is not a trades CSV of ours is refused, never replaced.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from hindcast import api, runs
from hindcast.cli.common import DB_HELP, fail
from hindcast.cli.console import number, out_console
from hindcast.errors import ConfigError

app = typer.Typer(help="Trading simulation against the market price at t0.", rich_markup_mode=None)
_FEES = typer.Option(
    None,
    "--fees",
    metavar="FILE",
    help="Fee schedule (TOML, same keys as the shipped fees.toml), "
    "used in its place [default: Polymarket's published rule].",
)
_TRADES = typer.Option(None, "--trades", metavar="CSV", help="Write every trade to this CSV file.")


def trade(
    run_id: str = typer.Argument(
        ..., metavar="RUN", help="Run id, as `hindcast runs list` shows it."
    ),
    strategy: str = typer.Option(
        "edge",
        "--strategy",
        help="edge: a flat stake of --max-position when |p − price| > "
        "--edge; kelly: fractional Kelly of --bankroll, capped at --max-position.",
    ),
    edge: float = typer.Option(
        0.05, "--edge", help="Trade only when p and the price differ by more than this."
    ),
    kelly_fraction: float = typer.Option(
        0.25, "--kelly-fraction", help="Share of the full Kelly stake (kelly only)."
    ),
    max_position: float = typer.Option(
        100.0,
        "--max-position",
        help="Most dollars staked on one (market, t0); the "
        "edge strategy's stake and the market control's complete set.",
    ),
    bankroll: float = typer.Option(
        1000.0, "--bankroll", help="Dollars Kelly stakes are fractions of (not compounded)."
    ),
    fees: Optional[Path] = _FEES,
    as_json: bool = typer.Option(
        False,
        "--json",
        help="One JSON document on stdout (parameters, fee schedule, "
        "the trading table, every trade) [default: off].",
    ),
    trades: Optional[Path] = _TRADES,
    db: Optional[str] = typer.Option(
        None, "--db", metavar="PATH|URL", help=DB_HELP + " Read, never created."
    ),
) -> None:
    """Trade every forecaster of a stored run against the market price at t0: P&L, return on
    capital, hit rate and drawdown with market-clustered intervals; the 'market' forecaster is
    the zero-edge control (its P&L is minus its fees)."""
    from hindcast.analysis import TradingStrategy, load_fees, simulate_trading

    chosen = TradingStrategy(strategy, edge, kelly_fraction, max_position, bankroll)
    if chosen.problem() is not None:
        raise fail(chosen.problem(), code=2)
    if trades is not None:
        check_output(trades, {"--db": runs.db_file(runs.db_url(db)), "--fees": fees})
    schedule = load_fees(fees)  # a bad fee file stops here: nothing is opened or written
    rows = api.rescore(runs.RunStore(runs.db_url(db), read_only=True), run_id).rows
    result = simulate_trading(rows, chosen, schedule)
    if trades is not None:
        _write_csv(trades, result)
    if as_json:
        print(
            json.dumps(
                {"run_id": run_id, **result.to_json()},
                indent=2,
                ensure_ascii=False,
                allow_nan=False,
            )
        )
        return
    _print(run_id, result.finding)


app.command(name="trade")(trade)


def check_output(path: Path, inputs: dict) -> None:
    """--trades PATH may be new, or a trades CSV this command wrote; never an input of the
    command (`inputs`: flag → path), a folder, or any other existing file."""

    for flag, given in inputs.items():
        if (
            given is not None
            and Path(given).exists()
            and path.exists()
            and path.resolve() == Path(given).resolve()
        ):
            raise ConfigError(
                f"--trades {path}: that is the {flag} input; give a new file for the trades"
            )
    if path.is_dir():
        raise ConfigError(
            f"--trades {path}: is a folder; give a file path (e.g. {path / 'trades.csv'})"
        )
    if path.exists() and not _ours(path):
        raise ConfigError(
            f"--trades {path}: an existing file that is not a trades CSV of hindcast; nothing was "
            "written (remove it or give a new path)"
        )


def _ours(path: Path) -> bool:
    """A file whose first line is the trades header this command writes."""
    from hindcast.analysis import TRADE_COLUMNS

    try:
        with path.open("rb") as handle:
            first = handle.readline(4096)
    except OSError:
        return False
    return first.rstrip(b"\r\n") == ",".join(TRADE_COLUMNS).encode()


def _write_csv(path: Path, result) -> None:
    """Every trade, one row each (TRADE_COLUMNS): written whole to a temporary file beside it,
    then renamed; a failed write removes the temporary file and names the path given."""
    import csv
    import io
    import os
    import tempfile

    from hindcast.analysis import TRADE_COLUMNS

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(TRADE_COLUMNS)
    writer.writerows(t.row() for t in result.trades)
    folder = path.parent if str(path.parent) else Path(".")
    partial = None
    try:
        handle, partial = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=folder)
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(buffer.getvalue())
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(partial, 0o666 & ~mask)  # as a plain new file would be (mkstemp makes it 0600)
        os.replace(partial, path)
    except OSError as exc:
        if partial is not None:
            Path(partial).unlink(missing_ok=True)
        raise ConfigError(
            f"--trades {path}: cannot be written ({exc.strerror or type(exc).__name__})"
        ) from None


def _print(run_id: str, finding) -> None:
    from rich.table import Table

    shown = (
        "forecaster",
        "strategy",
        "positions",
        "traded",
        "no_edge",
        "no_price",
        "failed",
        "capital",
        "fees",
    )
    table = Table(title=f"run {run_id}: {finding.title}")
    for column in (
        *shown,
        "P&L [95% CI]",
        "return on capital [95% CI]",
        "hit rate",
        "max drawdown",
    ):
        table.add_column(column)
    for values in finding.rows:
        row = dict(zip(finding.columns, values))
        table.add_row(
            *(_cell(row[c]) for c in shown),
            _ci(row, "pnl"),
            _ci(row, "roc"),
            number(row["hit_rate"], 3),
            _money(row["max_drawdown"]),
        )
    console = out_console()
    console.print(table)
    for note in finding.notes:
        console.print(f"  {note}", highlight=False)


def _money(value) -> str:
    return "—" if value is None else f"{value:,.2f}"


def _cell(value) -> str:
    return _money(value) if isinstance(value, float) else str(value)


def _ci(row: dict, key: str) -> str:
    """`value [low, high]` (dollars for pnl, a ratio for roc), or the value
    alone without an interval."""
    shown = _money if key == "pnl" else (lambda v: "—" if v is None else f"{v:+.4f}")
    value, low, high = row[key], row[f"{key}_low"], row[f"{key}_high"]
    if value is None or low is None:
        return shown(value)
    return f"{shown(value)} [{shown(low)}, {shown(high)}]"
