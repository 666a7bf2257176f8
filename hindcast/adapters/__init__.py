"""Adapters: hindcast's t0-bound tools for agents that run outside it (MCP, Inspect AI, outside
programs). The face; every name loads on first use (the SDKs are optional extras)."""

from __future__ import annotations

import importlib

__all__ = [
    "Bound",
    "Tools",
    "bind",
    "document_view",
    "import_inspect",
    "mcp_server",
    "question_view",
    "read_inspect",
    "serve",
    "store_inspect",
    "t0_tools",
    "write_log",
]
_WHERE = {
    "Bound": "hindcast.adapters.tools",
    "bind": "hindcast.adapters.tools",
    "Tools": "hindcast.forecasters.tools",
    "t0_tools": "hindcast.forecasters.tools",
    "question_view": "hindcast.forecasters.tools",
    "document_view": "hindcast.forecasters.tools",
    "mcp_server": "hindcast.forecasters.tool_server",
    "serve": "hindcast.adapters.mcp",
    "write_log": "hindcast.adapters.mcp",
    **dict.fromkeys(
        ("import_inspect", "read_inspect", "store_inspect"), "hindcast.adapters.inspect_import"
    ),
}


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'hindcast.adapters' has no attribute {name!r}")
