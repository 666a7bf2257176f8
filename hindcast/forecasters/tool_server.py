"""The t0-bound tools of one (market, t0) served over MCP (official Python SDK `mcp` 2.x,
`mcp.server.mcpserver.MCPServer`, imported lazily: the `mcp` extra).

Tools: `search(query, k, mode)`, `read(doc_id)`, `thread(submission_id)`, `price_history()`,
`resolved_before()`, `question()`; resource `hindcast://question` (the question as it stood at t0,
and t0). Each tool answers one JSON object (structured content, and the same JSON as text).
No tool takes a time: the SDK builds each tool's schema from the signature below and drops any
argument a client adds (`t0`, `until`, `before` …) before the tool runs. Every call goes
through `forecasters.tools`, so it lands in the Context's retrieval log; `on_call` is told after
each one (the CLI server rewrites its log file then).

`http_served(server)` runs a server over streamable HTTP on a free loopback port inside the
current event loop, for as long as the `async with` lasts (the `command:` forecaster's bots
reach their (market, t0) through it).
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from hindcast.errors import ConfigError, HindcastError, LeakageError
from hindcast.forecasters.tools import Tools

QUESTION_URI = "hindcast://question"
MCP_EXTRA = "the MCP server needs the optional extra `mcp`: pip install 'hindcast-replay[mcp]'"
PATH = "/mcp"
INSTRUCTIONS = (
    "A replay of one prediction market at a past instant t0. Every tool sees only what existed "
    "strictly before t0; the resource hindcast://question (and the tool `question`) holds the "
    "question and t0. No tool takes a date: t0 belongs to the server."
)


def require_mcp():
    """The SDK's MCPServer class, or a ConfigError naming the extra to install."""
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError as exc:
        raise ConfigError(MCP_EXTRA) from exc
    return MCPServer


def mcp_server(
    tools: Tools,
    on_call: Callable[[], None] = lambda: None,
    name: str = "hindcast",
    on_leak: Callable[[Exception], None] = lambda exc: None,
):
    """An MCPServer exposing `tools` (and the question resource); `on_call()` after each tool call,
    `on_leak(exc)` when the harness refused something from at or after t0 (a defect: stop)."""
    server = _logging_refusals(require_mcp(), tools.note, on_call)(
        name, instructions=INSTRUCTIONS, log_level="ERROR"
    )
    for fn in _functions(tools, on_call, on_leak):
        # the docstring as one line: its wrapping is the source's, not the description's
        server.tool(name=fn.__name__, description=" ".join(fn.__doc__.split()))(fn)

    def question_resource() -> str:
        answer = json.dumps(tools.question_at_t0(via=QUESTION_URI), sort_keys=True)
        on_call()
        return answer

    server.resource(
        QUESTION_URI,
        name="question",
        mime_type="application/json",
        description="The question as it stood at t0, and t0.",
    )(question_resource)
    return server


def _logging_refusals(base: type, note: Callable[..., None], on_call: Callable[[], None]) -> type:
    """The SDK's server class whose refused tool calls — arguments the SDK's validation refused
    (`k: true`, `k: "5"`, a missing query), an unknown tool, a tool that refused — are logged as
    `refused` entries (tool, the arguments' names and values, the reason) before the refusal
    is answered."""
    from mcp.server.mcpserver.exceptions import ToolError

    class Logging(base):  # type: ignore[misc, valid-type]
        async def call_tool(self, name, arguments, context=None):
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                note("refused", tool=str(name), arguments=_shown(arguments), reason=str(exc)[:500])
                on_call()
                raise

    return Logging


def _shown(arguments) -> dict:
    """A refused call's arguments as stored: JSON values, each text cut at 500 characters."""
    shown = json.loads(json.dumps(arguments or {}, default=str))
    return {str(k): v[:500] if isinstance(v, str) else v for k, v in shown.items()}


def _functions(
    tools: Tools, on_call: Callable[[], None], on_leak: Callable[[Exception], None]
) -> list[Callable]:
    """The tools with explicit signatures (the SDK builds each schema from its signature)."""

    def done(value: dict) -> dict:
        on_call()
        return value

    def guarded(fn: Callable) -> Callable:
        """A refused call (bad k, no archive …) answers the reason as a tool error; a LeakageError
        (a harness defect) goes to `on_leak` too, so whoever runs the server can stop."""

        @functools.wraps(fn)
        def call(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except LeakageError as exc:
                on_leak(exc)
                raise tool_error(f"refused: {exc}") from exc
            except (HindcastError, ValueError) as exc:
                raise tool_error(str(exc)) from exc

        return call

    def search(query: str, k: int = 5, mode: str = "hybrid") -> dict[str, Any]:
        """Search the news archive as it stood before t0, best first: {"hits": [...]}. mode: vector,
        text or hybrid; k: 1 to 50."""
        return done({"hits": tools.search(query, k, mode)})

    def read(doc_id: str) -> dict[str, Any]:
        """One archive document by id if it existed before t0: {"document": {...} or null}."""
        return done({"document": tools.read(doc_id)})

    def thread(submission_id: str) -> dict[str, Any]:
        """A submission and its comments created before t0, in time order: {"documents": [...]}."""
        return done({"documents": tools.thread(submission_id)})

    def price_history() -> dict[str, Any]:
        """This market's YES prices known strictly before t0, oldest first:
        {"prices": [{"t", "p"}]}."""
        return done({"prices": tools.price_history()})

    def resolved_before() -> dict[str, Any]:
        """Other markets whose outcome was public before t0: {"resolutions":
        [{"market_id", "outcome"}]}."""
        return done({"resolutions": tools.resolved_before()})

    def question() -> dict[str, Any]:
        """The question as it stood at t0, and t0 itself."""
        return done(dict(tools.question_at_t0()))

    from pydantic import StrictInt  # (the SDK's own dependency)

    # the schema stays {"type": "integer"}; the SDK's validation no longer turns true into 1 or
    # "5" into 5 before our check: such a call is refused (and logged as refused)
    search.__annotations__["k"] = StrictInt
    return [guarded(f) for f in (search, read, thread, price_history, resolved_before, question)]


def tool_error(message: str) -> Exception:
    from mcp.server.mcpserver.exceptions import ToolError

    return ToolError(message)


@contextlib.asynccontextmanager
async def http_served(server, host: str = "127.0.0.1", port: int = 0) -> AsyncIterator[str]:
    """Serve `server` over streamable HTTP at http://host:port/mcp (port 0: a free one) within
    the current event loop; yields the URL; stops when the block ends."""
    import asyncio
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host} port {port}: {exc.strerror or exc}") from None
    app = server.streamable_http_app(host=host, streamable_http_path=PATH)
    runner = _quiet_server()(uvicorn.Config(app, log_level="error", lifespan="on"))
    task = asyncio.create_task(runner.serve(sockets=[sock]))
    try:
        while not runner.started and not task.done():
            await asyncio.sleep(0.01)
        if task.done():
            task.result()  # the server could not start: its error
        shown = f"[{host}]" if ":" in host else host
        yield f"http://{shown}:{sock.getsockname()[1]}{PATH}"
    finally:
        runner.should_exit = True
        with contextlib.suppress(Exception):
            await task
        sock.close()


def _quiet_server():
    import uvicorn

    class Quiet(uvicorn.Server):
        """A uvicorn server that leaves the process's signal handlers alone (it
        runs inside a sweep)."""

        @contextlib.contextmanager
        def capture_signals(self):
            yield

    return Quiet
