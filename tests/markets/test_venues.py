"""A market's venue (the leaderboard's `venue` slice): its meta's venue, else the `kalshi:` id
prefix (a store written before venues were recorded), else its source."""

from __future__ import annotations

from hindcast.markets.bundle import MarketBundle, MarketMeta
from hindcast.markets.venues import venues
from hindcast.records import Market


def test_meta_then_the_kalshi_prefix_then_the_source():
    markets = (
        Market("0xabc", "Q1?", "", source="polymarket"),
        Market("kalshi:KX-1", "Q2?", "", source=""),
        Market("fb-1", "Q3?", "", source="forecastbench"),
        Market("kalshi:KX-2", "Q4?", "", source="kalshi"),
        Market("x", "Q5?", ""),
    )
    meta = {"kalshi:KX-2": MarketMeta("kalshi:KX-2", venue="kalshi"), "0xabc": MarketMeta("0xabc")}
    assert venues(MarketBundle(markets, (), {}, meta)) == {
        "0xabc": "polymarket",
        "kalshi:KX-1": "kalshi",
        "fb-1": "forecastbench",
        "kalshi:KX-2": "kalshi",
        "x": "unknown",
    }
