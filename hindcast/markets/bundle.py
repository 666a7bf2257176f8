"""MarketBundle: the unit a loader or importer produces and a market store version holds.

Besides markets, resolutions and prices a bundle may carry, per market, the source's
metadata (`MarketMeta`: negRisk, category, tags, outcome labels, CLOB token) and the
versions of its description as they were observed (`DescriptionVersion`): a question at
t0 must use the text that existed at t0 (`description_at`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from hindcast.errors import LeakageError, MarketDataError
from hindcast.records import Market, PricePoint, Resolution
from hindcast.timeutil import iso, require_aware


@dataclass(frozen=True, slots=True)
class MarketMeta:
    """What the source says about a market beyond the Market record (never the outcome)."""

    market_id: str
    source_id: str = ""
    neg_risk: bool = False
    category: str = ""
    tags: tuple[str, ...] = ()
    event: str = ""
    outcomes: tuple[str, ...] = ()
    yes_index: int = 0
    yes_token: str = ""
    history_fidelity: int | None = None
    # venue, price provenance and resolution metadata (issue 23): emitted in the content hash
    # only when not at their defaults, so bundles written before them hash as they did
    venue: str = "polymarket"
    # e.g. "data-api /v2/prices-history", "clob /prices-history windows", "kalshi candlesticks"
    price_route: str = ""
    price_bucket_seconds: int | None = None  # the width of one point's bucket, as asked of the API
    price_definition: str = ""  # as the API names it, e.g. "midpoint (unconfirmed)", "candle close"
    disputed: bool = False  # Gamma wasDisputed (a challenged proposal)
    rules_updated_at: datetime | None = None  # when the question's rules were updated, if they were
    resolution_statuses: tuple[str, ...] = ()  # the resolution status chain, oldest first

    def __post_init__(self) -> None:
        if self.rules_updated_at is not None:
            object.__setattr__(self, "rules_updated_at", require_aware(self.rules_updated_at))

    def extra(self) -> dict:
        """The issue-23 fields that differ from their defaults (JSON-ready, for hashing)."""
        values = {
            "venue": self.venue,
            "price_route": self.price_route,
            "price_bucket_seconds": self.price_bucket_seconds,
            "price_definition": self.price_definition,
            "disputed": self.disputed,
            "rules_updated_at": _t(self.rules_updated_at),
            "resolution_statuses": list(self.resolution_statuses),
        }
        return {k: v for k, v in values.items() if v != EXTRA_DEFAULTS[k]}


EXTRA_DEFAULTS = {
    "venue": "polymarket",
    "price_route": "",
    "price_bucket_seconds": None,
    "price_definition": "",
    "disputed": False,
    "rules_updated_at": None,
    "resolution_statuses": [],
}


@dataclass(frozen=True, slots=True)
class PullCounts:
    """What one pull did, market by market: every listed market is stored, skipped (by
    reason) or failed; `incomplete` counts stored markets whose history is empty or does not
    reach back to the market's opening (stored, but not as complete)."""

    listed: int = 0
    stored: int = 0
    skipped: tuple[tuple[str, int], ...] = ()  # (reason, count), sorted by reason
    failed: int = 0
    incomplete: int = 0

    @classmethod
    def of(cls, summary) -> PullCounts:
        """The counts of a venue's pull summary (listed, stored, skipped Counter, failed and
        incomplete lists)."""
        return cls(
            summary.listed,
            summary.stored,
            tuple(sorted(summary.skipped.items())),
            len(summary.failed),
            len(summary.incomplete),
        )

    @property
    def skipped_total(self) -> int:
        return sum(n for _, n in self.skipped)

    @property
    def short(self) -> bool:
        """True when fewer markets were stored than listed."""
        return self.stored < self.listed

    def as_dict(self) -> dict:
        return {
            "listed": self.listed,
            "stored": self.stored,
            "skipped": dict(self.skipped),
            "skipped_total": self.skipped_total,
            "failed": self.failed,
            "incomplete": self.incomplete,
        }


@dataclass(frozen=True, slots=True)
class DescriptionVersion:
    """A market description and the instant from which it was known (None: from the start)."""

    text: str
    valid_from: datetime | None = None

    def __post_init__(self) -> None:
        if self.valid_from is not None:
            object.__setattr__(self, "valid_from", require_aware(self.valid_from))


