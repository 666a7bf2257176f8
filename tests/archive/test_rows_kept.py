"""A month keeps the document rows its searches read (`MonthData.rows_at`): the rows are those at
the positions asked, in the order asked, whether read now or kept from before, and whether or
not the kept ones were dropped on the way (ROWS_KEPT)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from hindcast.archive import index as index_module
from hindcast.archive.index import open_index
from tests.integration.archive_support import build_archive, write_headlines

START = datetime(2025, 3, 1, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def month(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rows")
    docs = [(f"d{i:02d}", START + timedelta(hours=i), f"headline number {i}") for i in range(40)]
    reader = open_index(build_archive(folder, [write_headlines(folder / "news.jsonl", docs)]))
    (name,) = reader.months
    return reader.open_month(name)


@pytest.mark.parametrize("kept", [1_000, 5])
def test_the_rows_at_positions_are_the_tables_rows_however_often_asked(month, monkeypatch, kept):
    monkeypatch.setattr(index_module, "ROWS_KEPT", kept)
    month.taken.clear()
    for positions in ([3, 1, 2], [2, 3, 39, 0], [1, 1, 7], [39, 38, 37, 36, 35, 34], [5]):
        expected = [month.rows.slice(p, 1).to_pylist()[0] for p in positions]
        assert month.rows_at(positions) == expected
        assert [r["id"] for r in month.rows_at(positions)] == [e["id"] for e in expected]
    assert len(month.taken) <= max(kept, 6)
