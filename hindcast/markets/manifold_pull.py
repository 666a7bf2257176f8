"""A resumable pull of resolved binary Manifold markets and their bets into the market store.

1. Resolved markets are listed to the end (`ManifoldClient.resolved_markets`); each listed
   market is stored, skipped (counted by reason: not binary, CANCEL, outside --since/--until)
   or failed (named): listed = stored + skipped + failed.
2. For each binary YES/NO/MKT market: the full market (its description) and every bet. Both are
   cached in `STORE/.pull/manifold-<query key>/histories/<id>.json` as they arrive, so a killed
   pull re-run asks only for what it lacks. A market the store already holds from Manifold keeps
   its stored price points (a resolved market's bets do not change) and its first-read question
   (a title edited later must not reach a cutoff before the edit); its description is read
   again, and a changed one is a new description version known from this pull on.
3. The markets are merged into the latest version (other venues' markets are kept), a new
   version is frozen with each close time as read, and the cache is removed.

A listing that cannot be read stops the pull before the store is touched. A market whose
requests fail for good, or whose answer cannot be read, is failed and the pull goes on — except
when the host cannot be reached at all: the breaker stops the whole pull (an outage, not bad
data) with what was fetched kept in the cache for the next run.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path

from hindcast.errors import MalformedMarket, ManifoldError, MarketSkipped
from hindcast.markets.bundle import MarketBundle, PullCounts
from hindcast.markets.manifold import ManifoldClient
from hindcast.markets.manifold_parse import (
    EPOCH,
    from_ms,
    id_of,
    initial_of,
    market_id,
    parse_bets,
    parse_market,
    require_binary,
)
from hindcast.markets.parse import ParsedMarket
from hindcast.markets.pull import Pulled, WorkDir, _exclusive, _previous, log_pull, merge
from hindcast.markets.store import write_version
from hindcast.records import PricePoint
from hindcast.timeutil import iso

Progress = Callable[[str, int, "int | None"], None]  # (step, done, total: None while unknown)
LISTING, MARKETS = "listing", "markets and bets"  # the progress steps
MS = timedelta(milliseconds=1)


@dataclass(frozen=True)
class ManifoldQuery:
    """Which resolved markets: resolved within [since, until], at most `limit` listed."""

    since: datetime | None = None
    until: datetime | None = None
    limit: int | None = None

    def outside(self, resolved_at: datetime) -> bool:
        return bool(
            (self.since and resolved_at < self.since) or (self.until and resolved_at > self.until)
        )

    def key(self, url: str) -> str:
        text = json.dumps([url, self.since and iso(self.since), self.until and iso(self.until)])
        return "manifold-" + hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class ManifoldSummary:
    """What a Manifold pull did: listed, stored, skipped by reason, failed by market."""

    version: str = ""
    listed: int = 0
    stored: int = 0
    fractional: int = 0  # stored MKT resolutions (fractional outcomes)
    histories_fetched: int = 0
    histories_cached: int = 0
    histories_reused: int = 0
    bets_read: int = 0
    incomplete: list[str] = field(default_factory=list)  # stored without any bet (by id)
    skipped: Counter = field(default_factory=Counter)
    failed: list[str] = field(default_factory=list)
    close_as_read: dict[str, str] = field(default_factory=dict)  # id → closeTime as read

    def counts(self) -> PullCounts:
        return PullCounts.of(self)

    def as_dict(self, store: Path | str = "") -> dict:
        """The shape `markets pull --json` prints for the other venues, plus Manifold's."""
        counts = self.counts()
        return {
            "store": str(store),
            "venue": "manifold",
            "version": self.version,
            "counts": counts.as_dict(),
            "stored_fewer_than_listed": counts.short,
            "failed": list(self.failed),
            "incomplete_histories": list(self.incomplete),
            "fractional_outcomes": self.fractional,
            "histories": {
                "fetched": self.histories_fetched,
                "cached": self.histories_cached,
                "reused": self.histories_reused,
            },
            "bets_read": self.bets_read,
        }


def pull_manifold(
    root: Path,
    client: ManifoldClient,
    query: ManifoldQuery,
    now: datetime,
    progress: Progress | None = None,
) -> ManifoldSummary:
    """List, fetch, freeze a new store version; the summary. The listing is read before the
    store's lock is taken: a listing that fails touches no file of the store."""
    root, summary = Path(root), ManifoldSummary()
    candidates = _listed(client, query, summary, progress)
    with _exclusive(root, now):
        work, previous = WorkDir(root / ".pull" / query.key(client.base_url)), _previous(root)
        pulled = _fetch_all(client, work, candidates, previous, summary, progress)
        summary.stored = len(pulled)
        summary.fractional = sum(p.parsed.resolution.status == "fractional" for p in pulled)
        if pulled:  # a pull that stored nothing writes no version (the hash of nothing)
            bundle = merge(previous, _first_questions(previous, pulled), now)
            summary.version = write_version(root, bundle, _provenance(client, query, now, summary))
        log_pull(root, now, summary)  # type: ignore[arg-type]  # reads version, counts, incomplete
        if pulled or not summary.failed:  # nothing stored and failures: the cache is the resume
            shutil.rmtree(work.path, ignore_errors=True)
        return summary


