"""Models as a value: the environment (for keys), the response cache, the HTTP factory and
the call settings of a run, built once at the edge and handed to the engine.

    models = Models.from_environment(os.environ, out / "responses.db")
    api.sweep(spec, runs=…, out=out, now=…, models=models)

A `Models` makes and owns the chat clients (one per model spec, key variable and
structured-output mode: one concurrency limit per endpoint), their circuit breakers and
the embedded local model server; `close()` stops the server and closes the cache it
opened. Nothing here is module state: two Models in one process share nothing.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from hindcast.errors import RunStoreError
from hindcast.http import redact
from hindcast.llm import client as llm
from hindcast.llm.cache import ResponseCache
from hindcast.llm.local import SharedServer


class Models:
    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        cache: ResponseCache | None = None,
        http: Callable[[], object] | None = None,
        *,
        timeout: float = 120.0,
        max_retries: int = 3,
        backoff: float = 1.0,
        concurrency: int = 4,
        breaker_threshold: int = 5,
        sleep=asyncio.sleep,
        local: SharedServer | None = None,
        owns_cache: bool = False,
    ) -> None:
        self.env = dict(env or {})
        self.cache = cache if cache is not None else ResponseCache()
        self.http, self.timeout, self.max_retries, self.backoff = (
            http,
            float(timeout),
            int(max_retries),
            float(backoff),
        )
        self.concurrency, self.sleep = int(concurrency), sleep
        self.breakers = llm.Breakers(breaker_threshold)
        self.local = local or SharedServer()
        self._owns_cache = owns_cache or cache is None
        self._clients: dict[tuple, llm.ChatClient] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never the environment
        return f"Models(cache={self.cache.path!r}, clients={len(self._clients)})"

    @classmethod
    def from_environment(
        cls,
        env: Mapping[str, str],
        cache_path: Path | str | None,
        *,
        no_cache: bool = False,
        **settings,
    ) -> "Models":
        """Keys from `env`, responses cached in `cache_path` (`--no-cache`:
        recorded, never replayed)."""
        cache = open_cache(cache_path, "refresh" if no_cache else "use")
        return cls(env, cache, owns_cache=True, **settings)

    def client(
        self, model: str, key_env: str | None = None, structured: str = "json_schema"
    ) -> llm.ChatClient:
        """The shared client of a model spec (made on first use)."""
        spec = llm.parse_model(model, key_env)
        slot = (spec.spec, spec.key_env, structured)
        with self._lock:
            if slot not in self._clients:
                self._clients[slot] = self._new_client(spec, structured)
            return self._clients[slot]

    def reset_breakers(self, threshold: int) -> llm.Breakers:
        """Fresh breakers for a new sweep (a resumed sweep tries every endpoint again)."""
        self.breakers = llm.Breakers(threshold)
        with self._lock:
            for client in self._clients.values():
                client.breakers = self.breakers
        return self.breakers

    def _new_client(self, spec: llm.ModelSpec, structured: str) -> llm.ChatClient:
        common = dict(
            http=self.http() if self.http else None,
            cache=self.cache,
            timeout=self.timeout,
            max_retries=self.max_retries,
            backoff=self.backoff,
            sleep=self.sleep,
            breakers=self.breakers,
        )
        if spec.provider == "local":
            if structured == "json_schema":  # llama.cpp's form, which the local server also reads
                structured = "json_object+schema"
            return llm.ChatClient(
                spec, concurrency=1, base_url=self.local.base_url, structured=structured, **common
            )
        key = self.env.get(spec.key_env) if spec.key_env else None
        return llm.ChatClient(
            spec, api_key=key or None, concurrency=self.concurrency, structured=structured, **common
        )

    async def aclose(self) -> None:
        """Close the HTTP connections the clients opened on the running event loop."""
        with self._lock:
            clients = list(self._clients.values())
        for client in clients:
            await client.aclose()

    def close(self) -> None:
        """Stop the local model server; close the cache if this Models opened it."""
        self.local.close()
        if self._owns_cache:
            self.cache.close()

    def __enter__(self) -> "Models":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_cache(path: Path | str | None, mode: str = "use") -> ResponseCache:
    """A response cache file (or a PostgreSQL database's table, `path` its URL), or one line
    naming it (without a password) when it cannot be opened."""
    import sqlite3

    try:
        return ResponseCache(path if path is not None else ":memory:", mode=mode)
    except (OSError, sqlite3.Error) as exc:
        raise RunStoreError(
            f"cannot open the response cache {redact(path)}: {redact(exc)}"
        ) from None
    except (
        Exception
    ) as exc:  # psycopg's errors (a PostgreSQL cache), imported only when one is used
        if type(exc).__module__.split(".")[0] != "psycopg":
            raise
        raise RunStoreError(
            f"cannot open the response cache in {redact(path)}: {redact(exc)}"
        ) from None


class Fallback:
    """The Models used by a chat forecaster called outside an engine (no `bind`): an empty
    environment and an in-memory cache, made on first use. It cannot be configured: to give
    a forecaster keys or a cache, bind it to a Models (`forecaster.bind(models)`)."""

    def __init__(self) -> None:
        self._models: Models | None = None
        self._lock = threading.Lock()

    def get(self) -> Models:
        with self._lock:
            if self._models is None:
                self._models = Models()
            return self._models


FALLBACK = Fallback()
