"""`markets import forecastbench-datasets --histories venue`: the venue markets of the imported
questions that the venue store lacks, pulled by id into it before the import joins them.

- Which: every Polymarket and Manifold question the import will take (a single id with a
  `resolved: true` row), whose market (Polymarket condition id, `manifold:<id>`) is not in the
  venue store's latest version (`missing`).
- Polymarket: asked from Gamma by `condition_ids` (closed, then open: `pull.list_by_id`),
  parsed, their YES histories fetched (`pull_history`) as `markets pull` does. Manifold: each
  full market and its bets (`manifold_pull`). Each venue writes one new version of the venue
  store (merged, other markets kept), under the store's pull lock, with its cache in
  `STORE/.pull/<venue>-ids-<key>/` so a killed import re-run asks only for what it lacks.
- Counts per venue: asked = stored + skipped + failed; an id the venue does not return is
  skipped ("not found at the venue"), a market not resolved yet is skipped with its reason.
- A host that cannot be reached stops the import (the clients' breaker: `HostDown`, or
  `ManifoldError.unreachable`) before the import writes anything.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from hindcast.markets.bundle import MarketBundle
from hindcast.markets.connect import manifold_client, polymarket_client
from hindcast.markets.fbdatasets import VENUES, importable_ids
from hindcast.markets.fbdatasets_files import DatasetFiles
from hindcast.markets.parse import market_key
from hindcast.markets.store import write_version
from hindcast.timeutil import iso

__all__ = ["NOT_FOUND", "missing", "pull_missing", "wanted"]

NOT_FOUND = "not found at the venue (asked by id)"
Progress = Callable[[str, int, "int | None"], None]


def wanted(files: DatasetFiles) -> dict[str, list[str]]:
    """Venue → the ids of the Polymarket and Manifold questions the import will take."""
    return importable_ids(files)


def missing(files: DatasetFiles, venue: MarketBundle | None) -> dict[str, list[str]]:
    """Venue → wanted ids whose market the venue store does not hold (with a history)."""
    held = set(venue.prices) if venue else set()
    return {
        source: [i for i in ids if VENUES[source] + i not in held]
        for source, ids in wanted(files).items()
    }


def pull_missing(
    store: Path, ids: dict[str, list[str]], now: datetime, options: dict, progress=None
) -> dict[str, object]:
    """Pull each venue's ids into `store`; venue → its pull summary (`counts()`, `version`).
    `options`: gamma_url, clob_url, data_url, manifold_url, attempts, timeout."""
    fresh = not Path(store).exists()
    try:
        return _pull_all(Path(store), ids, now, options, progress)
    except BaseException:
        if fresh:  # a store this import created and nothing was written into: no trace left
            _remove_if_empty(Path(store))
        raise


def _remove_if_empty(store: Path) -> None:
    if store.is_dir() and not (store / "LATEST").exists() and not (store / "versions").exists():
        shutil.rmtree(store, ignore_errors=True)


def _pull_all(store: Path, ids: dict[str, list[str]], now: datetime, options: dict, progress):
    out: dict[str, object] = {}
    common = {k: options[k] for k in ("attempts", "timeout") if k in options}
    if ids.get("polymarket"):
        urls = {k: options.get(k) for k in ("gamma_url", "clob_url", "data_url")}
        with polymarket_client(**urls, **common) as client:
            out["polymarket"] = _polymarket(Path(store), client, ids["polymarket"], now, progress)
    if ids.get("manifold"):
        with manifold_client(options.get("manifold_url"), **common) as client:
            out["manifold"] = _manifold(Path(store), client, ids["manifold"], now, progress)
    return out


def _key(venue: str, url: str, ids: list[str]) -> str:
    text = json.dumps([url, sorted(ids)])
    return f"{venue}-ids-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def _polymarket(root: Path, client, ids: list[str], now: datetime, progress):
    from hindcast.markets import pull as poly
    from hindcast.markets.pull_history import with_histories

    summary = poly.PullSummary()
    with poly._exclusive(root, now):
        work = poly.WorkDir(root / ".pull" / _key("polymarket", client.gamma_url, ids))
        tick = poly._Counting(progress)
        raws = poly.list_by_id(client, poly.WorkDir(work.path / "by-id"), ids, tick=tick)
        raws = [r for r in raws if market_key(r) in set(ids)]
        found = {market_key(r) for r in raws}
        summary.listed = len(raws) + len(set(ids) - found)
        if set(ids) - found:
            summary.skipped[NOT_FOUND] += len(set(ids) - found)
        previous = poly._previous(root)
        parsed = poly._parse_all(raws, summary)
        pulled = with_histories(client, work, parsed, previous, summary, progress)
        summary.stored = len(pulled)
        if pulled:
            bundle = poly.merge(previous, pulled, now)
            summary.version = write_version(
                root, bundle, _provenance("polymarket", client.gamma_url, ids, now, summary)
            )
        poly.log_pull(root, now, summary)
        if pulled or not summary.failed:
            shutil.rmtree(work.path, ignore_errors=True)
    return summary


def _manifold(root: Path, client, ids: list[str], now: datetime, progress):
    from hindcast.markets import manifold_pull as mf
    from hindcast.markets import pull as poly

    summary = mf.ManifoldSummary(listed=len(ids))
    with poly._exclusive(root, now):
        work = poly.WorkDir(root / ".pull" / _key("manifold", client.base_url, ids))
        previous = poly._previous(root)
        pulled = mf._fetch_all(client, work, ids, previous, summary, progress)
        summary.stored = len(pulled)
        summary.fractional = sum(p.parsed.resolution.status == "fractional" for p in pulled)
        if pulled:
            bundle = poly.merge(previous, mf._first_questions(previous, pulled), now)
            read = {"read_at": iso(now), "close_time": dict(summary.close_as_read)}
            provenance = _provenance("manifold", client.base_url, ids, now, summary)
            provenance |= {"fractional_outcomes": summary.fractional, "close_times_as_read": read}
            summary.version = write_version(root, bundle, provenance)
        poly.log_pull(root, now, summary)  # type: ignore[arg-type]
        if pulled or not summary.failed:
            shutil.rmtree(work.path, ignore_errors=True)
    return summary


def _provenance(venue: str, url: str, ids: list[str], now: datetime, summary) -> dict:
    return {
        "source": venue,
        "venue": venue,
        "url": url,
        "listing": "by id, for markets import forecastbench-datasets --histories venue",
        "ids": sorted(ids),
        "pulled_at": iso(now),
        "counts": summary.counts().as_dict(),
    }
