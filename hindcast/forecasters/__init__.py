"""The Forecaster protocol and Context, the baselines, the model-backed forecasters and outside bots; `registry` names them. The face other packages import (loaded on first use)."""

from __future__ import annotations

from hindcast.faces import lazy

_WHERE = {
    "Context": "base",
    "evidence_of": "inspect_agent",
    "Forecaster": "base",
    "http_served": "tool_server",
    "inspect_provider": "inspect_provider",
    "inspect_tools": "inspect_agent",
    "mcp_server": "tool_server",
    "PROMPT": "inspect_agent",
    "question_messages": "inspect_agent",
    "question_view": "tools",
    "registry": "registry",
    "require_inspect": "inspect_agent",
    "t0_tools": "tools",
    "Tools": "tools",
}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy(
    __name__,
    _WHERE,
    modules=(
        "inspect_provider",
        "registry",
    ),
)
