"""SQLite response cache for chat calls, keyed by the sha256 of the full request.

The key covers everything that can change an answer: endpoint, model, every body
parameter (messages, tools, response_format, temperature, max_tokens, seed …) and a
repeat index, so `temperature > 0` with `repeat=i` caches each sample separately and a
re-run of the same spec replays them all without a request. Credentials are never part
of a request body, so none reach the cache.

Modes: `use` (read and write, the default), `refresh` (write, never read: `--no-cache`
that still records), `off` (neither).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

CacheMode = Literal["use", "refresh", "off"]
MODES = ("use", "refresh", "off")
_SCHEMA = "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, request TEXT NOT NULL, response TEXT NOT NULL)"


def canonical(value: object) -> str:
    """The one JSON text of a value: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def request_key(endpoint: str, body: Mapping, repeat: int = 0, attempt: int = 0) -> str:
    """sha256 of endpoint + full request body (model, parameters, messages, tools) + repeat index
    (+ the attempt number of a retried failure, when not 0: a retry is asked anew, then cached)."""
    key = {"endpoint": endpoint.rstrip("/"), "body": body, "repeat": int(repeat)}
    if attempt:
        key["attempt"] = int(attempt)
    text = canonical(key)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """Request key → response JSON, in one SQLite file (or `:memory:`). Safe across threads."""

    def __init__(self, path: str | Path = ":memory:", mode: CacheMode = "use"):
        if mode not in MODES:
            raise ValueError(f"cache mode {mode!r}: use {', '.join(MODES)}")
        self.path, self.mode = str(path), mode
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        if self.path != ":memory:":
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # each write survives a killed process
        self._db.execute(_SCHEMA)

    def get(self, key: str) -> dict | None:
        if self.mode != "use":
            return None
        with self._lock:
            row = self._db.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, request: Mapping, response: Mapping) -> None:
        if self.mode == "off":
            return
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses (key, request, response) VALUES (?, ?, ?)",
                             (key, canonical(request), canonical(response)))

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
