"""The fake chat server records a request only when its whole body arrived: a client killed
mid-request (kill -9 between the headers and the body) sent no request, as with a real server."""

import json
import socket
import urllib.parse

from hindcast.llm.fake import FakeChatModel, answer


def _send(url: str, head_only: bool) -> None:
    parts = urllib.parse.urlsplit(url)
    body = json.dumps({"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]})
    head = (
        f"POST {parts.path.rstrip('/')}/chat/completions HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    with socket.create_connection((parts.hostname, parts.port), timeout=5) as sock:
        sock.sendall(head.encode() + (b"" if head_only else body.encode()))
        if head_only:  # the headers went out, then the client died before its body
            sock.shutdown(socket.SHUT_WR)
        sock.recv(65536)  # the reply, or the server closing a cut request


def test_a_request_cut_mid_body_is_not_recorded_and_a_whole_one_is():
    fake = FakeChatModel(default=answer('{"probability": 0.42}'))
    with fake.serve() as url:
        _send(url, head_only=True)
        assert fake.requests == []
        _send(url, head_only=False)
        assert [r["messages"][0]["content"] for r in fake.requests] == ["hi"]