def _listed(
    client: ManifoldClient, query: ManifoldQuery, summary: ManifoldSummary, progress
) -> list[str]:
    """Ids of listed binary YES/NO/MKT markets resolved inside the query; the rest counted."""
    ids = []
    for page in client.resolved_markets():
        if progress:
            progress(LISTING, summary.listed, None)
        for raw in page[: None if query.limit is None else query.limit - summary.listed]:
            summary.listed += 1
            try:
                require_binary(raw)
                resolved = from_ms(raw.get("resolutionTime"), "resolutionTime")
            except MarketSkipped as skip:
                summary.skipped[skip.reason] += 1
                continue
            except (MalformedMarket, ValueError) as exc:
                summary.failed.append(f"market {market_id(id_of(raw))}: {exc}")
                continue
            if query.outside(resolved):
                summary.skipped["resolved outside --since/--until"] += 1
            else:
                ids.append(raw["id"])
        if query.limit is not None and summary.listed >= query.limit:
            break
    return ids


def _fetch_all(client, work: WorkDir, ids: list[str], previous, summary, progress) -> list[Pulled]:
    pulled = []
    for done, raw_id in enumerate(ids, start=1):
        try:
            pulled.append(_one(client, work, raw_id, previous, summary))
        except MarketSkipped as skip:  # the full market says otherwise than its listing
            summary.skipped[skip.reason] += 1
        except ManifoldError as exc:
            if exc.unreachable:  # the breaker: an outage stops the pull, the cache is kept
                raise
            summary.failed.append(f"market {market_id(raw_id)}: {exc}")
        except MalformedMarket as exc:
            summary.failed.append(str(exc))
        if progress:
            progress(MARKETS, done, len(ids))
    return pulled


def _one(client, work: WorkDir, raw_id: str, previous, summary: ManifoldSummary) -> Pulled:
    record = work.history(raw_id)
    stored = _stored(previous, market_id(raw_id))
    if record is not None:
        summary.histories_cached += 1
    else:
        raw = client.market(raw_id)
        parse_market(raw)  # a skip or a malformed market is known before its bets are asked
        bets = [] if stored is not None else client.bets(raw_id)
        summary.bets_read += len(bets)
        record = {"market": raw, "points": None if stored is not None else _points(raw, bets)}
        work.save_history(raw_id, record)
        summary.histories_fetched += stored is None
    parsed = parse_market(record["market"])
    summary.close_as_read[parsed.market.id] = _close_as_read(record["market"])
    if stored is not None:
        summary.histories_reused += 1
        points = stored
    else:
        points = tuple(PricePoint(EPOCH + ms * MS, p) for ms, p in record["points"])
    summary.incomplete += [] if points else [parsed.market.id]
    return Pulled(parsed, points)


def _points(raw: dict, bets: list) -> list[list]:
    parsed = parse_market(raw)
    points = parse_bets(parsed.market.id, parsed.market.opened_at, bets, initial_of(raw, bets))
    return [[(p.t - EPOCH) // MS, p.p] for p in points]


def _stored(previous: MarketBundle | None, mid: str) -> tuple[PricePoint, ...] | None:
    """Points an earlier Manifold pull stored for this market (None: never pulled)."""
    meta = previous.meta.get(mid) if previous else None
    if previous is None or meta is None or meta.venue != "manifold":
        return None
    return previous.prices.get(mid, ())


def _first_questions(previous: MarketBundle | None, pulled: list[Pulled]) -> list[Pulled]:
    """Each pulled market with the question as first stored (an edited title is not versioned)."""
    before = {m.id: m.question for m in previous.markets} if previous else {}
    return [
        Pulled(replace_question(p.parsed, before[p.parsed.market.id]), p.prices)
        if p.parsed.market.id in before
        else p
        for p in pulled
    ]


def replace_question(parsed: ParsedMarket, question: str) -> ParsedMarket:
    return replace(parsed, market=replace(parsed.market, question=question))


def _close_as_read(raw: dict) -> str:
    try:
        return iso(from_ms(raw.get("closeTime"), "closeTime"))
    except ValueError:
        return ""


def _provenance(client, query: ManifoldQuery, now: datetime, summary: ManifoldSummary) -> dict:
    return {
        "source": "manifold",
        "venue": "manifold",
        "manifold_url": client.base_url,
        "listing": "/v0/search-markets sort=newest filter=resolved, beforeTime + id de-duplication",
        "since": query.since and iso(query.since),
        "until": query.until and iso(query.until),
        "limit": query.limit,
        "pulled_at": iso(now),
        "counts": summary.counts().as_dict(),
        "fractional_outcomes": summary.fractional,
        "close_times_as_read": {"read_at": iso(now), "close_time": dict(summary.close_as_read)},
    }


__all__ = ["ManifoldQuery", "ManifoldSummary", "pull_manifold"]