@dataclass(frozen=True)
class MarketBundle:
    """Markets, their resolutions and their price histories (each sorted by time).

    `meta` and `descriptions` are optional; a bundle without them hashes as it always did.
    `descriptions[id]` is sorted by valid_from, the first version valid from the start.
    """

    markets: tuple[Market, ...]
    resolutions: tuple[Resolution, ...]
    prices: dict[str, tuple[PricePoint, ...]]
    meta: dict[str, MarketMeta] = field(default_factory=dict)
    descriptions: dict[str, tuple[DescriptionVersion, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        ids = [m.id for m in self.markets]
        if len(set(ids)) != len(ids):
            raise ValueError("duplicate market id in bundle")
        known = set(ids)
        stray = [r.market_id for r in self.resolutions if r.market_id not in known]
        stray += [k for k in (*self.prices, *self.meta, *self.descriptions) if k not in known]
        if stray:
            raise ValueError(f"resolution or prices for unknown market {stray[0]}")

    @cached_property
    def by_id(self) -> dict[str, Market]:
        """Market id → market (made once per bundle: a sweep looks a market up per forecast)."""
        return {m.id: m for m in self.markets}

    def content_hash(self) -> str:
        """sha256 of a canonical text of every record: equal content, equal
        hash, any library version."""
        digest = hashlib.sha256()
        for line in _canonical_lines(self):
            digest.update(line.encode("utf-8") + b"\n")
        return digest.hexdigest()


def _canonical_lines(bundle: MarketBundle):
    for m in sorted(bundle.markets, key=lambda m: m.id):
        yield json.dumps(
            [
                "market",
                m.id,
                m.question,
                m.description,
                m.url,
                m.slug,
                m.topic,
                _t(m.opened_at),
                _t(m.scheduled_close),
                m.volume,
                m.source,
            ],
            ensure_ascii=False,
        )
    for r in sorted(bundle.resolutions, key=lambda r: r.market_id):
        fraction = [] if r.fraction is None else [repr(r.fraction)]  # older bundles hash as before
        yield json.dumps(
            ["resolution", r.market_id, r.status, _t(r.resolved_at), _t(r.known_at), *fraction]
        )
    for market_id in sorted(bundle.prices):
        for point in bundle.prices[market_id]:
            yield json.dumps(["price", market_id, _t(point.t), repr(point.p)])
    for market_id in sorted(bundle.meta):
        m = bundle.meta[market_id]
        yield json.dumps(
            [
                "meta",
                market_id,
                m.source_id,
                m.neg_risk,
                m.category,
                list(m.tags),
                m.event,
                list(m.outcomes),
                m.yes_index,
                m.yes_token,
                m.history_fidelity,
                *([m.extra()] if m.extra() else []),
            ],
            ensure_ascii=False,
            sort_keys=True,
        )
    for market_id in sorted(bundle.descriptions):
        for version in bundle.descriptions[market_id]:
            yield json.dumps(
                ["description", market_id, _t(version.valid_from), version.text], ensure_ascii=False
            )


def _t(value):
    return None if value is None else iso(value)


def description_versions(source, market_id: str) -> tuple[DescriptionVersion, ...]:
    """The recorded versions of a market's description; its one current text if none were."""
    bundle = getattr(source, "bundle", source)
    versions = bundle.descriptions.get(market_id)
    if versions:
        return versions
    return (DescriptionVersion(_market(bundle, market_id).description),)


def description_at(source, market_id: str, t0: datetime) -> str:
    """The description as it stood at t0: the last version known strictly before t0.

    `source` is a MarketBundle or a StoreVersion. Raises LeakageError when every recorded
    version appeared at or after t0 (no text of that market is known from before t0).
    """
    t0 = require_aware(t0)
    known = [
        v
        for v in description_versions(source, market_id)
        if v.valid_from is None or v.valid_from < t0
    ]
    if not known:
        raise LeakageError(f"market {market_id}: no description known before {iso(t0)}")
    return known[-1].text


def market_at(source, market_id: str, t0: datetime) -> Market:
    """The Market record with its description as it stood at t0."""
    from dataclasses import replace

    bundle = getattr(source, "bundle", source)
    return replace(_market(bundle, market_id), description=description_at(bundle, market_id, t0))


def with_description(
    versions: tuple[DescriptionVersion, ...], text: str, seen_at: datetime
) -> tuple[DescriptionVersion, ...]:
    """`versions` plus `text` as known from `seen_at`, unless it is already the latest text."""
    if versions and versions[-1].text == text:
        return versions
    return (*versions, DescriptionVersion(text, seen_at))


def _market(bundle: MarketBundle, market_id: str) -> Market:
    market = bundle.by_id.get(market_id)
    if market is not None:
        return market

    raise MarketDataError(f"no market {market_id!r} in this bundle")
