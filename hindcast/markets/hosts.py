"""A breaker per host under a venue client: when a host refuses the connection or fails DNS
`threshold` times in a row, the pull stops as an outage (`HostDown`, exit 4) instead of
retrying every market with back-off (with the Data API down, 5 attempts a market took ~15 s:
40 hours for 10,000 markets, and then a pull that stored nothing).

`HostBreaker` wraps the httpx transport, so it counts every attempt the retry loop makes
(`hindcast.http` retries transport errors; an error raised here is not one, and passes
through it at once). Any answer from a host, whatever its status, resets that host's count:
a host that answers 500 is slow or broken, not gone, and the retry policy handles it. A
connect timeout counts as a failed connection too (the host did not accept one).
"""

from __future__ import annotations

from collections import Counter

import httpx

from hindcast.errors import HostDown

BREAKER_THRESHOLD = 3  # failed connections in a row to one host before the pull stops


class HostBreaker(httpx.BaseTransport):
    """`inner` with a count of failed connections in a row per host (host:port)."""

    def __init__(self, inner: httpx.BaseTransport, threshold: int = BREAKER_THRESHOLD):
        if threshold < 1:
            raise ValueError(f"threshold={threshold}: at least one failed connection")
        self.inner, self.threshold, self.failures = inner, threshold, Counter[str]()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        host = _host(request.url)
        try:
            response = self.inner.handle_request(request)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            self.failures[host] += 1
            if self.failures[host] >= self.threshold:
                raise HostDown(host, self.failures[host], f"{type(exc).__name__}: {exc}") from None
            raise
        self.failures[host] = 0
        return response

    def close(self) -> None:
        self.inner.close()


def _host(url: httpx.URL) -> str:
    """host:port of a URL (never its userinfo, path or query)."""
    port = url.port or {"http": 80, "https": 443}.get(url.scheme)
    return f"{url.host}:{port}" if port else url.host
