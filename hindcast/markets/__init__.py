"""Resolved prediction markets: one client per venue, parsing, the frozen market store. The face
other packages import (loaded on first use)."""

from __future__ import annotations

# isort: skip_file
# fmt: off
from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # each name loads from its module on first use (hindcast.faces.lazy)
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
    from hindcast.markets.live import list_open
    from hindcast.markets.manifold_pull import ManifoldQuery
    from hindcast.markets.prices import history_before, price_at
    from hindcast.markets.pull import PullQuery
    from hindcast.markets.store import open_version

__all__ = ["FREEZE_ROUTE", "KalshiQuery", "ManifoldQuery", "MarketBundle", "PullQuery",
    "description_at", "fbdatasets", "fbdatasets_extra", "fbdatasets_files", "fbdatasets_pull",
    "history_before", "importers", "list_open", "market_at", "open_version",
    "price_at", "pull_from", "store", "venues"]
# fmt: on
__getattr__, __dir__ = lazy(__name__, __file__)
