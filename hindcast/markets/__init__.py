"""Resolved prediction markets: one client per venue, parsing, the frozen market store. The face other packages import (loaded on first use)."""

from __future__ import annotations

from hindcast.faces import lazy

_WHERE = {
    "description_at": "bundle",
    "history_before": "prices",
    "importers": "importers",
    "KalshiQuery": "kalshi_pull",
    "market_at": "bundle",
    "MarketBundle": "bundle",
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
        "importers",
        "store",
        "venues",
    ),
)
