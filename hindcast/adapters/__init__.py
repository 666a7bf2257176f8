"""Adapters: hindcast's t0-bound tools for agents that run outside it (MCP, Inspect AI, outside
programs). The face; every name loads on first use (the SDKs are optional extras)."""

from __future__ import annotations

# isort: skip_file
# fmt: off
from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # each name loads from its module on first use (hindcast.faces.lazy)
    from hindcast.adapters.inspect_import import read_inspect, store_inspect
    from hindcast.adapters.mcp import serve
    from hindcast.adapters.tools import Bound, bind
    from hindcast.forecasters import question_view, t0_tools

__all__ = ["Bound", "bind", "question_view", "read_inspect", "serve", "store_inspect", "t0_tools"]
# fmt: on
__getattr__, __dir__ = lazy(__name__, __file__)
