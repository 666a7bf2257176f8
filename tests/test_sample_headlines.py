"""The shipped archive sample is the test suite's source of real headlines: written back as
`headlines` inputs, they rebuild the shipped snapshot exactly, so nothing is lost by reading
them from `archive/sample` instead of the development data beside the checkout."""

from hindcast.archive.snapshot import build_snapshot
from tests.helpers import SAMPLE_ARCHIVE, sample_headlines


def test_the_sample_holds_every_real_headline_once():
    rows = [r for month in sample_headlines().values() for r in month]
    assert len(rows) == 46_809 and len({r["id"] for r in rows}) == len(rows)


def test_headlines_written_back_rebuild_the_shipped_snapshot_byte_for_byte(
    tmp_path, sample_headline_files
):
    assert [p.name for p in sample_headline_files][:2] == [
        "news_2025-07.jsonl",
        "news_2025-08.jsonl",
    ]
    shipped = (SAMPLE_ARCHIVE / "LATEST").read_text().strip()
    assert build_snapshot(sample_headline_files, "news-headlines", "headlines", tmp_path) == shipped
