"""A fake OpenAI-compatible chat model for tests (hindcast's and users'): scripted answers,
tool calls, HTTP failures and latency.

Use it at the transport (`httpx.AsyncClient(transport=fake.transport())`) or as a real
HTTP server on 127.0.0.1 (`with fake.serve() as base_url: …`, base_url ends in `/v1`).
Each request takes the next scripted step; a step is a `Reply`, a plain string (the
answer text) or a function of the request body returning either. When the script runs
out, `default` answers (or HTTP 500 says the script is exhausted). Every request body and
its headers are kept in `requests` / `headers`. With `require_key`, a request without
`Authorization: Bearer <require_key>` is answered 401 (and takes no scripted step).

    fake = FakeChatModel([error(429, retry_after=0), answer('{"probability": 0.25}')])
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Reply:
    """One scripted response. `body` (raw text) overrides the generated chat completion."""

    content: str | None = None
    tool_calls: tuple[dict, ...] = ()
    status: int = 200
    headers: dict = field(default_factory=dict)
    body: str | None = None
    delay: float = 0.0
    usage: dict | None = None


def answer(content: str, delay: float = 0.0) -> Reply:
    return Reply(content=content, delay=delay)


def tool_call(name: str, arguments: dict | str, delay: float = 0.0) -> Reply:
    """An assistant turn calling one tool (arguments as a dict, or raw text to test bad JSON)."""
    return tool_calls((name, arguments), delay=delay)


def tool_calls(*calls: tuple[str, dict | str], delay: float = 0.0) -> Reply:
    return Reply(tool_calls=tuple({"name": n, "arguments": a} for n, a in calls), delay=delay)


def error(
    status: int,
    body: str = "fake error",
    retry_after: float | str | None = None,
    delay: float = 0.0,
) -> Reply:
    headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
    return Reply(status=status, body=body, headers=headers, delay=delay)


Step = Reply | str | Callable[[dict], "Reply | str"]


class QuietServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer for fakes: a client that drops its kept-alive connection later (a
    reset or broken pipe, often while another test runs) is not printed to stderr; any other
    handler error is printed as usual."""

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


class FakeChatModel:
    """Answers chat-completion requests from a script; thread-safe; counts every request."""

    def __init__(
        self,
        script: Iterable[Step] = (),
        default: Step | None = None,
        model: str = "fake-model",
        require_key: str | None = None,
    ) -> None:
        self._script, self.default, self.model, self.require_key = (
            list(script),
            default,
            model,
            require_key,
        )
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self._lock = threading.Lock()

    def respond(self, body: dict, headers: dict) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append({k.lower(): v for k, v in headers.items()})
            if (
                self.require_key is not None
                and self.headers[-1].get("authorization") != f"Bearer {self.require_key}"
            ):
                return error(401, '{"error": {"message": "invalid api key"}}')
            step = self._script.pop(0) if self._script else self.default
        if callable(step):
            step = step(body)
        if step is None:
            return error(500, "fake chat model: script exhausted")
        return Reply(content=step) if isinstance(step, str) else step

    def render(self, reply: Reply, body: dict) -> tuple[int, dict, bytes]:
        """Status, headers and bytes of a reply to one request body."""
        if reply.body is not None:
            return reply.status, dict(reply.headers), reply.body.encode("utf-8")
        payload = completion(reply, body.get("model") or self.model, len(self.requests))
        return (
            reply.status,
            {"Content-Type": "application/json", **reply.headers},
            json.dumps(payload).encode(),
        )

    # ---- at the transport ---------------------------------------------------------------------
    def transport(self):
        """An `httpx.MockTransport` answering like the server would (latency via asyncio.sleep)."""
        import httpx

        async def handle(request: httpx.Request) -> httpx.Response:
            if request.method == "GET":
                return httpx.Response(200, json=self.models())
            body = json.loads(request.content or b"{}")
            reply = self.respond(body, dict(request.headers))
            if reply.delay:
                await asyncio.sleep(reply.delay)
            status, headers, content = self.render(reply, body)
            return httpx.Response(status, headers=headers, content=content)

        return httpx.MockTransport(handle)

    def models(self) -> dict:
        return {"object": "list", "data": [{"id": self.model, "object": "model"}]}

    # ---- as a real server ---------------------------------------------------------------------
    @contextmanager
    def serve(self, port: int = 0):
        """Serve on 127.0.0.1 (`port`, or a free one) in a thread; yields the base URL (…/v1)."""
        server = QuietServer(("127.0.0.1", port), _handler(self))
        server.daemon_threads, server.block_on_close = True, False
        thread = threading.Thread(
            target=server.serve_forever, args=(0.05,), name="fake-chat-model", daemon=True
        )
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/v1"
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)


def completion(reply: Reply, model: str, n: int) -> dict:
    """An OpenAI chat.completion body for a scripted reply."""
    message: dict = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [_tool_call(i, c) for i, c in enumerate(reply.tool_calls)]
    usage = reply.usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    return {
        "id": f"fake-{n}",
        "object": "chat.completion",
        "model": model,
        "usage": usage,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
    }


def _tool_call(i: int, call: dict) -> dict:
    """One tool call; its id depends only on the call itself, so equal scripts give equal ids."""
    arguments = (
        call["arguments"] if isinstance(call["arguments"], str) else json.dumps(call["arguments"])
    )
    digest = hashlib.sha256(f"{i}:{call['name']}:{arguments}".encode()).hexdigest()[:12]
    return {
        "id": f"call-{digest}",
        "type": "function",
        "function": {"name": call["name"], "arguments": arguments},
    }


def _handler(fake: FakeChatModel):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, like real model servers
        disable_nagle_algorithm = (
            True  # headers and body go out as separate writes: no 40 ms Nagle stall
        )

        def do_GET(self) -> None:
            self._send(
                200, {"Content-Type": "application/json"}, json.dumps(fake.models()).encode()
            )

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length)
            if len(data) < length:  # the client died mid-request (kill -9): never a request
                self.close_connection = True
                return
            body = json.loads(data or b"{}")
            reply = fake.respond(body, dict(self.headers.items()))
            if reply.delay:
                time.sleep(reply.delay)
            self._send(*fake.render(reply, body))

        def _send(self, status: int, headers: dict, content: bytes) -> None:
            try:
                self.send_response(status)
                for key, value in {**headers, "Content-Length": str(len(content))}.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(content)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to answer

        def log_message(self, *args) -> None:
            pass

    return Handler
