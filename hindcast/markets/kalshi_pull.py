"""A resumable pull of settled binary Kalshi markets and their candles into the market store.

1. `GET /historical/cutoff` splits the data: the live `/markets?status=settled` lists markets
   settled since `market_settled_ts`, `/historical/markets` the ones before (a market is
   listed on one side; a ticker listed on both is kept once). With `since` at or after the
   cutoff the historical side cannot hold a match and is not asked.
2. Each listed market is parsed (`kalshi_parse`): not binary, not `finalized`, no yes/no
   result → skipped, counted by reason; unreadable → failed, named.
3. Its hourly candles, from its opening to its close, come from the side it belongs to
   (historical if listed there or settled before the cutoff). Candles are cached in
   `STORE/.pull/kalshi-<query key>/histories/` as they arrive, so a killed pull re-run
   asks only for what it lacks; a market the store already holds from Kalshi keeps its
   stored candles (a settled market's candles do not change).
4. The pulled markets are merged into the latest version (`pull.merge`: Polymarket markets
   already there are kept) and a new version is frozen; the cache is removed. A pull that
   stored nothing writes no version (`version` ""), keeping its cache when markets failed.

`progress(step, done, total)`: `pull.LISTING` with the markets listed so far (total None until
the listing ends), then `CANDLES` per market. A host that refuses connections stops the pull
(`HostDown` from the client's breaker, `markets.hosts`), its cache kept.

A listing that cannot be read (a cursor that does not advance, an unknown envelope, a request
that fails for good) stops the pull before anything is written. A market whose candles cannot
be fetched or read is left out whole and named in `failed`; the pull goes on.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from hindcast.errors import KalshiError, MalformedMarket, MarketSkipped
from hindcast.markets.bundle import MarketBundle, PullCounts
from hindcast.markets.kalshi import Cutoff, KalshiClient
from hindcast.markets.kalshi_parse import KalshiMarket, market_id, parse_candles, parse_market
from hindcast.markets.pull import LISTING, WorkDir, _exclusive, _previous, log_pull, merge
from hindcast.markets.pull_history import Pulled, failure
from hindcast.markets.store import write_version
from hindcast.records import PricePoint
from hindcast.timeutil import from_unix, iso, to_unix

Progress = Callable[[str, int, "int | None"], None]  # (step, done, total: None while unknown)
CANDLES = "candles"  # the progress step of the candle fetches


@dataclass(frozen=True)
class KalshiQuery:
    """Which settled markets: of one series (or all), settled within [since,
    until], at most `limit`."""

    series: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int | None = None

    def filters(self) -> dict:
        return {"series_ticker": self.series} if self.series else {}

    def live_filters(self) -> dict:
        """The live listing filters by settlement itself (`min/max_settled_ts`,
        with status=settled)."""
        window = {
            "min_settled_ts": self.since and to_unix(self.since),
            "max_settled_ts": self.until and to_unix(self.until),
        }
        return {**self.filters(), **{k: v for k, v in window.items() if v is not None}}

    def outside(self, settled_at: datetime) -> bool:
        return bool(
            (self.since and settled_at < self.since) or (self.until and settled_at > self.until)
        )

    def key(self, url: str) -> str:
        text = json.dumps(
            [url, self.series, self.since and iso(self.since), self.until and iso(self.until)]
        )
        return "kalshi-" + hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class KalshiSummary:
    """What a Kalshi pull did: listed (per side), stored, skipped by reason, failed by market."""

    version: str = ""
    cutoff: str = ""
    listed_live: int = 0
    listed_historical: int = 0
    stored: int = 0
    histories_fetched: int = 0
    histories_cached: int = 0
    histories_reused: int = 0
    incomplete: list[str] = field(default_factory=list)  # stored without any priced candle (by id)
    routes: Counter = field(default_factory=Counter)  # stored markets by price route
    skipped: Counter = field(default_factory=Counter)
    failed: list[str] = field(default_factory=list)

    @property
    def listed(self) -> int:
        return self.listed_live + self.listed_historical

    def counts(self) -> PullCounts:
        return PullCounts.of(self)

    def as_dict(self, store: Path | str = "") -> dict:
        """The shape `markets pull --json` prints for Polymarket too, plus the Kalshi split."""
        counts = self.counts()
        return {
            "store": str(store),
            "venue": "kalshi",
            "version": self.version,
            "counts": counts.as_dict(),
            "stored_fewer_than_listed": counts.short,
            "failed": list(self.failed),
            "incomplete_histories": list(self.incomplete),
            "price_routes": dict(self.routes),
            "histories": {
                "fetched": self.histories_fetched,
                "cached": self.histories_cached,
                "reused": self.histories_reused,
            },
            "listed_live": self.listed_live,
            "listed_historical": self.listed_historical,
            "cutoff_market_settled_ts": self.cutoff,
        }


@dataclass(frozen=True)
class Listed:
    raw: object
    historical: bool  # listed under /historical/markets


def pull_kalshi(
    root: Path,
    client: KalshiClient,
    query: KalshiQuery,
    now: datetime,
    progress: Progress | None = None,
) -> KalshiSummary:
    """List, parse, fetch candles, freeze a new store version; returns the summary. The listing
    is read before the store's lock is taken: a listing that fails touches no file of the store."""
    root, summary = Path(root), KalshiSummary()
    cutoff = client.cutoff()
    summary.cutoff = iso(cutoff.market_settled)
    listed = list_markets(client, query, cutoff, summary, progress)
    parsed = _parse_all(listed, cutoff, query, summary)
    with _exclusive(root, now):
        return _store(root, client, query, now, parsed, summary, progress)


