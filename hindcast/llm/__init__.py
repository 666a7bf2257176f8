"""The chat-model stack (below `hindcast.leaks` and `hindcast.forecasters`; the audit's probe and
the Inspect adapters use it too): `client` (OpenAI-compatible chat client, model specs, usage,
circuit breakers), `cache` (the response cache), `models` (the Models value: clients sharing one
cache and one local server), `local` + `local_server` (the embedded local model), `fake` (the
shipped fake chat model), `answers` (reading a probability from an answer), `prompts` (the
prompt templates, files identified by their sha256). Loaded on first use (httpx, torch)."""

from __future__ import annotations

# isort: skip_file
# fmt: off
from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # each name loads from its module on first use (hindcast.faces.lazy)
    from hindcast.llm import client, local, prompts
    from hindcast.llm.answers import ask_probability, check, parse_probability, raw_text
    from hindcast.llm.cache import ResponseCache, is_postgresql
    from hindcast.llm.client import STRUCTURED, Breakers
    from hindcast.llm.fake import FakeChatModel
    from hindcast.llm.models import FALLBACK, Models

__all__ = ["Breakers", "FALLBACK", "FakeChatModel", "Models", "ResponseCache", "STRUCTURED",
    "ask_probability", "check", "client", "is_postgresql", "local", "parse_probability", "prompts",
    "raw_text"]
# fmt: on
__getattr__, __dir__ = lazy(__name__, __file__)
