"""Shared by the Kalshi tests: a store already holding Polymarket markets (read from the
Polymarket fixtures in their Gamma / CLOB shapes), and what a fake market's candles say its
points are (computed here from the fake's own candle table, not by the code under test)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

from hindcast.errors import MalformedMarket, MarketSkipped
from hindcast.markets.bundle import MarketBundle
from hindcast.markets.fake_kalshi import FakeMarket
from hindcast.markets.parse import parse_gamma_market, parse_history
from hindcast.markets.store import write_version

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "polymarket"


def polymarket_bundle() -> MarketBundle:
    raws = json.loads((FIXTURES / "gamma_markets.json").read_text(encoding="utf-8"))
    histories = json.loads((FIXTURES / "prices_history.json").read_text(encoding="utf-8"))
    markets, resolutions, prices, meta = {}, {}, {}, {}
    for raw in raws:
        try:
            parsed = parse_gamma_market(raw)
        except (MarketSkipped, MalformedMarket):
            continue
        mid = parsed.market.id
        bodies = [
            b for b in histories.get(parsed.meta.yes_token, {}).values() if isinstance(b, dict)
        ]
        try:  # a broken history leaves the market out whole, as a pull does
            history = parse_history(mid, bodies[0]["history"]) if bodies else ()
        except MalformedMarket:
            continue
        markets[mid], resolutions[mid], meta[mid] = parsed.market, parsed.resolution, parsed.meta
        if history:
            prices[mid] = history
    return MarketBundle(tuple(markets.values()), tuple(resolutions.values()), prices, meta)


def polymarket_store(root: Path) -> tuple[str, MarketBundle]:
    bundle = polymarket_bundle()
    return write_version(
        root, bundle, {"source": "polymarket", "fixture": "tests/fixtures/polymarket"}
    ), bundle


def expected_points(market: FakeMarket) -> list[tuple[datetime, float]]:
    """(end_period_ts, close, else previous) of every candle that has either, oldest first."""
    out = []
    for t, close, previous in market.candles:
        value = close if close is not None else previous
        if value is not None:
            out.append((datetime.fromtimestamp(t, timezone.utc), float(Decimal(value))))
    return out


def tree(root: Path) -> dict:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else "dir")
        for p in sorted(root.rglob("*"))
    }
