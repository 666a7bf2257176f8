"""The one place a venue client is built (Polymarket, Kalshi: the CLI's pull and
the service's pull job), each over an httpx client whose transport has a breaker per host
(`hosts.HostBreaker`: a host that refuses connections stops the pull)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from hindcast.http import RetryPolicy


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


@contextmanager
def manifold_client(
    manifold_url: str | None = None,
    attempts: int = 5,
    timeout: float = 30.0,
    user_agent: str = "hindcast",
    per_minute: int = 500,
    page_limit: int = 1000,
) -> Iterator:
    """A ManifoldClient over its own httpx client (closed on exit); None URL: Manifold's."""

    from hindcast.markets.manifold import MANIFOLD_URL, ManifoldClient, Pacer

    with _http(user_agent) as http:
        yield ManifoldClient(
            http,
            manifold_url or MANIFOLD_URL,
            RetryPolicy(attempts=attempts, timeout=timeout),
            page_limit=page_limit,
            pacer=Pacer(per_minute),
        )


def pull_from(store, query, now, progress=None, **options):
    """A pull over a client built here: Kalshi for a KalshiQuery (option kalshi_url), Manifold
    for a ManifoldQuery (manifold_url, per_minute, page_limit), else Polymarket (a PullQuery or
    None; options gamma_url, clob_url, data_url); attempts, timeout, user_agent for all."""
    from hindcast.markets import kalshi_pull, manifold_pull, pull

    if isinstance(query, manifold_pull.ManifoldQuery):
        with manifold_client(**options) as client:
            return manifold_pull.pull_manifold(store, client, query, now, progress)
    if isinstance(query, kalshi_pull.KalshiQuery):
        with kalshi_client(**options) as client:
            return kalshi_pull.pull_kalshi(store, client, query, now, progress)
    with polymarket_client(**options) as client:
        return pull.pull(store, client, query or pull.PullQuery(), now, progress)
