"""`hindcast mcp serve`: one (market, t0) served over MCP, stdio or streamable HTTP.

The server process owns t0: it builds the Question and the Context exactly as a sweep does
(`adapters.tools.bind`), serves the t0-bound tools (`forecasters.tool_server`) and writes the calls
it served — the run's retrieval format, one entry a call — to its log file after every call and
once more on exit (so the log is there "on request" at any moment, and after a kill).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from hindcast.adapters.tools import Bound
from hindcast.errors import ConfigError
from hindcast.forecasters import http_served, mcp_server
from hindcast.runs import retrievals_form
from hindcast.timeutil import iso

TRANSPORTS = ("stdio", "http")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def served_log(bound: Bound) -> dict:
    """The calls served so far: the (market, t0) and its retrieval log."""
    return {
        "market_id": bound.question.market_id,
        "t0": iso(bound.question.t0),
        "label": bound.cutoff.label,
        "retrievals": retrievals_form(bound.ctx.retrievals),
    }


def write_log(bound: Bound, path: Path) -> Path:
    """Write `served_log(bound)` to `path` atomically (a reader never sees half a file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    part.write_text(
        json.dumps(served_log(bound), indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    os.replace(part, path)
    return path


def serve(
    bound: Bound,
    transport: str = "stdio",
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    log: Path | None = None,
    announce: Callable[[str], None] = lambda url: None,
) -> None:
    """Serve `bound` until the client goes (stdio) or the process is interrupted (HTTP);
    `announce(url)` once an HTTP server listens. The log is written after each call and at exit."""
    import anyio

    if transport not in TRANSPORTS:
        raise ConfigError(f"--transport {transport!r}: use {' or '.join(TRANSPORTS)}")

    def keep() -> None:
        if log is not None:
            write_log(bound, log)

    server = mcp_server(bound.tools, on_call=keep)
    keep()  # an empty log from the start: the file exists as soon as the server does
    try:
        if transport == "stdio":
            anyio.run(server.run_stdio_async)
        else:
            anyio.run(_http, server, host, port, announce)
    finally:
        keep()


async def _http(server, host: str, port: int, announce: Callable[[str], None]) -> None:
    import anyio

    async with http_served(server, host, port) as url:
        announce(url)
        await anyio.sleep_forever()
