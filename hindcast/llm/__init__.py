"""The chat-model stack (below `hindcast.leaks` and `hindcast.forecasters`; the audit's probe and
the Inspect adapters use it too): `client` (OpenAI-compatible chat client, model specs, usage,
circuit breakers), `cache` (the response cache), `models` (the Models value: clients sharing one
cache and one local server), `local` + `local_server` (the embedded local model), `fake` (the
shipped fake chat model), `answers` (reading a probability from an answer), `prompts` (the
prompt templates, files identified by their sha256). Loaded on first use (httpx, torch)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # what mypy sees; at run time each name loads on first use (`lazy`)
    from hindcast.llm import client, local, prompts
    from hindcast.llm.answers import (
        PROBABILITY_SCHEMA,
        REPAIR,
        Parsed,
        ask_probability,
        check,
        parse_probability,
        raw_text,
    )
    from hindcast.llm.cache import MODES, ResponseCache, is_postgresql, request_key
    from hindcast.llm.client import (
        OPENAI_URL,
        STRUCTURED,
        Breakers,
        ChatClient,
        ChatReply,
        ModelSpec,
        Usage,
        check_key_env,
        parse_model,
    )
    from hindcast.llm.fake import FakeChatModel, Reply, answer, error, tool_call, tool_calls
    from hindcast.llm.local import LocalServer, SharedServer
    from hindcast.llm.models import FALLBACK, Models, open_cache

_WHERE = {
    "answer": "fake",
    "ask_probability": "answers",
    "Breakers": "client",
    "ChatClient": "client",
    "ChatReply": "client",
    "check": "answers",
    "check_key_env": "client",
    "client": "client",
    "error": "fake",
    "FakeChatModel": "fake",
    "FALLBACK": "models",
    "is_postgresql": "cache",
    "local": "local",
    "LocalServer": "local",
    "Models": "models",
    "ModelSpec": "client",
    "MODES": "cache",
    "open_cache": "models",
    "OPENAI_URL": "client",
    "parse_model": "client",
    "parse_probability": "answers",
    "Parsed": "answers",
    "PROBABILITY_SCHEMA": "answers",
    "prompts": "prompts",
    "raw_text": "answers",
    "REPAIR": "answers",
    "Reply": "fake",
    "request_key": "cache",
    "ResponseCache": "cache",
    "SharedServer": "local",
    "STRUCTURED": "client",
    "tool_call": "fake",
    "tool_calls": "fake",
    "Usage": "client",
}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy(
    __name__,
    _WHERE,
    modules=(
        "client",
        "local",
        "prompts",
    ),
)
