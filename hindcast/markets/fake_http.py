"""What the shipped venue fakes (fake_polymarket, fake_kalshi, fake_manifold) answer with: one
scripted HTTP reply; and how a fake's `answer(path, query)` is served, in process or on
127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit


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


Answer = Callable[[str, list], Reply]  # (path under the prefix, query pairs) → Reply


def mock_transport(answer: Answer, prefix: str):
    """An `httpx.MockTransport` answering from `answer` (requests under `prefix`, any host)."""
    import httpx

    def handle(request: httpx.Request) -> httpx.Response:
        path = request.url.path.removeprefix(prefix) or "/"
        reply = answer(path, list(request.url.params.multi_items()))
        return httpx.Response(reply.status, content=reply.body, headers=reply.headers)

    return httpx.MockTransport(handle)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:  # a client that hung up: not news
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


@contextmanager
def serve(answer: Answer, prefix: str) -> Iterator[str]:
    """`answer` over HTTP on 127.0.0.1 (a free port); yields the base URL (… + prefix)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            parts = urlsplit(self.path)
            query = parse_qsl(parts.query, keep_blank_values=True)
            send_reply(self, answer(parts.path.removeprefix(prefix) or "/", query))

        def log_message(self, *args) -> None:
            pass

    server = _Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{prefix}"
    finally:
        server.shutdown()
        server.server_close()
