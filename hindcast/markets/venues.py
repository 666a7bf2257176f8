"""Which venue a stored market comes from (the leaderboard's `venue` slice).

`MarketMeta.venue` when the store records meta for the market; otherwise the `kalshi:` id
prefix (Kalshi markets are always stored with it), else the market's `source` (a Polymarket
pull says "polymarket", an import "forecastbench"), else "unknown".
"""

from __future__ import annotations

from hindcast.markets.bundle import MarketBundle
from hindcast.records import Market

KALSHI_PREFIX = "kalshi:"


def venue_of(bundle: MarketBundle, market: Market) -> str:
    meta = bundle.meta.get(market.id)
    if meta is not None and meta.venue:
        return meta.venue
    if market.id.startswith(KALSHI_PREFIX):
        return "kalshi"
    return market.source or "unknown"


def venues(bundle: MarketBundle) -> dict[str, str]:
    """market id → venue, for every market of the bundle."""
    return {m.id: venue_of(bundle, m) for m in bundle.markets}
