"""The issue-23 MarketMeta fields: old bundles hash and store as before; new values round-trip."""

from __future__ import annotations

import shutil
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from hindcast.markets.bundle import MarketBundle, MarketMeta, PullCounts
from hindcast.markets.store import open_version, write_version
from hindcast.records import Market, PricePoint, Resolution

SAMPLE = Path(__file__).resolve().parents[2] / "markets" / "sample"
T = datetime(2026, 3, 1, tzinfo=UTC)


def _bundle(meta: MarketMeta) -> MarketBundle:
    market = Market("0xabc", "Will it?", "rules", opened_at=T)
    resolution = Resolution(
        "0xabc", "yes", datetime(2026, 4, 1, tzinfo=UTC), datetime(2026, 4, 2, tzinfo=UTC)
    )
    return MarketBundle((market,), (resolution,), {"0xabc": (PricePoint(T, 0.4),)}, {"0xabc": meta})


def test_default_fields_keep_the_old_content_hash_and_files(tmp_path):
    """The hash of a bundle with the defaults is the one its pre-issue-23 canonical text gives
    (written out here by hand, not by the code under test)."""
    import hashlib

    bundle = _bundle(MarketMeta("0xabc", yes_token="123", history_fidelity=60))
    lines = [
        '["market", "0xabc", "Will it?", "rules", "", "", "other", "2026-03-01T00:00:00Z", '
        'null, null, ""]',
        '["resolution", "0xabc", "yes", "2026-04-01T00:00:00Z", "2026-04-02T00:00:00Z"]',
        '["price", "0xabc", "2026-03-01T00:00:00Z", "0.4"]',
        '["meta", "0xabc", "", false, "", [], "", [], 0, "123", 60]',
    ]
    expected = hashlib.sha256("".join(line + "\n" for line in lines).encode()).hexdigest()
    assert bundle.content_hash() == expected
    version = write_version(tmp_path, bundle)
    import pyarrow.parquet as pq

    names = pq.read_table(tmp_path / "versions" / version / "meta.parquet").column_names
    assert "venue" not in names and "disputed" not in names


def test_new_fields_change_the_hash_and_round_trip(tmp_path):
    base = MarketMeta("0xabc", yes_token="123", history_fidelity=60)
    full = replace(
        base,
        venue="kalshi",
        price_route="data-api /v2/prices-history",
        price_bucket_seconds=43200,
        price_definition="midpoint (unconfirmed)",
        disputed=True,
        rules_updated_at=datetime(2026, 3, 20, tzinfo=UTC),
        resolution_statuses=("proposed", "disputed", "resolved"),
    )
    assert _bundle(full).content_hash() != _bundle(base).content_hash()
    for field, value in [("disputed", True), ("price_route", "x"), ("venue", "kalshi")]:
        assert (
            _bundle(replace(base, **{field: value})).content_hash() != _bundle(base).content_hash()
        )
    version = write_version(tmp_path, _bundle(full))
    assert open_version(tmp_path, version).bundle.meta["0xabc"] == full
    assert open_version(tmp_path, version).bundle.content_hash() == _bundle(full).content_hash()


def test_the_shipped_sample_store_still_reads_with_defaults(tmp_path):
    shutil.copytree(SAMPLE, tmp_path / "s", ignore=shutil.ignore_patterns("forecastbench"))
    version = open_version(tmp_path / "s")
    assert version.bundle.content_hash().startswith(version.id.removeprefix("m-"))
    for meta in version.bundle.meta.values():
        assert (meta.venue, meta.disputed, meta.resolution_statuses, meta.rules_updated_at) == (
            "polymarket",
            False,
            (),
            None,
        )


def test_pull_counts_say_when_fewer_were_stored_than_listed():
    counts = PullCounts(listed=5, stored=3, skipped=(("not binary", 1),), failed=1)
    assert counts.short and counts.skipped_total == 1
    assert counts.as_dict() == {
        "listed": 5,
        "stored": 3,
        "skipped": {"not binary": 1},
        "skipped_total": 1,
        "failed": 1,
        "incomplete": 0,
    }
    assert not PullCounts(listed=2, stored=2).short
