"""Generic news reader (JSONL and Parquet) and the shared parsing rules."""

from __future__ import annotations

from datetime import datetime, timezone

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hindcast.archive.ingest import ingest
from hindcast.archive.lines import ArchiveInputError, Reject
from hindcast.archive.readers import read_documents

from .conftest import write_jsonl

GOOD = {
    "id": "n1",
    "created_at": "2025-10-01T04:23:00Z",
    "title": "Fed cuts rates",
    "text": "By 25bp.",
    "url": "https://example.org/n1",
    "source": "Example Wire",
}


def _split(items):
    return [i for i in items if not isinstance(i, Reject)], [
        i for i in items if isinstance(i, Reject)
    ]


def test_news_jsonl_rows_and_rejects(tmp_path):
    path = write_jsonl(
        tmp_path / "news.jsonl",
        [
            GOOD,
            {
                **GOOD,
                "id": "n2",
                "created_at": 1759292580,
                "edited_at": "2025-10-02T00:00:00+00:00",
            },
            {**GOOD, "id": "n3", "created_at": "2025-10-01T04:23:00"},
            {**GOOD, "id": "n4", "title": "", "text": ""},
            {**GOOD, "id": "n5", "created_at": True},
            "",
            {**GOOD, "id": "n6", "url": 7},
        ],
    )
    docs, rejects = _split(list(read_documents(path, "news")))
    assert [d.id for d in docs] == ["n1", "n2"]
    assert docs[0].created_at == datetime(2025, 10, 1, 4, 23, tzinfo=timezone.utc)
    assert (docs[0].source, docs[0].kind, docs[0].edit_state) == ("Example Wire", "news", "never")
    assert docs[1].edit_state == "at" and docs[1].edited_at == datetime(
        2025, 10, 2, tzinfo=timezone.utc
    )
    assert [(r.line, r.reason) for r in rejects] == [
        (3, "created_at '2025-10-01T04:23:00': timestamp without a zone: '2025-10-01T04:23:00'"),
        (4, "neither title nor text"),
        (5, "created_at is True, expected unix seconds"),
        (7, "url is int, expected a string"),
    ]


def test_news_parquet_with_timestamps(tmp_path):
    ts = pa.timestamp("us", tz="UTC")
    table = pa.table(
        {
            "id": ["p1", "p2"],
            "created_at": pa.array(
                [
                    datetime(2025, 9, 30, 23, 59, 59, tzinfo=timezone.utc),
                    datetime(2025, 10, 1, tzinfo=timezone.utc),
                ],
                ts,
            ),
            "title": ["September", "October"],
            "text": ["a", None],
            "url": ["", ""],
            "source": ["S", "S"],
        }
    )
    path = tmp_path / "news.parquet"
    pq.write_table(table, path)
    summary = ingest([path], "wire", "news", tmp_path / "arc")[0]
    assert summary.months == {"2025-09": 1, "2025-10": 1} and summary.rejected == 0


def test_naive_parquet_timestamps_are_rejected(tmp_path):
    path = tmp_path / "naive.parquet"
    pq.write_table(
        pa.table(
            {
                "id": ["x"],
                "created_at": pa.array([datetime(2025, 1, 1)], pa.timestamp("us")),  # noqa: DTZ001  (naive, as files hold it)
                "title": ["t"],
            }
        ),
        path,
    )
    docs, rejects = _split(list(read_documents(path, "news")))
    assert not docs and rejects[0].line == 1 and "no time zone" in rejects[0].reason


def test_unknown_format_and_missing_file(tmp_path):
    with pytest.raises(ArchiveInputError, match="unknown format 'csv'"):
        ingest([tmp_path / "x.csv"], "s", "csv", tmp_path)
    with pytest.raises(ArchiveInputError, match="no such input file"):
        ingest([tmp_path / "missing.jsonl"], "s", "news", tmp_path)


def test_bad_utf8_is_rejected_not_fatal(tmp_path):
    path = tmp_path / "news.jsonl"
    path.write_bytes(
        b'{"id": "a", "created_at": 1, "title": "\xff"}\n'
        + write_jsonl(tmp_path / "g.jsonl", [GOOD]).read_bytes()
    )
    docs, rejects = _split(list(read_documents(path, "news")))
    assert [d.id for d in docs] == ["n1"] and rejects[0].reason.startswith("not valid UTF-8")
