"""Importers for market files published by others. Each row is parsed once, here.

ForecastBench format (see ../shared/data/README.md): `markets.jsonl` + `prices_daily.csv`.
A market's price history is the daily prices plus its `freeze_points` (the YES price at a
recorded instant); where a freeze point and a daily price fall on one instant, the freeze
point, measured at that exact instant, is kept.
All-or-nothing: any malformed row raises InputFormatError naming file and line, and no
bundle is produced, so nothing can be half-written. Every value is checked for its type
here (a boolean is not an outcome, a number is not a text), and every instant must lie in
[1900-01-01, 2200-01-01): earlier or later ones are typos or sentinels, and arithmetic on
them (offsets, day ends) overflows. A file without any market is refused: an empty store
version would silently replace the previous one as LATEST.
"""

from __future__ import annotations

import csv
import json
import re
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

from hindcast.errors import InputFormatError, MarketDataError
from hindcast.markets.bundle import MarketBundle
from hindcast.markets.prices import sort_history
from hindcast.markets.topics import topic_of
from hindcast.records import Market, PricePoint, Resolution
from hindcast.timeutil import ONE_DAY, day_start, parse_utc

_CONDITION_ID = re.compile(r"^0x[0-9a-fA-F]{64}$")
_OUTCOMES = {1.0: "yes", 0.0: "no", 0.5: "fifty-fifty"}
PRICE_METHODS = ("v2_value_at_date", "v1_value_at_fetch")
EARLIEST = datetime(
    1900, 1, 1, tzinfo=timezone.utc
)  # instants outside [EARLIEST, LATEST) are refused
LATEST = datetime(2200, 1, 1, tzinfo=timezone.utc)


def import_forecastbench(markets_path: Path, prices_path: Path | None) -> MarketBundle:
    """Read both files; raise InputFormatError listing every malformed row."""
    markets, resolutions, freezes = _read_markets(Path(markets_path))
    if not markets:
        raise MarketDataError(f"{markets_path}: no market in this file; nothing was written")
    daily = _read_prices(Path(prices_path), {m.id for m in markets}) if prices_path else {}
    prices = {
        i: _merge(daily.get(i, ()), freezes.get(i, ())) for i in sorted(set(daily) | set(freezes))
    }
    return MarketBundle(tuple(markets), tuple(resolutions), {i: h for i, h in prices.items() if h})


def _merge(daily, freezes) -> tuple[PricePoint, ...]:
    by_instant = {p.t: p for p in daily} | {p.t: p for p in freezes}
    return tuple(by_instant[t] for t in sorted(by_instant))


def _read_markets(path: Path):
    markets, resolutions, freezes, problems, seen = [], [], {}, [], set()
    for number, raw in enumerate(_lines(path), start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw.decode("utf-8-sig" if number == 1 else "utf-8"))
            market, resolution = _parse_market(row)
            freezes[market.id] = _freeze_points(row)
            if market.id in seen:
                raise ValueError(f"duplicate market id {market.id}")
            seen.add(market.id)
            markets.append(market)
            resolutions.append(resolution)
        except (ValueError, KeyError, TypeError, OverflowError) as exc:
            problems.append(f"{path}:{number}: {_reason(exc)}")
    if problems:
        raise InputFormatError(str(path), problems)
    return markets, resolutions, freezes


def _freeze_points(row: dict) -> tuple[PricePoint, ...]:
    points = row.get("freeze_points") or []
    if not isinstance(points, list):
        raise ValueError("freeze_points must be a list")
    try:
        return sort_history([_freeze_point(f) for f in points])
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"freeze_points: {_reason(exc)}") from exc


def _freeze_point(item: dict) -> PricePoint:
    if not isinstance(item, dict):
        raise ValueError("each freeze point must be a JSON object")
    return PricePoint(_time(item, "freeze_datetime"), _number(item, "freeze_value"))


def _parse_market(row: dict) -> tuple[Market, Resolution]:
    if not isinstance(row, dict):
        raise ValueError("a line must hold one JSON object")
    market_id = _text(row, "id")
    if not _CONDITION_ID.match(market_id):
        raise ValueError(f"id {market_id!r} is not a 0x… condition id of 64 hex digits")
    market = Market(
        id=market_id,
        question=_text(row, "question"),
        description=_optional_text(row, "background"),
        url=_optional_text(row, "url"),
        slug=_optional_text(row, "slug"),
        topic=topic_of(_text(row, "question")),
        opened_at=_maybe_time(row, "market_info_open_datetime"),
        scheduled_close=_maybe_time(row, "market_info_close_datetime"),
        source="forecastbench",
    )
    return market, _parse_resolution(market_id, row)


