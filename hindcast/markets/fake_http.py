"""What the shipped venue fakes (fake_polymarket, fake_kalshi) answer with: one scripted HTTP reply."""

from __future__ import annotations

import json
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Reply:
    """One HTTP answer of a fake: status, raw body, headers."""

    status: int
    body: bytes
    headers: dict = field(default_factory=dict)


def json_reply(value, status: int = 200, headers: dict | None = None) -> Reply:
    """`value` as a JSON answer (Content-Type application/json, plus `headers`)."""
    return Reply(status, json.dumps(value).encode(), {"Content-Type": "application/json", **(headers or {})})