def _store(
    root: Path,
    client: KalshiClient,
    query: KalshiQuery,
    now: datetime,
    parsed: list[KalshiMarket],
    summary: KalshiSummary,
    progress,
) -> KalshiSummary:
    work, previous = WorkDir(root / ".pull" / query.key(client.base_url)), _previous(root)
    pulled = _with_candles(client, work, parsed, previous, summary, progress)
    summary.stored = len(pulled)
    if pulled:  # a pull that stored nothing writes no version (the hash of nothing)
        bundle = merge(previous, pulled, now)
        summary.version = write_version(root, bundle, _provenance(client, query, now, summary))
    # log_pull is typed for a PullSummary; it reads version, counts() and incomplete: all here
    log_pull(root, now, summary)  # type: ignore[arg-type]
    if pulled or not summary.failed:  # nothing stored and failures: the cache is the resume
        shutil.rmtree(work.path, ignore_errors=True)
    return summary


# -- listing ----------------------------------------------------------------------------------
def list_markets(
    client: KalshiClient,
    query: KalshiQuery,
    cutoff: Cutoff,
    summary: KalshiSummary,
    progress: Progress | None = None,
) -> list[Listed]:
    """Live settled markets, then historical ones (unless `since` is past the
    cutoff), up to `limit`."""
    tell = progress or (lambda step, done, total: None)
    tell(LISTING, 0, None)
    live = _take(client.settled_markets(query.live_filters()), query.limit, tell)
    historical = []
    if not (query.since and query.since >= cutoff.market_settled) and (
        query.limit is None or len(live) < query.limit
    ):
        historical = _take(
            client.historical_markets(query.filters()),
            None if query.limit is None else query.limit - len(live),
            lambda step, done, total: tell(step, len(live) + done, total),
        )
    summary.listed_live, summary.listed_historical = len(live), len(historical)
    tell(LISTING, summary.listed, summary.listed)
    return [Listed(raw, False) for raw in live] + [Listed(raw, True) for raw in historical]


def _take(pages: Iterator[list], limit: int | None, tell: Progress) -> list:
    """Items page by page; no page is asked for once `limit` items are held."""
    items: list = []
    for page in pages:
        items += page
        tell(LISTING, len(items), None)
        if limit is not None and len(items) >= limit:
            return items[:limit]
    return items