def _parse_resolution(market_id: str, row: dict) -> Resolution:
    """Effective resolution = earlier of resolution_date (00:00 UTC) and first-seen;
    the outcome is certainly public by first-seen."""
    if row.get("resolved") is not True:
        raise ValueError("market is not resolved (resolved must be true)")
    outcome = row.get("resolved_to")
    status = (
        None
        if isinstance(outcome, bool) or not isinstance(outcome, (int, float))
        else _OUTCOMES.get(outcome)
    )
    if status is None:
        raise ValueError(f"resolved_to {row.get('resolved_to')!r} is not 1.0, 0.0 or 0.5")
    on_date = _time(row, "resolution_date")
    first_seen = _time(row, "resolution_first_seen")
    return Resolution(market_id, status, resolved_at=min(on_date, first_seen), known_at=first_seen)


def _read_prices(path: Path, known: set[str]) -> dict[str, tuple[PricePoint, ...]]:
    try:
        return _read_price_rows(path, known)
    except UnicodeDecodeError as exc:
        raise InputFormatError(
            str(path), [f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})"]
        ) from exc
    except csv.Error as exc:
        raise InputFormatError(str(path), [f"{path}: unreadable CSV ({exc})"]) from exc


def _read_price_rows(path: Path, known: set[str]) -> dict[str, tuple[PricePoint, ...]]:
    points, problems = defaultdict(list), []
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = {"condition_id", "date", "p_yes", "method", "fetched_at_commit_time"} - set(
            reader.fieldnames or ()
        )
        if missing:
            raise InputFormatError(str(path), [f"{path}:1: missing column(s) {sorted(missing)}"])
        for row in reader:
            try:
                market_id, point = _parse_price(row, known)
                points[market_id].append(point)
            except (ValueError, TypeError, OverflowError) as exc:
                problems.append(f"{path}:{reader.line_num}: {_reason(exc)}")
    histories = _sorted_histories(points, path, problems)
    if problems:
        raise InputFormatError(str(path), problems)
    return histories


def _parse_price(row: dict, known: set[str]) -> tuple[str, PricePoint]:
    market_id = row["condition_id"]
    if market_id not in known:
        raise ValueError(f"price for unknown market {market_id!r}")
    return market_id, PricePoint(t=price_instant(row), p=float(row["p_yes"]))


def price_instant(row: dict) -> datetime:
    """When a ForecastBench price was known.

    `v1_value_at_fetch` is the price at `fetched_at_commit_time`: that instant.
    `v2_value_at_date` is the price on `date`, which may reflect any moment of that day:
    it is stamped at the end of the day (next 00:00 UTC), so it is never used before
    the day it describes was over.
    """
    method = row["method"]
    if method == "v1_value_at_fetch":
        return _time(row, "fetched_at_commit_time")
    if method == "v2_value_at_date":
        return day_start(_time(row, "date")) + ONE_DAY
    raise ValueError(f"unknown price method {method!r} (expected one of {PRICE_METHODS})")


def _sorted_histories(points, path, problems) -> dict[str, tuple[PricePoint, ...]]:
    histories = {}
    for market_id, market_points in sorted(points.items()):
        try:
            histories[market_id] = sort_history(market_points)
        except ValueError as exc:
            problems.append(f"{path}: market {market_id}: {exc}")
    return histories


def _lines(path: Path):
    """Raw lines (bytes): each is decoded on its own, so a line that is not UTF-8 is named."""
    with path.open("rb") as handle:
        yield from handle


def _text(row: dict, key: str) -> str:
    value = row[key]
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{key} must be a non-empty string")
    return value


_UNKNOWN = (None, "", "N/A")  # ForecastBench writes "N/A" for an unknown date


def _maybe_time(row: dict, key: str) -> datetime | None:
    return None if row.get(key) in _UNKNOWN else _time(row, key)


def _optional_text(row: dict, key: str) -> str:
    value = row.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{key} must be a string, got {type(value).__name__}")
    return value or ""


def _number(row: dict, key: str) -> float:
    value = row[key]
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"{key} must be a number, got {type(value).__name__}")
    return float(value)


def _time(row: dict, key: str) -> datetime:
    """An instant within [EARLIEST, LATEST); anything else names the field."""
    try:
        value = parse_utc(_text(row, key))
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"{key}: {exc}") from exc
    if not EARLIEST <= value < LATEST:
        raise ValueError(
            f"{key}: {value.date().isoformat()} is outside {EARLIEST.year}..{LATEST.year - 1}"
        )
    return value


def _reason(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}"
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON ({exc.msg} at column {exc.colno})"
    if isinstance(exc, OverflowError):
        return f"date out of range ({exc})"
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 text ({exc.reason} at byte {exc.start} of the line)"
    return str(exc)
