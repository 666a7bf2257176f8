"""Resolved prediction markets: one client per venue, parsing, the frozen market store. The face
other packages import (loaded on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # what mypy sees; at run time each name loads on first use (`lazy`)
    from hindcast.markets import (
        fbdatasets,
        fbdatasets_extra,
        fbdatasets_files,
        fbdatasets_pull,
        importers,
        store,
        venues,
    )
    from hindcast.markets.bundle import MarketBundle, description_at, market_at
    from hindcast.markets.connect import pull_from
    from hindcast.markets.fbdatasets import FREEZE_ROUTE
    from hindcast.markets.kalshi_pull import KalshiQuery
    from hindcast.markets.live import OpenListing, OpenMarket, list_open
    from hindcast.markets.manifold_pull import ManifoldQuery
    from hindcast.markets.prices import history_before, price_at
    from hindcast.markets.pull import PullQuery
    from hindcast.markets.store import open_version

_WHERE = {
    "description_at": "bundle",
    "fbdatasets": "fbdatasets",
    "FREEZE_ROUTE": "fbdatasets",
    "fbdatasets_extra": "fbdatasets_extra",
    "fbdatasets_files": "fbdatasets_files",
    "fbdatasets_pull": "fbdatasets_pull",
    "history_before": "prices",
    "importers": "importers",
    "KalshiQuery": "kalshi_pull",
    "list_open": "live",
    "ManifoldQuery": "manifold_pull",
    "market_at": "bundle",
    "MarketBundle": "bundle",
    "OpenListing": "live",
    "OpenMarket": "live",
    "open_version": "store",
    "price_at": "prices",
    "pull_from": "connect",
    "PullQuery": "pull",
    "store": "store",
    "venues": "venues",
}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy(
    __name__,
    _WHERE,
    modules=(
        "fbdatasets",
        "fbdatasets_extra",
        "fbdatasets_files",
        "fbdatasets_pull",
        "importers",
        "store",
        "venues",
    ),
)