def _parse_all(
    listed: list[Listed], cutoff: Cutoff, query: KalshiQuery, summary: KalshiSummary
) -> list[KalshiMarket]:
    markets, seen = [], set()
    for item in listed:
        try:
            market = _parse_one(item, cutoff)
        except MarketSkipped as skip:
            summary.skipped[skip.reason] += 1
            continue
        except MalformedMarket as exc:
            summary.failed.append(str(exc))
            continue
        if market.ticker in seen:
            summary.skipped["listed twice (same ticker)"] += 1
        elif query.outside(market.settled_at):
            summary.skipped["settled outside --since/--until"] += 1
        else:
            seen.add(market.ticker)
            markets.append(market)
    return markets


def _parse_one(item: Listed, cutoff: Cutoff) -> KalshiMarket:
    """Parsed on the side its candles live on: historical if listed there or
    settled before the cutoff."""
    market = parse_market(item.raw, item.historical)
    return (
        market
        if item.historical or not cutoff.historical(market.settled_at)
        else parse_market(item.raw, True)
    )


# -- candles ----------------------------------------------------------------------------------
def _with_candles(
    client, work: WorkDir, markets: list[KalshiMarket], previous, summary, progress
) -> list[Pulled]:
    pulled = []
    if progress:
        progress(CANDLES, 0, len(markets))
    for done, market in enumerate(markets, start=1):
        try:
            points = (
                _stored(previous, market, summary)
                or _cached(work, market, summary)
                or _fetched(client, work, market, summary)
            )
            summary.incomplete += [] if points else [market.parsed.market.id]
            summary.routes[market.parsed.meta.price_route] += 1
            pulled.append(Pulled(market.parsed, points))
        except (KalshiError, MalformedMarket) as exc:
            summary.failed.append(failure(market.parsed.market.id, exc))
        if progress:
            progress(CANDLES, done, len(markets))
    return pulled


def _stored(previous: MarketBundle | None, market: KalshiMarket, summary: KalshiSummary):
    """Candles an earlier Kalshi pull stored for this market by the same route."""
    mid = market.parsed.market.id
    meta = previous.meta.get(mid) if previous else None
    if (
        previous is None
        or meta is None
        or meta.venue != "kalshi"
        or meta.price_route != market.parsed.meta.price_route
    ):
        return None
    points = previous.prices.get(mid, ())
    summary.histories_reused += bool(points)
    return points or None


def _cached(work: WorkDir, market: KalshiMarket, summary: KalshiSummary):
    record = work.history(market.ticker)
    if record is None or record.get("route") != market.parsed.meta.price_route:
        return None
    summary.histories_cached += 1
    return tuple(PricePoint(from_unix(t), p) for t, p in record["points"])


def _fetched(client: KalshiClient, work: WorkDir, market: KalshiMarket, summary: KalshiSummary):
    historical = market.parsed.meta.price_route.startswith("kalshi historical")
    raw = client.candles(
        market.ticker,
        market.event_ticker,
        to_unix(market.opened_at),
        to_unix(market.closed_at),
        historical,
    )
    points = parse_candles(market_id(market.ticker), raw, historical)
    work.save_history(
        market.ticker,
        {"route": market.parsed.meta.price_route, "points": [[to_unix(p.t), p.p] for p in points]},
    )
    summary.histories_fetched += 1
    return points


def _provenance(
    client: KalshiClient, query: KalshiQuery, now: datetime, summary: KalshiSummary
) -> dict:
    return {
        "source": "kalshi",
        "kalshi_url": client.base_url,
        "series": query.series or "",
        "since": query.since and iso(query.since),
        "until": query.until and iso(query.until),
        "limit": query.limit,
        "pulled_at": iso(now),
        "cutoff_market_settled_ts": summary.cutoff,
        "counts": summary.counts().as_dict(),
    }


__all__ = ["KalshiQuery", "KalshiSummary", "list_markets", "pull_kalshi"]
