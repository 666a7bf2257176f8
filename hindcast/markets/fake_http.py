"""What the shipped venue fakes (fake_polymarket, fake_kalshi) answer with:
one scripted HTTP reply."""

from __future__ import annotations

import json
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Reply:
    """One HTTP answer of a fake: status, raw body, headers."""

    status: int
    body: bytes
    headers: dict = field(default_factory=dict)


def send_reply(handler, reply: Reply) -> None:
    """Write `reply` through an http.server request handler (status, headers, body)."""
    handler.send_response(reply.status)
    for name, value in {**reply.headers, "Content-Length": str(len(reply.body))}.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(reply.body)


def json_reply(value, status: int = 200, headers: dict | None = None) -> Reply:
    """`value` as a JSON answer (Content-Type application/json, plus `headers`)."""
    return Reply(
        status, json.dumps(value).encode(), {"Content-Type": "application/json", **(headers or {})}
    )
