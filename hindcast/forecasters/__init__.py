"""The Forecaster protocol and Context, the baselines, the model-backed forecasters and outside
bots; `registry` names them. The face other packages import (loaded on first use)."""

from __future__ import annotations

# isort: skip_file
# fmt: off
from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # each name loads from its module on first use (hindcast.faces.lazy)
    from hindcast.forecasters import inspect_provider, registry
    from hindcast.forecasters.base import Context, Forecaster, ModelForecaster, hooked
    from hindcast.forecasters.inspect_agent import (PROMPT, evidence_of, inspect_tools,
        question_messages, require_inspect)
    from hindcast.forecasters.outcomes import Outcomes
    from hindcast.forecasters.tool_server import http_served, mcp_server
    from hindcast.forecasters.tools import Tools, question_view, t0_tools

__all__ = ["Context", "Forecaster", "ModelForecaster", "Outcomes", "PROMPT", "Tools",
    "evidence_of", "hooked", "http_served", "inspect_provider", "inspect_tools", "mcp_server",
    "question_messages", "question_view", "registry", "require_inspect", "t0_tools"]
# fmt: on
__getattr__, __dir__ = lazy(__name__, __file__)
