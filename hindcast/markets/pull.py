"""A resumable pull of resolved Polymarket markets into the market store.

Gamma pages and CLOB histories are cached, as soon as each arrives, in a work directory
`STORE/.pull/<query-key>/`, written atomically: a killed pull re-run with the same query
reads them back instead of fetching them again. Histories of markets the store's latest
version already holds from an earlier pull are reused too (a resolved market's history
does not change). At the end the pulled markets are merged into the latest version, a new
version is frozen, and the work directory is removed. A market that cannot be read or
fetched is reported by id with its reason and left out whole; the pull goes on.

Two listings find what resolved. The end-date window (`--since/--until`, Gamma's
`end_date_min/max`) is what a user asks for. An incremental pull (the service's) gives
`closed_since` as well: it also lists closed markets newest-closed first
(`order=closedTime&ascending=false`, no end-date filter) and pages until the listing is
older than `closed_since`. That listing finds what an end-date window cannot: markets
without an `endDate` (Gamma omits it on some items, and `end_date_min` excludes them) and
markets that close long after their scheduled end. Offset paging of a newest-first listing
can only repeat an item when markets close meanwhile, never skip one; repeats are merged.

A listed binary market that is closed but not resolved yet goes on the store's watch
list (`STORE/pending.json`), and every later pull asks for it again by conditionId, so a
market whose resolution is settled long after it closed is still found.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from hindcast.errors import Busy, MarketDataError, PolymarketError, PullBusy
from hindcast.filelock import FileLock
from hindcast.frozen import write_text_atomic
from hindcast.markets.bundle import MarketBundle, description_versions, with_description
from hindcast.markets.parse import (
    MalformedMarket,
    MarketSkipped,
    ParsedMarket,
    market_key,
    parse_gamma_market,
    parse_history,
)
from hindcast.markets.polymarket import GAMMA_PAGE_LIMIT, PolymarketClient
from hindcast.markets.store import open_version, write_version
from hindcast.records import PricePoint
from hindcast.timeutil import from_unix, iso, parse_utc, to_unix

Progress = Callable[[int, int], None]  # (done, total) histories
WATCH = "pending.json"  # the store's watch list (see read_watch)


@dataclass(frozen=True)
class PullQuery:
    """Which resolved markets to pull: scheduled end within [since, until], at most `limit`;
    with `closed_since`, also every market closed at or after it (whatever its end date)."""

    since: datetime | None = None
    until: datetime | None = None
    limit: int | None = None
    page_size: int = GAMMA_PAGE_LIMIT
    closed_since: datetime | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.page_size <= GAMMA_PAGE_LIMIT:
            raise ValueError(f"page size {self.page_size} outside 1..{GAMMA_PAGE_LIMIT} (Gamma's limit)")

    def params(self) -> dict:
        params = {"closed": "true", "order": "id", "ascending": "true"}
        if self.since:
            params["end_date_min"] = iso(self.since)
        if self.until:
            params["end_date_max"] = iso(self.until)
        return params

    def closed_params(self) -> dict:
        """The newest-closed-first listing (paged down to `closed_since`)."""
        return {"closed": "true", "order": "closedTime", "ascending": "false"}

    def key(self, gamma_url: str) -> str:
        """Names the work directory: same source, filters and page size → same cache."""
        closed = self.closed_since and iso(self.closed_since)
        text = json.dumps([gamma_url, self.params(), self.page_size, *([closed] if closed else [])], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class PullSummary:
    """What a pull did: markets listed and stored, where histories came from, what was
    skipped (counted by reason) and what failed (one line per market, naming it)."""

    version: str = ""
    stored: int = 0
    listed: int = 0
    histories_fetched: int = 0
    histories_cached: int = 0
    histories_reused: int = 0
    no_history: int = 0
    skipped: Counter = field(default_factory=Counter)
    failed: list[str] = field(default_factory=list)
    rechecked: int = 0  # watched markets asked for again by id
    pending: list[str] = field(default_factory=list)  # listed, binary, but not closed/resolved yet: watched


@dataclass(frozen=True)
class Pulled:
    parsed: ParsedMarket
    prices: tuple[PricePoint, ...]


class WorkDir:
    """The pull's cache: `pages/<offset>.json` (raw Gamma pages), `histories/<id>.json`;
    folders are made on the first write, so a pull that fetched nothing leaves none."""

    def __init__(self, path: Path):
        self.path = path

    def page(self, offset: int) -> list | None:
        return self._read(self.path / "pages" / f"{offset:09d}.json")

    def save_page(self, offset: int, items: list) -> None:
        (self.path / "pages").mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.path / "pages" / f"{offset:09d}.json", json.dumps(items))

    def history(self, market_id: str) -> dict | None:
        return self._read(self.path / "histories" / f"{market_id}.json")

    def save_history(self, market_id: str, record: dict) -> None:
        (self.path / "histories").mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.path / "histories" / f"{market_id}.json", json.dumps(record))

    def _read(self, path: Path):
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except json.JSONDecodeError as exc:
            raise MarketDataError(f"{path}: corrupt pull cache ({exc.msg}); delete it and pull again") from exc


def pull(root: Path, client: PolymarketClient, query: PullQuery, now: datetime,
         progress: Progress | None = None) -> PullSummary:
    """Pull, parse, fetch histories, freeze a new store version; returns the summary."""
    root = Path(root)
    with _exclusive(root, now):
        return _pull(root, client, query, now, progress)


def _exclusive(root: Path, now: datetime) -> FileLock:
    """One pull into a store at a time: two at once would each merge into the same previous
    version, and the later one's LATEST would drop the other's markets."""
    try:
        return FileLock(root / ".pull.lock").acquire({"pid": os.getpid(), "since": iso(now)})
    except Busy as busy:
        who = f"pid {busy.holder.get('pid')} since {busy.holder.get('since')}" if busy.holder else "holder unknown"
        raise PullBusy(f"another pull into {root} is running ({who}); wait for it to finish, "
                              "then pull again") from None


def _pull(root: Path, client: PolymarketClient, query: PullQuery, now: datetime,
          progress: Progress | None) -> PullSummary:
    work = WorkDir(root / ".pull" / query.key(client.gamma_url))
    summary = PullSummary()
    raws = list_markets(client, work, query)
    if query.closed_since is not None:
        raws += _not_in(list_closed_since(client, WorkDir(work.path / "closed"), query), raws)
    watched = read_watch(root)
    again = sorted(set(watched) - {market_key(raw) for raw in raws})
    raws += list_by_id(client, WorkDir(work.path / "watched"), again)
    summary.listed, summary.rechecked = len(raws), len(again)
    previous = _previous(root)
    parsed = _parse_all(raws, summary)
    pulled = _with_histories(client, work, parsed, previous, summary, progress)
    bundle = merge(previous, pulled, now)
    summary.stored = len(pulled)
    summary.version = write_version(root, bundle, _provenance(client, query, now, previous, summary))
    write_watch(root, {market_id: watched.get(market_id, iso(now)) for market_id in summary.pending})
    shutil.rmtree(work.path, ignore_errors=True)
    return summary


# -- listing --------------------------------------------------------------------------------
def list_markets(client: PolymarketClient, work: WorkDir, query: PullQuery) -> list:
    """Raw Gamma market objects, page by page, each page from the cache when it is there."""
    return _paged(client, work, query, query.params(), lambda page: (page, False))


def list_closed_since(client: PolymarketClient, work: WorkDir, query: PullQuery) -> list:
    """Closed markets, newest closed first, page by page until a page reaches markets closed
    before `query.closed_since` (those are left out). An item without a readable
    `closedTime` never ends the paging and is kept (the parser decides about it)."""
    def select(page: list) -> tuple[list, bool]:
        closed = [(_closed_time(raw), raw) for raw in page]
        kept = [raw for t, raw in closed if t is None or t >= query.closed_since]
        return kept, any(t is not None and t < query.closed_since for t, _ in closed)

    return _paged(client, work, query, query.closed_params(), select)


def _paged(client: PolymarketClient, work: WorkDir, query: PullQuery, params: dict, select) -> list:
    """The client's Gamma paging with each page cached in `work`; `select(page)` → (items
    kept, stop); no page is asked for once `query.limit` items are kept."""
    items, pages = [], client.gamma_markets(params, query.page_size, cache=work)
    while query.limit is None or len(items) < query.limit:
        page = next(pages, None)
        if page is None:
            break
        kept, stop = select(page.items)
        items += kept
        if stop:
            break
    return items[: query.limit] if query.limit is not None else items


def _closed_time(raw) -> datetime | None:
    try:
        return parse_utc(raw["closedTime"])
    except (TypeError, KeyError, ValueError, AttributeError, OverflowError):
        return None


def _not_in(raws: list, listed: list) -> list:
    """The items of a second listing that the first did not list (by conditionId)."""
    def key(raw):
        value = raw.get("conditionId") if isinstance(raw, dict) else None
        return value if isinstance(value, str) else None

    seen = {key(raw) for raw in listed} - {None}
    return [raw for raw in raws if key(raw) is None or key(raw) not in seen]


def list_by_id(client: PolymarketClient, work: WorkDir, ids: list[str], chunk: int = 50) -> list:
    """Raw Gamma market objects of these conditionIds (`condition_ids`, `chunk` per request),
    each answer from the cache when it is there."""
    items, url = [], f"{client.gamma_url}/markets"
    for number, start in enumerate(range(0, len(ids), chunk)):
        page = work.page(number)
        if page is None:
            page = client.gamma_page(url, {"condition_ids": ids[start:start + chunk]}, chunk, 0).items
            work.save_page(number, page)
        items += page
    return items


# -- the watch list: markets listed before they resolved ------------------------------------
def read_watch(root: Path) -> dict[str, str]:
    """conditionId → when first seen unresolved. Gamma lists by scheduled end date, so a
    market that resolves long after it would never be listed again: each pull asks for
    these by id until they resolve (or stop being listed)."""
    path = Path(root) / WATCH
    try:
        return dict(json.loads(path.read_text(encoding="utf-8"))["pending"])
    except FileNotFoundError:
        return {}
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise MarketDataError(f"{path}: unreadable watch list ({exc}); fix or delete it") from exc


def write_watch(root: Path, pending: dict[str, str]) -> None:
    write_text_atomic(Path(root) / WATCH, json.dumps({"pending": dict(sorted(pending.items()))}, indent=1) + "\n")


def _parse_all(raws: list, summary: PullSummary) -> list[ParsedMarket]:
    parsed, seen = [], set()
    for raw in raws:
        try:
            market = parse_gamma_market(raw)
        except MarketSkipped as skip:
            summary.skipped[skip.reason] += 1
            if skip.pending and skip.market_id not in summary.pending:
                summary.pending.append(skip.market_id)
            continue
        except MalformedMarket as exc:
            summary.failed.append(str(exc))
            continue
        if market.market.id in seen:
            summary.skipped["listed twice (same conditionId)"] += 1
            continue
        seen.add(market.market.id)
        parsed.append(market)
    return parsed


# -- histories ------------------------------------------------------------------------------
def _with_histories(client, work, parsed, previous, summary, progress) -> list[Pulled]:
    pulled = []
    for done, market in enumerate(parsed, start=1):
        try:
            pulled.append(_pulled(client, work, market, previous, summary))
        except (PolymarketError, MalformedMarket) as exc:
            summary.failed.append(f"market {market.market.id}: {exc}" if isinstance(exc, PolymarketError) else str(exc))
        if progress:
            progress(done, len(parsed))
    return pulled


def _pulled(client, work: WorkDir, market: ParsedMarket, previous, summary: PullSummary) -> Pulled:
    stored = _stored_history(previous, market)
    summary.histories_reused += stored is not None
    points, fidelity = stored or _cached_history(work, market.market.id, summary) \
        or _fetch_history(client, work, market, summary)
    summary.no_history += not points
    return Pulled(replace(market, meta=replace(market.meta, history_fidelity=fidelity)), points)


def _stored_history(previous: MarketBundle | None, market: ParsedMarket):
    """The history an earlier pull stored for the same market and token, if any."""
    meta = previous.meta.get(market.market.id) if previous else None
    if meta is None or meta.history_fidelity is None or meta.yes_token != market.meta.yes_token:
        return None
    return previous.prices.get(market.market.id, ()), meta.history_fidelity


def _cached_history(work: WorkDir, market_id: str, summary: PullSummary):
    record = work.history(market_id)
    if record is None:
        return None
    summary.histories_cached += 1
    return tuple(PricePoint(from_unix(t), p) for t, p in record["points"]), record["fidelity"]


def _fetch_history(client: PolymarketClient, work: WorkDir, market: ParsedMarket, summary: PullSummary):
    """The YES token's whole history (`interval=max`: a start/end range may exceed the
    CLOB's range limits for long-lived markets at fine fidelity)."""
    raw = client.prices_history(market.meta.yes_token)
    points = parse_history(market.market.id, raw.history)
    work.save_history(market.market.id, {"token_id": raw.token_id, "fidelity": raw.fidelity,
                                         "points": [[to_unix(p.t), p.p] for p in points]})
    summary.histories_fetched += 1
    return points, raw.fidelity


