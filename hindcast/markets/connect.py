"""The one place a venue client is built (Polymarket, Kalshi: the CLI's pull and
the service's pull job), each over an httpx client whose transport has a breaker per host
(`hosts.HostBreaker`: a host that refuses connections stops the pull)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def polymarket_client(
    gamma_url: str | None = None,
    clob_url: str | None = None,
    attempts: int = 5,
    timeout: float = 30.0,
    user_agent: str = "hindcast",
    data_url: str | None = None,
) -> Iterator:
    """A PolymarketClient over its own httpx client (closed on exit); None URLs: Polymarket's."""
    from hindcast.markets.polymarket import (
        CLOB_URL,
        DATA_URL,
        GAMMA_URL,
        PolymarketClient,
        RetryPolicy,
    )

    retry = RetryPolicy(attempts=attempts, timeout=timeout)
    with _http(user_agent) as http:
        yield PolymarketClient(
            http, gamma_url or GAMMA_URL, clob_url or CLOB_URL, retry, data_url=data_url or DATA_URL
        )


@contextmanager
def kalshi_client(
    kalshi_url: str | None = None,
    attempts: int = 5,
    timeout: float = 30.0,
    user_agent: str = "hindcast",
) -> Iterator:
    """A KalshiClient over its own httpx client (closed on exit); None URL: Kalshi's."""
    from hindcast.http import RetryPolicy
    from hindcast.markets.kalshi import KALSHI_URL, KalshiClient

    with _http(user_agent) as http:
        yield KalshiClient(
            http, kalshi_url or KALSHI_URL, RetryPolicy(attempts=attempts, timeout=timeout)
        )


def _http(user_agent: str):
    """An httpx client whose transport stops on a host that cannot be reached."""
    import httpx

    from hindcast.markets.hosts import HostBreaker

    transport = HostBreaker(httpx.HTTPTransport())
    return httpx.Client(headers={"User-Agent": user_agent}, transport=transport)


def pull_from(store, query, now, progress=None, **options):
    """A pull over a client built here: Kalshi for a KalshiQuery (option kalshi_url), else
    Polymarket (a PullQuery or None; options gamma_url, clob_url, data_url); attempts,
    timeout, user_agent for both."""
    from hindcast.markets import kalshi_pull, pull

    if isinstance(query, kalshi_pull.KalshiQuery):
        with kalshi_client(**options) as client:
            return kalshi_pull.pull_kalshi(store, client, query, now, progress)
    with polymarket_client(**options) as client:
        return pull.pull(store, client, query or pull.PullQuery(), now, progress)
