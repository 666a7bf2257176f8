"""Open Polymarket markets as they stand now, for the service's live arm (`schedule.live`).

Gamma's keyset listing without `closed=true` lists open markets only; each binary item is
parsed at the boundary into a `Market` (no resolution: it has none yet) and its YES token's
price history is fetched the way a pull fetches a resolved one (the Data API, else CLOB
windows from the opening to `now`). What a forecaster may see of that history is decided
by the caller's t0-bound Context (points strictly before t0), never here. A market that is
not binary or cannot be read is reported by id with its reason and left out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from hindcast.errors import MarketDataError
from hindcast.markets.connect import polymarket_client
from hindcast.markets.parse import (
    _check_tokens,
    _json_list,
    _market,
    parse_data_history,
    parse_history,
    yes_index,
)
from hindcast.records import Market, PricePoint
from hindcast.timeutil import to_unix


@dataclass(frozen=True)
class OpenMarket:
    """An open binary market as listed at `listed_at`, with its YES price history."""

    market: Market
    yes_token: str
    history: tuple[PricePoint, ...]


@dataclass(frozen=True)
class OpenListing:
    markets: tuple[OpenMarket, ...]  # those chosen, with their histories
    skipped: dict[str, str] = field(default_factory=dict)  # market id → reason
    listed: int = 0  # open binary markets listed (before choosing)


def list_open(
    now: datetime, choose: Callable[[list[Market]], list[Market]] | None = None, **options
) -> OpenListing:
    """The open binary markets Gamma lists at `now` that `choose` keeps (all without it), each
    with its price history — fetched only for those (options: gamma_url, clob_url, data_url,
    attempts, timeout, user_agent — as for a pull)."""
    with polymarket_client(**options) as client:
        raws = [
            item
            for page in client.keyset_markets({"order": "id", "ascending": "true"})
            for item in page.items
        ]
        parsed, skipped = {}, {}
        for raw in raws:
            try:
                market, token = parse_open(raw)
                parsed[market.id] = (market, token)
            except (MarketDataError, ValueError, TypeError, KeyError) as exc:
                skipped[_key(raw)] = str(exc)
        chosen = [m.id for m in (choose or list)([m for m, _ in parsed.values()])]
        found = []
        for market_id in chosen:
            market, token = parsed[market_id]
            try:
                found.append(OpenMarket(market, token, _history(client, market, token, now)))
            except MarketDataError as exc:
                skipped[market_id] = str(exc)
    return OpenListing(tuple(found), skipped, len(parsed))


def _key(raw) -> str:
    return str(raw.get("conditionId", "?")) if isinstance(raw, dict) else "?"


def parse_open(raw: dict) -> tuple[Market, str]:
    """An open Gamma market → (Market, YES token id); ValueError when it is closed or not
    binary."""
    if raw.get("closed") is not False:
        raise ValueError("not open (closed is not false)")
    outcomes = _json_list(raw, "outcomes")
    if len(outcomes) != 2:
        raise ValueError(f"not binary ({len(outcomes)} outcomes)")
    tokens = _json_list(raw, "clobTokenIds")
    _check_tokens(tokens, outcomes)
    yes = yes_index(outcomes)
    return _market(raw, str(raw["conditionId"]), outcomes, yes), str(tokens[yes])


def _history(client, market: Market, token: str, now: datetime) -> tuple[PricePoint, ...]:
    from hindcast.markets.polymarket import DATA_BUCKET_SECONDS, FIDELITIES

    points = parse_data_history(market.id, client.data_history(token, DATA_BUCKET_SECONDS))
    if points or market.opened_at is None:
        return points
    for fidelity in FIDELITIES:
        window = client.windowed_history(token, to_unix(market.opened_at), to_unix(now), fidelity)
        if points := parse_history(market.id, window):
            return points
    return ()
