"""`hindcast mcp serve`: one (market, t0) served to any MCP client (stdio or streamable HTTP on
loopback). The tools take no time argument: t0 is the server's. Needs the `mcp` extra."""

from __future__ import annotations

import signal
import sys
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import Optional

import typer

from hindcast import adapters, timeutil
from hindcast.cli.common import default_sample, fail

app = typer.Typer(
    help="Serve a market at a past instant t0 over MCP (the t0-bound tools).",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@app.command("serve")
def serve(
    market: str = typer.Option(..., "--market", "-m", help="The market id."),
    t0: Optional[str] = typer.Option(
        None, "--t0", help="The instant t0 (ISO 8601, UTC), e.g. 2025-11-01T00:00:00Z."
    ),
    fraction: Optional[float] = typer.Option(
        None,
        "--fraction",
        help="t0 as a lifetime fraction of the market "
        "(1.0 = the day before resolution); instead of --t0.",
    ),
    store: Optional[Path] = typer.Option(
        None, "--store", help="Market store directory [default: the shipped sample]."
    ),
    version: Optional[str] = typer.Option(
        None, "--store-version", help="Store version id [default: LATEST]."
    ),
    archive: Optional[Path] = typer.Option(
        None,
        "--archive",
        help="Archive root (search, read and thread need one; "
        "its snapshot needs an index: hindcast archive embed) [default: none].",
    ),
    snapshot: Optional[str] = typer.Option(
        None, "--snapshot", help="Snapshot id [default: LATEST]."
    ),
    transport: str = typer.Option("stdio", "--transport", help="stdio, or http (streamable HTTP)."),
    host: str = typer.Option(
        "127.0.0.1", "--host", help="HTTP: the address to bind (loopback unless you say so)."
    ),
    port: int = typer.Option(
        0, "--port", min=0, max=65535, help="HTTP: the port (0: a free one, printed on stderr)."
    ),
    log: Optional[Path] = typer.Option(
        None,
        "--log",
        metavar="FILE",
        help="Where the calls served are written (the "
        "run's retrieval format), after every call and on exit [default: not written].",
    ),
) -> None:
    """Serve one (market, t0): tools search, read, thread, price_history, resolved_before, question;
    resource hindcast://question. HTTP prints `serving URL` on stderr once it listens."""

    if (t0 is None) == (fraction is None):
        raise fail("give exactly one of --t0 and --fraction")
    if transport not in ("stdio", "http"):
        raise fail(f"--transport {transport!r}: use stdio or http")
    when = _instant(t0) if t0 is not None else None
    signal.signal(signal.SIGTERM, _interrupted)  # a terminated server still writes its log
    bound = adapters.bind(
        store or default_sample("markets"),
        market,
        t0=when,
        fraction=fraction,
        archive=archive,
        version=version,
        snapshot=snapshot,
    )
    try:
        adapters.serve(
            bound,
            transport,
            host=host,
            port=port,
            log=log,
            announce=lambda url: print(f"serving {url}", file=sys.stderr, flush=True),
        )
    except KeyboardInterrupt:
        pass
    finally:
        bound.close()


def _instant(text: str) -> datetime:
    """--t0 as an aware UTC instant, or one line naming the option (exit 2: a bad value)."""

    try:
        return timeutil.parse_utc(text)
    except ValueError as exc:
        raise fail(
            f"--t0 {text!r}: not an ISO 8601 instant with a zone, e.g. 2025-11-01T00:00:00Z "
            f"({exc})",
            2,
        ) from None


def _interrupted(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt
