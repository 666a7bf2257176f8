"""The Forecaster protocol and Context, the baselines, the model-backed forecasters and outside
bots; `registry` names them. The face other packages import (loaded on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # what mypy sees; at run time each name loads on first use (`lazy`)
    from hindcast.forecasters import inspect_provider, registry
    from hindcast.forecasters.base import Context, Forecaster, ModelForecaster, hooked
    from hindcast.forecasters.inspect_agent import (
        PROMPT,
        evidence_of,
        inspect_tools,
        question_messages,
        require_inspect,
    )
    from hindcast.forecasters.outcomes import Outcomes
    from hindcast.forecasters.tool_server import http_served, mcp_server
    from hindcast.forecasters.tools import Tools, question_view, t0_tools

_WHERE = {
    "Context": "base",
    "ModelForecaster": "base",
    "Outcomes": "outcomes",
    "hooked": "base",
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
