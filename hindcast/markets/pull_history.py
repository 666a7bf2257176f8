"""A pulled market's YES price history (Polymarket): reused from the store, read from the pull's
cache, or fetched — the Data API's `/v2/prices-history` (whole life, 3-hour buckets) when it
serves the market, else CLOB windows of at most 15 days from opening to resolution at the
finest fidelity that answers. Each stored market records the route, bucket and price
definition; a history shorter than the market's life is stored and reported.

A market whose history cannot be fetched or read is named in the summary's `failed` and left
out; the pull goes on. A host that cannot be reached at all is not a market's failure: the
client's breaker (`markets.hosts`) raises `HostDown`, which passes through and stops the pull.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from hindcast.errors import MalformedMarket, PolymarketError
from hindcast.markets.bundle import MarketBundle
from hindcast.markets.parse import ParsedMarket, parse_data_history, parse_history
from hindcast.markets.polymarket import DATA_BUCKET_SECONDS, FIDELITIES, PolymarketClient
from hindcast.records import PricePoint
from hindcast.timeutil import from_unix, iso, to_unix

if TYPE_CHECKING:
    from hindcast.markets.pull import PullSummary, WorkDir

HISTORIES = "price histories"  # the progress step of this module
DATA_ROUTE = "data-api /v2/prices-history"
CLOB_ROUTE = "clob /prices-history windows"
PRICE_DEFINITION = (
    "midpoint (unconfirmed)"  # Polymarket does not define p; measured as the book midpoint
)
NO_HISTORY = "no price history"  # a skip reason: neither route served a point


@dataclass(frozen=True)
class Pulled:
    parsed: ParsedMarket
    prices: tuple[PricePoint, ...]


def with_histories(client, work, parsed, previous, summary, progress) -> list[Pulled]:
    """Each parsed market with its history (`progress(HISTORIES, done, total)` after each)."""
    pulled = []
    if progress:
        progress(HISTORIES, 0, len(parsed))
    for done, market in enumerate(parsed, start=1):
        try:
            item = _pulled(client, work, market, previous, summary)
            pulled += [item] if item else []
        except (PolymarketError, MalformedMarket) as exc:
            summary.failed.append(failure(market.market.id, exc))
        if progress:
            progress(HISTORIES, done, len(parsed))
    return pulled


def failure(market_id: str, exc: Exception) -> str:
    """A failed market's line: a MalformedMarket names its market already, a request's error
    (a URL and a reason) gets the market's id in front."""
    return str(exc) if isinstance(exc, MalformedMarket) else f"market {market_id}: {exc}"


def _pulled(
    client, work: WorkDir, market: ParsedMarket, previous, summary: PullSummary
) -> Pulled | None:
    """The market with its history and the history's provenance; None when no route served
    a point (skipped, counted). A history that does not span the market's life is stored and
    reported (`summary.incomplete`)."""
    stored = _stored_history(previous, market)
    summary.histories_reused += stored is not None
    points, meta = (
        stored
        or _cached_history(work, market, summary)
        or _fetch_history(client, work, market, summary)
    )
    if not points:
        summary.skipped[NO_HISTORY] += 1
        return None
    gap = _short_of_life(market, points, meta.price_bucket_seconds or 0)
    if gap:
        summary.incomplete[market.market.id] = gap
    summary.routes[meta.price_route] += 1
    _note_changes(previous, market.market.id, points, summary)
    return Pulled(replace(market, meta=meta), points)


def _provenance_meta(market: ParsedMarket, route: str, bucket: int):
    return replace(
        market.meta,
        history_fidelity=bucket // 60,
        price_route=route,
        price_bucket_seconds=bucket,
        price_definition=PRICE_DEFINITION,
    )


def _stored_history(previous: MarketBundle | None, market: ParsedMarket):
    """The history an earlier pull stored for the same market and token by a route that
    reaches back (a history stored before routes were recorded is fetched again)."""
    meta = previous.meta.get(market.market.id) if previous else None
    if (
        previous is None
        or meta is None
        or not meta.price_route
        or meta.yes_token != market.meta.yes_token
    ):
        return None
    kept = replace(
        market.meta,
        history_fidelity=meta.history_fidelity,
        price_route=meta.price_route,
        price_bucket_seconds=meta.price_bucket_seconds,
        price_definition=meta.price_definition,
    )
    return previous.prices.get(market.market.id, ()), kept


def _cached_history(work: WorkDir, market: ParsedMarket, summary: PullSummary):
    record = work.history(market.market.id)
    if record is None or "route" not in record:  # a 2025 cache entry (interval=max): fetched again
        return None
    summary.histories_cached += 1
    points = tuple(PricePoint(from_unix(t), p) for t, p in record["points"])
    return points, _provenance_meta(market, record["route"], record["bucket_seconds"])


def _fetch_history(
    client: PolymarketClient, work: WorkDir, market: ParsedMarket, summary: PullSummary
):
    """The YES token's whole history: the Data API (`interval=max`, 3-hour buckets) when it
    serves the market, else CLOB windows of ≤ 15 days from opening to resolution, at the
    finest fidelity that answers (resolved markets often answer only coarse ones)."""
    token, market_id = market.meta.yes_token, market.market.id
    raw = client.data_history(token, DATA_BUCKET_SECONDS)
    route, bucket = DATA_ROUTE, DATA_BUCKET_SECONDS
    points = parse_data_history(market_id, raw)
    if not points:
        route, bucket, points = CLOB_ROUTE, *_clob_history(client, market)
    work.save_history(
        market_id,
        {
            "token_id": token,
            "route": route,
            "bucket_seconds": bucket,
            "points": [[to_unix(p.t), p.p] for p in points],
        },
    )
    summary.histories_fetched += 1
    return points, _provenance_meta(market, route, bucket)


def _clob_history(
    client: PolymarketClient, market: ParsedMarket
) -> tuple[int, tuple[PricePoint, ...]]:
    opened = market.market.opened_at
    if opened is None:
        raise MalformedMarket(
            market.market.id, "no startDate or createdAt: cannot fetch its history from its opening"
        )
    start, end = to_unix(opened), to_unix(market.resolution.known_at)
    for fidelity in FIDELITIES:
        points = parse_history(
            market.market.id, client.windowed_history(market.meta.yes_token, start, end, fidelity)
        )
        if points:
            return fidelity * 60, points
    return FIDELITIES[-1] * 60, ()


def _short_of_life(market: ParsedMarket, points: tuple[PricePoint, ...], bucket: int) -> str:
    """Why the history does not span the market's life ('' when it does): its first point
    more than max(2 buckets, 1 day) after the opening, or its last as long before resolution."""
    slack = max(2 * bucket, 86400)
    opened, resolved = market.market.opened_at, market.resolution.resolved_at
    if opened is not None and to_unix(points[0].t) - to_unix(opened) > slack:
        return f"history starts {iso(points[0].t)}, the market opened {iso(opened)}"
    if to_unix(resolved) - to_unix(points[-1].t) > slack:
        return f"history ends {iso(points[-1].t)}, the market resolved {iso(resolved)}"
    return ""


def _note_changes(
    previous: MarketBundle | None, market_id: str, points, summary: PullSummary
) -> None:
    """A stored point that this pull's history changes (same instant, another price, or gone)."""
    old = dict((p.t, p.p) for p in previous.prices.get(market_id, ())) if previous else {}
    new = dict((p.t, p.p) for p in points)
    if any(new.get(t) != p for t, p in old.items()):
        summary.histories_changed.append(market_id)
