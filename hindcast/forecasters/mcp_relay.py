"""`python -m hindcast.forecasters.mcp_relay URL`: a stdio MCP server relaying every tool call
to the streamable-HTTP server at URL (the `command:` forecaster's HINDCAST_MCP_COMMAND, for
programs whose MCP client only spawns servers). The tools, their schemas and the question
resource are the same definitions; the calls are served — and logged — by the server at URL."""

from __future__ import annotations

import sys

from hindcast.forecasters.tool_server import mcp_server
from hindcast.forecasters.tools import Tools


def relayed(client) -> Tools:
    """Tools whose every call is `client.call_tool` on the remote server (run from the SDK's worker
    threads, as sync tools are); a remote error comes back as its message."""
    import anyio.from_thread

    def call(name: str, key: str | None, arguments: dict):
        result = anyio.from_thread.run(client.call_tool, name, arguments)
        if result.is_error:
            raise ValueError(
                " ".join(getattr(c, "text", "") for c in result.content) or f"{name} failed"
            )
        return result.structured_content[key] if key else result.structured_content

    return Tools(
        search=lambda query, k=5, mode="hybrid": call(
            "search", "hits", {"query": query, "k": k, "mode": mode}
        ),
        read=lambda doc_id: call("read", "document", {"doc_id": doc_id}),
        thread=lambda submission_id: call("thread", "documents", {"submission_id": submission_id}),
        price_history=lambda: call("price_history", "prices", {}),
        resolved_before=lambda: call("resolved_before", "resolutions", {}),
        question_at_t0=lambda **_: call("question", None, {}),
        log=lambda: (),
    )


async def relay(url: str) -> None:
    from mcp import Client

    async with Client(url) as client:
        await mcp_server(relayed(client)).run_stdio_async()


def main(argv: list[str]) -> int:
    import anyio

    if len(argv) != 1:
        print("usage: python -m hindcast.forecasters.mcp_relay URL", file=sys.stderr)
        return 2
    anyio.run(relay, argv[0])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
