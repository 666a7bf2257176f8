from datetime import datetime, timezone

import pytest

from hindcast.timeutil import iso, month_key, parse_utc

UTC = timezone.utc


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2026-01-22T00:01:27.770446Z", datetime(2026, 1, 22, 0, 1, 27, 770446, UTC)),
        ("2026-01-23 20:56:36+00", datetime(2026, 1, 23, 20, 56, 36, tzinfo=UTC)),
        ("2025-10-02T01:44:09+00:00", datetime(2025, 10, 2, 1, 44, 9, tzinfo=UTC)),
        ("2025-10-02T03:44:09+02:00", datetime(2025, 10, 2, 1, 44, 9, tzinfo=UTC)),
        ("2025-12-07", datetime(2025, 12, 7, tzinfo=UTC)),
    ],
)
def test_parse_utc_formats(text, expected):
    assert parse_utc(text) == expected
    assert parse_utc(text).utcoffset().total_seconds() == 0


def test_naive_timestamps_are_refused():
    with pytest.raises(ValueError, match="without a zone"):
        parse_utc("2025-10-02T01:44:09")


def test_iso_and_month_key():
    t = datetime(2025, 10, 31, 23, 59, 59, tzinfo=UTC)
    assert iso(t) == "2025-10-31T23:59:59Z"
    assert month_key(t) == "2025-10"
    with pytest.raises(ValueError):
        iso(datetime(2025, 1, 1))  # noqa: DTZ001  (the naive instant is refused)
