"""Typed fields of one input row, checked at the boundary (a bad value raises `BadRow`, which
the readers turn into a `Reject` naming the row). Shared by every reader
(`hindcast.archive.readers`, `hindcast.archive.pushshift`)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, overload

from hindcast.errors import BadRow
from hindcast.timeutil import from_unix, parse_utc


def text_field(row: dict, name: str, required: bool = False) -> str:
    value = row.get(name)
    if value is None:
        if required:
            raise BadRow(f"missing field {name!r}")
        return ""
    if not isinstance(value, str):
        raise BadRow(f"{name} is {type(value).__name__}, expected a string")
    if required and not value.strip():
        raise BadRow(f"empty field {name!r}")
    return value


@overload
def unix_field(row: dict, name: str, required: Literal[True] = True) -> datetime: ...
@overload
def unix_field(row: dict, name: str, required: bool) -> datetime | None: ...
def unix_field(row: dict, name: str, required: bool = True) -> datetime | None:
    value = row.get(name)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadRow(f"{name} is {value!r}, expected unix seconds")
    if not 0 <= value < 32_503_680_000:
        raise BadRow(f"{name} {value!r} out of range")
    return from_unix(value)


@overload
def instant_field(row: dict, name: str, required: Literal[True] = True) -> datetime: ...
@overload
def instant_field(row: dict, name: str, required: bool) -> datetime | None: ...
def instant_field(row: dict, name: str, required: bool = True) -> datetime | None:
    """ISO-8601 with a zone, unix seconds, or an aware datetime (Parquet timestamps)."""
    value = row.get(name)
    if value is None and not required:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise BadRow(f"{name} {value.isoformat()} has no time zone")
        return parse_utc(value.isoformat())
    if isinstance(value, str):
        try:
            return parse_utc(value)
        except ValueError as exc:
            raise BadRow(f"{name} {value!r}: {exc}") from None
    return unix_field(row, name)
