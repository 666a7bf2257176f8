"""`hindcast live …`: the service's live arm — `verify` a forecast log, `report` the
backtest–live gap (docs/live.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from hindcast.cli.common import EXIT_ERROR, fail

app = typer.Typer(
    help="The live arm: verify its hash-chained forecast log, report the backtest–live gap.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@app.command("verify")
def verify_command(
    log: Path = typer.Argument(..., help="The live forecast log (JSON lines)."),
    config: Path | None = typer.Option(
        None,
        "--config",
        help="The service config: also check the head it recorded and the run store's rows.",
    ),
) -> None:
    """Check the log's hash chain (and, with --config, its recorded head and the stored
    forecasts); exit 1 naming the first bad record."""
    from hindcast.errors import HindcastError
    from hindcast.schedule import live, load

    try:
        verified = live.verify(log, load(config) if config else None)
    except HindcastError as exc:
        raise fail(str(exc), exc.exit_code)
    if not verified.ok:
        number, why = verified.bad or (0, "")
        raise fail(f"live log {log}: record {number}: {why}", EXIT_ERROR)
    typer.echo(
        f"live log {log}: {len(verified.records)} record(s), chain intact, head seq "
        f"{verified.head.seq} sha256 {verified.head.sha256}"
    )


@app.command("report")
def report_command(
    config: Path = typer.Option(Path("hindcast.toml"), "--config", help="The service config."),
) -> None:
    """Per forecaster: live against matched hindcast Brier (the gap, with a market-clustered
    interval), and the sweep's hindcast Brier by regime against live."""
    from hindcast.errors import HindcastError
    from hindcast.schedule import live_report, load

    try:
        text = live_report.text(live_report.for_config(load(config)))
    except HindcastError as exc:
        raise fail(str(exc), exc.exit_code)
    typer.echo(text)
