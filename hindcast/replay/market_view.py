"""One market of a store as plain JSON-ready data (what `hindcast markets list/show` print):
its record, effective resolution, lifetime, and, at a t0, the price and description as they
stood. A t0 the replay would refuse is refused here too (the same cutoff rules)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, is_dataclass
from datetime import datetime
from pathlib import Path

from hindcast.errors import CutoffError, MarketDataError
from hindcast.markets import MarketBundle, description_at, price_at
from hindcast.records import Market, PricePoint, Resolution
from hindcast.replay.cutoffs import Lifetime, instant_cutoff, lifetime
from hindcast.timeutil import iso


def market_view(bundle: MarketBundle, market: Market, t0: datetime | None) -> dict:
    """Everything `show` prints. A t0 at or after the effective resolution, or not after
    the opening, raises CutoffError."""
    resolution = resolution_of(bundle, market.id)
    history = bundle.prices.get(market.id, ())
    view = {
        "market": jsonable(market),
        "meta": jsonable(bundle.meta.get(market.id)),
        "resolution": jsonable(resolution),
        "lifetime": _lifetime(market, resolution, history),
        "price_points": len(history),
    }
    if t0 is not None:
        instant_cutoff(_require_lifetime(market, resolution, history), t0)
        view["at_t0"] = {
            "t0": jsonable(t0),
            "price": _price_view(history, t0),
            "description": description_at(bundle, market.id, t0),
        }
    return view


def list_row(bundle: MarketBundle, market: Market) -> dict:
    """One line of `markets list`: id, status, resolution instant, topic, price points, question."""
    resolution = resolution_of(bundle, market.id)
    return {
        "id": market.id,
        "status": resolution.status if resolution else None,
        "resolved_at": jsonable(resolution.resolved_at) if resolution else None,
        "topic": market.topic,
        "price_points": len(bundle.prices.get(market.id, ())),
        "question": market.question,
    }


def find_market(bundle: MarketBundle, wanted: str, store: Path) -> Market:
    """The market with this id, or the only one whose id starts with it."""
    matches = [m for m in bundle.markets if m.id == wanted] or [
        m for m in bundle.markets if m.id.startswith(wanted)
    ]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise MarketDataError(f"no market {wanted!r} in the market store {store}")
    raise MarketDataError(
        f"{wanted!r} matches {len(matches)} markets of {store}: "
        + ", ".join(m.id for m in matches[:5])
    )


def resolution_of(bundle: MarketBundle, market_id: str) -> Resolution | None:
    return next((r for r in bundle.resolutions if r.market_id == market_id), None)


def jsonable(value: object) -> object:
    """Records, datetimes (ISO), tuples → JSON-ready values."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, datetime):
        return iso(value)
    if is_dataclass(value) and not isinstance(value, type):
        return {k: jsonable(v) for k, v in asdict(value).items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return str(value)


def _lifetime(
    market: Market, resolution: Resolution | None, history: Sequence[PricePoint]
) -> dict | None:
    try:
        life = _require_lifetime(market, resolution, history)
    except CutoffError:
        return None
    return {
        "start": jsonable(life.start),
        "end": jsonable(life.end),
        "days": round((life.end - life.start).total_seconds() / 86400, 2),
    }


def _require_lifetime(
    market: Market, resolution: Resolution | None, history: Sequence[PricePoint]
) -> Lifetime:
    if resolution is None:
        raise CutoffError(f"market {market.id} has no resolution in this store")
    return lifetime(market, resolution, history)


def _price_view(history: Sequence[PricePoint], t0: datetime) -> dict | None:
    point = price_at(history, t0)
    return None if point is None else {"p": point.p, "t": jsonable(point.t)}