# -- the new version ------------------------------------------------------------------------
def merge(previous: MarketBundle | None, pulled: list[Pulled], now: datetime) -> MarketBundle:
    """The previous version with the pulled markets added or replaced; a changed description
    becomes a new version known from `now` (the instant of this pull)."""
    base = previous or MarketBundle((), (), {})
    markets = {m.id: m for m in base.markets}
    resolutions = {r.market_id: r for r in base.resolutions}
    prices, meta, descriptions = dict(base.prices), dict(base.meta), dict(base.descriptions)
    for item in pulled:
        market_id = item.parsed.market.id
        if market_id in markets:
            versions = with_description(description_versions(base, market_id), item.parsed.market.description, now)
            descriptions.update({market_id: versions} if len(versions) > 1 else {})
        markets[market_id] = item.parsed.market
        resolutions[market_id] = item.parsed.resolution
        meta[market_id] = item.parsed.meta
        prices.pop(market_id, None)
        prices.update({market_id: item.prices} if item.prices else {})
    return MarketBundle(tuple(markets.values()), tuple(resolutions.values()), prices, meta, descriptions)


def _previous(root: Path) -> MarketBundle | None:
    if not (root / "LATEST").exists():
        return None
    return open_version(root).bundle


def _provenance(client, query: PullQuery, now: datetime, previous, summary: PullSummary) -> dict:
    return {"source": "polymarket", "gamma_url": client.gamma_url, "clob_url": client.clob_url,
            "query": query.params(), "limit": query.limit, "pulled_at": iso(now),
            "stored": summary.stored, "skipped": dict(summary.skipped), "failed": len(summary.failed),
            "rechecked_by_id": summary.rechecked,
            **({"closed_since": iso(query.closed_since)} if query.closed_since else {})}
