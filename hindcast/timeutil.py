"""UTC parsing and formatting. No wall clock here: the current instant is always passed in."""

from __future__ import annotations

import functools
import re
from datetime import date, datetime, timedelta, timezone

UTC = timezone.utc
_SHORT_OFFSET = re.compile(r"([+-]\d{2})$")


def parse_utc(text: str) -> datetime:
    """Parse an ISO-8601 instant or date into an aware UTC datetime.

    Accepts `Z`, `+00:00`, Polymarket's `"2026-01-23 20:56:36+00"` (space, 2-digit offset),
    microseconds, and bare dates (taken as 00:00 UTC). A naive timestamp is refused: it
    would silently be read in some zone.
    """
    s = text.strip()
    if len(s) == 10:
        return datetime.combine(date.fromisoformat(s), datetime.min.time(), UTC)
    s = _SHORT_OFFSET.sub(r"\1:00", s.replace("Z", "+00:00"))
    value = datetime.fromisoformat(s)
    if value.tzinfo is None:
        raise ValueError(f"timestamp without a zone: {text!r}")
    try:
        return value.astimezone(UTC)
    except OverflowError:  # year 1 with a positive offset, 9999-12-31 with a negative one
        raise ValueError(f"instant {text!r} is out of range in UTC") from None


def from_unix(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def to_unix(value: datetime) -> int:
    return int(require_aware(value).timestamp())


def require_aware(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError(f"naive datetime {value.isoformat()} (hindcast needs UTC-aware times)")
    return value.astimezone(UTC)


def iso(value: datetime) -> str:
    """Canonical text of an instant: `2025-10-01T04:23:00Z` (microseconds kept when present).
    Equal instants have one text whatever their zone, so a plain datetime's text is kept
    (`_iso_kept`: a sweep of 10,000 markets formats the same t0s ~900,000 times)."""
    return _iso_kept(value) if type(value) is datetime else _iso(value)


@functools.lru_cache(maxsize=1 << 16)
def _iso_kept(value: datetime) -> str:
    return _iso(value)


def _iso(value: datetime) -> str:
    v = require_aware(value)
    spec = "microseconds" if v.microsecond else "seconds"
    return v.isoformat(timespec=spec).replace("+00:00", "Z")


def month_key(value: datetime) -> str:
    """`YYYY-MM` of an instant in UTC, the archive's partition key."""
    return require_aware(value).strftime("%Y-%m")


def day_start(value: datetime) -> datetime:
    v = require_aware(value)
    return datetime(v.year, v.month, v.day, tzinfo=UTC)


ONE_DAY = timedelta(days=1)
