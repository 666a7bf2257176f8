"""A resumable pull of resolved Polymarket markets into the market store (the 2026 APIs).

Gamma keyset pages and price histories are cached, as soon as each arrives, in a work
directory `STORE/.pull/<query-key>/`, written atomically: a killed pull re-run with the same
query reads them back instead of fetching them again. Histories of markets the store's latest
version already holds from an earlier pull are reused when their route was recorded (a
resolved market's history does not change; one stored by a 2025 pull is fetched again, and a
point that changes is reported and goes into a new version). At the end the pulled markets
are merged into the latest version, a new version is frozen, and the work directory is
removed. A market that cannot be read or fetched is reported by id with its reason and left
out whole; the pull goes on. Every listed market is stored, skipped (counted by reason) or
failed: `PullSummary.counts()`. A pull that stored nothing writes no version (its summary's
`version` is ""; the watch list and the pull log are still written) and keeps its work
directory when markets failed, so the same pull run again resumes. A host that cannot be
reached at all (`HostDown`, from the client's breaker) stops the pull at once, before any
version is written, its work directory kept. Histories: `pull_history`.

`progress(step, done, total)` is called as the pull goes: `LISTING` with the markets listed
so far (total None until the listings end), then `pull_history.HISTORIES` per market.

Two listings find what resolved. The end-date window (`--since/--until`, Gamma's
`end_date_min/max`) is what a user asks for. An incremental pull (the service's) gives
`closed_since` as well: it also lists closed markets newest-closed first
(`order=closedTime&ascending=false`, no end-date filter) and pages until the listing is
older than `closed_since`. That listing finds what an end-date window cannot: markets
without an `endDate` (Gamma omits it on some items, and `end_date_min` excludes them) and
markets that close long after their scheduled end. Paging a newest-first listing can only
repeat an item when markets close meanwhile, never skip one; repeats are merged.

A listed binary market that is closed but not resolved yet goes on the store's watch
list (`STORE/pending.json`), and every later pull asks for it again by conditionId (with
`closed=true`, and without for a market still open), so a market whose resolution is
settled long after it closed is still found.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from hindcast.errors import Busy, MarketDataError, PolymarketError, PullBusy
from hindcast.filelock import FileLock
from hindcast.frozen import write_text_atomic
from hindcast.markets.bundle import MarketBundle, PullCounts, description_versions, with_description
from hindcast.markets.parse import (
    MalformedMarket,
    MarketSkipped,
    ParsedMarket,
    market_key,
    parse_gamma_market,
)
from hindcast.markets.polymarket import GAMMA_PAGE_LIMIT, KeysetPage, PolymarketClient
from hindcast.markets.pull_history import PRICE_DEFINITION, Pulled, with_histories
from hindcast.markets.store import open_version, write_version
from hindcast.timeutil import iso, parse_utc

Progress = Callable[[str, int, "int | None"], None]  # (step, done, total: None while unknown)
LISTING = "listing"  # the progress step of the Gamma listings (markets listed so far)
WATCH = "pending.json"  # the store's watch list (see read_watch)
PULL_LOG = (
    "pulls.jsonl"  # one line per finished pull: when, which version, its counts (see log_pull)
)
WATCH_CHUNK = 40  # condition ids a request (~40 avoided Cloudflare's 403 on the legacy list)


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
            raise ValueError(
                f"page size {self.page_size} outside 1..{GAMMA_PAGE_LIMIT} (Gamma's limit)"
            )

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
        text = json.dumps(
            [gamma_url, "keyset", self.params(), self.page_size, *([closed] if closed else [])],
            sort_keys=True,
        )
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
    skipped: Counter = field(default_factory=Counter)
    failed: list[str] = field(default_factory=list)
    rechecked: int = 0  # watched markets asked for again by id
    pending: list[str] = field(
        default_factory=list
    )  # listed, binary, but not closed/resolved yet: watched
    incomplete: dict[str, str] = field(
        default_factory=dict
    )  # stored, history shorter than the market's life
    routes: Counter = field(default_factory=Counter)  # price route of each stored market
    histories_changed: list[str] = field(
        default_factory=list
    )  # a stored point differs: a new version

    def counts(self) -> PullCounts:
        return PullCounts.of(self)


class WorkDir:
    """The pull's cache: `pages/<number>.json` (raw keyset pages with the cursor each was asked
    with: a page cached by a 2025 pull, a bare offset page, is never read back),
    `histories/<id>.json`; folders are made on the first write, so a pull that
    fetched nothing leaves none."""

    def __init__(self, path: Path):
        self.path = path

    def keyset_page(self, number: int, cursor: str) -> KeysetPage | None:
        """A cached keyset page, if it was asked with this cursor (a 2025 offset page: None)."""
        record = self._read(self.path / "pages" / f"{number:09d}.json")
        if not isinstance(record, dict) or record.get("cursor") != cursor:
            return None
        return KeysetPage(number, cursor, record["markets"], record.get("next_cursor"))

    def save_keyset_page(self, page: KeysetPage) -> None:
        (self.path / "pages").mkdir(parents=True, exist_ok=True)
        record = {"cursor": page.cursor, "markets": page.items, "next_cursor": page.next_cursor}
        write_text_atomic(self.path / "pages" / f"{page.number:09d}.json", json.dumps(record))

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
            raise MarketDataError(
                f"{path}: corrupt pull cache ({exc.msg}); delete it and pull again"
            ) from exc


def pull(
    root: Path,
    client: PolymarketClient,
    query: PullQuery,
    now: datetime,
    progress: Progress | None = None,
) -> PullSummary:
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
        who = (
            f"pid {busy.holder.get('pid')} since {busy.holder.get('since')}"
            if busy.holder
            else "holder unknown"
        )
        raise PullBusy(
            f"another pull into {root} is running ({who}); wait for it to finish, then pull again"
        ) from None


def _pull(
    root: Path, client: PolymarketClient, query: PullQuery, now: datetime, progress: Progress | None
) -> PullSummary:
    work = WorkDir(root / ".pull" / query.key(client.gamma_url))
    summary = PullSummary()
    watched, had_cache = read_watch(root), (root / ".pull").exists()
    try:
        raws, again = _listing(client, work, query, sorted(watched), _Counting(progress))
    except PolymarketError:
        _drop_listing(root, work.path, had_cache)
        raise
    summary.listed, summary.rechecked = len(raws), len(again)
    previous = _previous(root)
    parsed = _parse_all(raws, summary)
    pulled = with_histories(client, work, parsed, previous, summary, progress)
    summary.stored = len(pulled)
    if pulled:  # a pull that stored nothing writes no version (the hash of nothing)
        bundle = merge(previous, pulled, now)
        summary.version = write_version(
            root, bundle, _provenance(client, query, now, previous, summary)
        )
    write_watch(
        root, {market_id: watched.get(market_id, iso(now)) for market_id in summary.pending}
    )
    log_pull(root, now, summary)
    if pulled or not summary.failed:  # nothing stored and failures: the cache is the resume
        shutil.rmtree(work.path, ignore_errors=True)
    return summary


class _Counting:
    """Reports the markets listed so far, over every listing of one pull."""

    def __init__(self, progress: Progress | None):
        self.progress, self.listed = progress, 0

    def __call__(self, items: int) -> None:
        self.listed += items
        if self.progress:
            self.progress(LISTING, self.listed, None)

    def finish(self, listed: int) -> None:
        if self.progress:
            self.progress(LISTING, listed, listed)


def _listing(
    client: PolymarketClient, work: WorkDir, query: PullQuery, watched: list[str], tick: _Counting
) -> tuple[list, list[str]]:
    """(raw market objects, watched ids asked for again): the end-date listing, the
    newest-closed listing (with `closed_since`), then the watch list by id."""
    tick(0)  # the step begins (its clock starts)
    raws = list_markets(client, work, query, tick)
    if query.closed_since is not None:
        closed = list_closed_since(client, WorkDir(work.path / "closed"), query, tick)
        raws += _not_in(closed, raws)
    again = sorted(set(watched) - {market_key(raw) for raw in raws})
    raws += list_by_id(client, WorkDir(work.path / "watched"), again, tick=tick)
    tick.finish(len(raws))
    return raws, again


# -- listing --------------------------------------------------------------------------------
def list_markets(client: PolymarketClient, work: WorkDir, query: PullQuery, tick=None) -> list:
    """Raw Gamma market objects, page by page, each page from the cache when it is there
    (`tick(n)` with the items each page adds)."""
    return _paged(client, work, query, query.params(), lambda page: (page, False), tick)


def list_closed_since(client: PolymarketClient, work: WorkDir, query: PullQuery, tick=None) -> list:
    """Closed markets, newest closed first, page by page until a page reaches markets closed
    before `query.closed_since` (those are left out). An item without a readable
    `closedTime` never ends the paging and is kept (the parser decides about it)."""

    def select(page: list) -> tuple[list, bool]:
        closed = [(_closed_time(raw), raw) for raw in page]
        kept = [raw for t, raw in closed if t is None or t >= query.closed_since]
        return kept, any(t is not None and t < query.closed_since for t, _ in closed)

    return _paged(client, work, query, query.closed_params(), select, tick)


def _paged(
    client: PolymarketClient, work: WorkDir, query: PullQuery, params: dict, select, tick=None
) -> list:
    """The client's Gamma paging with each page cached in `work`; `select(page)` → (items
    kept, stop); no page is asked for once `query.limit` items are kept."""
    items, pages = [], client.keyset_markets(params, query.page_size, cache=work)
    while query.limit is None or len(items) < query.limit:
        page = next(pages, None)
        if page is None:
            break
        kept, stop = select(page.items)
        items += kept
        if tick:
            tick(len(kept))
        if stop:
            break
    return items[: query.limit] if query.limit is not None else items


def _drop_listing(root: Path, work: Path, had_cache: bool) -> None:
    """A listing that failed is not kept: its pages may lead a resumed walk the same wrong way
    (a cursor that does not advance), and the store is left as it was (an emptied pull cache
    goes too)."""
    for part in ("pages", "closed", "watched"):
        shutil.rmtree(work / part, ignore_errors=True)
    for folder in (work, *([] if had_cache else [root / ".pull"])):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


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


def list_by_id(
    client: PolymarketClient, work: WorkDir, ids: list[str], chunk: int = WATCH_CHUNK, tick=None
) -> list:
    """Raw Gamma market objects of these conditionIds (`condition_ids`, `chunk` per request),
    asked with `closed=true` (resolved since) and without (still open: Gamma lists open
    markets only unless `closed=true` is given), each listing from the cache when it is there."""
    items = []
    for number, start in enumerate(range(0, len(ids), chunk)):
        for state, extra in (("closed", {"closed": "true"}), ("open", {})):
            cache = WorkDir(work.path / f"{state}-{number:06d}")
            for page in client.keyset_markets(
                {"condition_ids": ids[start : start + chunk], **extra}, cache=cache
            ):
                items += page.items
                if tick:
                    tick(len(page.items))
    return items


def log_pull(root: Path, now: datetime, summary: PullSummary) -> None:
    """Append this pull's counts to `STORE/pulls.jsonl` (rewritten atomically): a pull that
    finds nothing new writes no new version, but its counts are kept all the same."""
    path = Path(root) / PULL_LOG
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    line = json.dumps(
        {
            "pulled_at": iso(now),
            "version": summary.version,
            **summary.counts().as_dict(),
            "incomplete_histories": sorted(summary.incomplete),
        },
        sort_keys=True,
    )
    write_text_atomic(path, before + line + "\n")


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
    write_text_atomic(
        Path(root) / WATCH, json.dumps({"pending": dict(sorted(pending.items()))}, indent=1) + "\n"
    )


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
            versions = with_description(
                description_versions(base, market_id), item.parsed.market.description, now
            )
            descriptions.update({market_id: versions} if len(versions) > 1 else {})
        markets[market_id] = item.parsed.market
        resolutions[market_id] = item.parsed.resolution
        meta[market_id] = item.parsed.meta
        prices.pop(market_id, None)
        prices.update({market_id: item.prices} if item.prices else {})
    return MarketBundle(
        tuple(markets.values()), tuple(resolutions.values()), prices, meta, descriptions
    )


def _previous(root: Path) -> MarketBundle | None:
    if not (root / "LATEST").exists():
        return None
    return open_version(root).bundle


def _provenance(client, query: PullQuery, now: datetime, previous, summary: PullSummary) -> dict:
    return {
        "source": "polymarket",
        "venue": "polymarket",
        "gamma_url": client.gamma_url,
        "clob_url": client.clob_url,
        "data_url": client.data_url,
        "listing": "gamma /markets/keyset",
        "query": query.params(),
        "limit": query.limit,
        "pulled_at": iso(now),
        "stored": summary.stored,
        "skipped": dict(summary.skipped),
        "failed": len(summary.failed),
        "counts": summary.counts().as_dict(),
        "price_routes": dict(summary.routes),
        "price_definition": PRICE_DEFINITION,
        "incomplete_histories": dict(sorted(summary.incomplete.items())),
        "histories_changed": sorted(summary.histories_changed),
        "rechecked_by_id": summary.rechecked,
        **({"closed_since": iso(query.closed_since)} if query.closed_since else {}),
    }
