"""The Kalshi pull into the market store, against the shipped fake at the HTTP transport:
live and historical settled markets stored with their candles, provenance recorded, a store
that holds Polymarket markets kept, a killed pull resumed, a failing market named."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import httpx
import pytest

from hindcast.http import RetryPolicy
from hindcast.markets.fake_kalshi import FakeKalshi, Reply, mock_transport
from hindcast.markets.kalshi import KalshiClient
from hindcast.markets.kalshi_pull import KalshiQuery, pull_kalshi
from hindcast.markets.store import open_version
from tests.markets.kalshi_support import expected_points, polymarket_store

BASE = "https://external-api.kalshi.com/trade-api/v2"
NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)


@pytest.fixture
def fake() -> FakeKalshi:
    return FakeKalshi.generate(live=8, historical=7)


def client_of(fake: FakeKalshi, page_limit: int = 4) -> KalshiClient:
    http = httpx.Client(transport=mock_transport(fake))
    return KalshiClient(
        http, BASE, RetryPolicy(attempts=2, base_delay=0.0), lambda s: None, page_limit
    )


def finalized(fake: FakeKalshi) -> list:
    return [
        m
        for m in fake.markets
        if m.raw["status"] == "finalized"
        and m.raw["result"] in ("yes", "no")
        and m.raw["market_type"] == "binary"
    ]


def test_pull_stores_every_settled_binary_market_of_both_sides_with_its_candles(fake, tmp_path):
    summary = pull_kalshi(tmp_path, client_of(fake), KalshiQuery(), NOW)
    bundle = open_version(tmp_path).bundle
    wanted = finalized(fake)
    assert summary.listed == len(fake.markets) == 25 and summary.stored == len(wanted) == 17
    assert (summary.listed_live, summary.listed_historical) == (13, 12)
    assert sorted(m.id for m in bundle.markets) == sorted(f"kalshi:{m.ticker}" for m in wanted)
    for m in wanted:
        mid = f"kalshi:{m.ticker}"
        assert [(p.t, p.p) for p in bundle.prices[mid]] == expected_points(m)
        resolution = next(r for r in bundle.resolutions if r.market_id == mid)
        assert resolution.status == m.raw["result"] and resolution.known_at == m.settled_at
        meta = bundle.meta[mid]
        side = "historical" if m.settled_at < fake.cutoff else "live"
        assert meta.venue == "kalshi" and meta.price_bucket_seconds == 3600
        assert (
            meta.price_route
            == {
                "live": "kalshi candlesticks (live)",
                "historical": "kalshi historical candlesticks",
            }[side]
        )
        assert meta.resolution_statuses == ("finalized",) and not meta.disputed
        assert meta.rules_updated_at == datetime.fromisoformat(
            m.raw["updated_time"].replace("Z", "+00:00")
        )
    assert sum(summary.skipped.values()) == 8 and summary.failed == []
    logged = json.loads((tmp_path / "pulls.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert (logged["version"], logged["listed"], logged["stored"]) == (summary.version, 25, 17)


def test_the_long_market_is_fetched_in_two_windows_with_every_candle(fake, tmp_path):
    pull_kalshi(tmp_path, client_of(fake), KalshiQuery(), NOW)
    long = next(m for m in fake.markets if m.ticker.startswith("KXFAKEL-LONG"))
    asked = [q for p, q in fake.requests if p.endswith(f"/{long.ticker}/candlesticks")]
    assert len(asked) == 2 and len(long.candles) > 5000
    stored = open_version(tmp_path).bundle.prices[f"kalshi:{long.ticker}"]
    assert [(p.t, p.p) for p in stored] == expected_points(long)


def test_pulling_into_a_polymarket_store_keeps_it_and_makes_a_new_version(fake, tmp_path):
    before, polymarket = polymarket_store(tmp_path)
    summary = pull_kalshi(tmp_path, client_of(fake), KalshiQuery(), NOW)
    assert summary.version != before
    after = open_version(tmp_path).bundle
    for market in polymarket.markets:
        assert market in after.markets
        assert after.prices.get(market.id) == polymarket.prices.get(market.id)
        assert (
            after.meta[market.id] == polymarket.meta[market.id]
            and after.meta[market.id].venue == "polymarket"
        )
    assert {r for r in polymarket.resolutions} <= set(after.resolutions)
    assert len(after.markets) == len(polymarket.markets) + summary.stored
    assert (
        open_version(tmp_path, before).bundle.content_hash() == polymarket.content_hash()
    )  # old version intact


def test_a_second_pull_reuses_the_stored_candles_and_changes_nothing(fake, tmp_path):
    first = pull_kalshi(tmp_path, client_of(fake), KalshiQuery(), NOW)
    fake.requests.clear()
    second = pull_kalshi(tmp_path, client_of(fake), KalshiQuery(), NOW + timedelta(days=1))
    assert second.version == first.version and second.histories_reused == first.stored
    assert not [p for p, _ in fake.requests if p.endswith("candlesticks")]


def test_a_killed_pull_resumes_from_the_candles_it_had(fake, tmp_path):
    class Killed(KeyboardInterrupt):
        pass

    def kill_after_five(step: str, done: int, total: int | None) -> None:
        if step == "candles" and done == 5:
            raise Killed

    with pytest.raises(Killed):
        pull_kalshi(tmp_path, client_of(fake), KalshiQuery(), NOW, kill_after_five)
    assert not (tmp_path / "LATEST").exists()
    summary = pull_kalshi(tmp_path, client_of(fake), KalshiQuery(), NOW)
    assert (summary.histories_cached, summary.histories_fetched) == (5, summary.stored - 5)
    assert not any((tmp_path / ".pull").iterdir())


def test_a_market_whose_candles_fail_is_named_and_left_out_the_rest_stored(fake, tmp_path):
    bad = finalized(fake)[0]
    path = (
        f"/historical/markets/{bad.ticker}/candlesticks"
        if bad.settled_at < fake.cutoff
        else f"/series/{bad.raw['event_ticker'].split('-')[0]}/markets/{bad.ticker}/candlesticks"
    )
    fake.faults[path] = [Reply(503, b"down"), Reply(503, b"down")]
    summary = pull_kalshi(tmp_path, client_of(fake), KalshiQuery(), NOW)
    assert (
        len(summary.failed) == 1
        and bad.ticker in summary.failed[0]
        and "HTTP 503 after 2 attempts" in summary.failed[0]
    )
    assert summary.stored == len(finalized(fake)) - 1 and summary.counts().short
    assert f"kalshi:{bad.ticker}" not in {m.id for m in open_version(tmp_path).bundle.markets}


def test_since_after_the_cutoff_asks_only_the_live_side_filtered_by_settlement(fake, tmp_path):
    since = fake.cutoff + timedelta(days=1)
    summary = pull_kalshi(tmp_path, client_of(fake), KalshiQuery(since=since), NOW)
    assert summary.listed_historical == 0 and not [
        p for p, _ in fake.requests if p == "/historical/markets"
    ]
    asked = dict(next(q for p, q in fake.requests if p == "/markets"))
    assert asked["min_settled_ts"] == str(int(since.timestamp())) and asked["status"] == "settled"
    resolutions = open_version(tmp_path).bundle.resolutions
    assert summary.stored > 0 and all(r.known_at >= since for r in resolutions)


def test_series_and_limit_narrow_the_listing(fake, tmp_path):
    summary = pull_kalshi(tmp_path, client_of(fake), KalshiQuery(series="KXFAKEH", limit=6), NOW)
    assert summary.listed == 6 and summary.listed_live == 0
    assert all(
        dict(q).get("series_ticker") == "KXFAKEH" for p, q in fake.requests if p.endswith("markets")
    )


@pytest.mark.parametrize("offset_hours", [0, 1, 17])
def test_candles_that_close_at_or_after_t0_change_nothing_before_t0(tmp_path, offset_hours):
    """Two Kalshi histories that differ only in candles ending at or after t0 (t0 on a candle's
    end, or between ends): the points before t0 and the price at t0 are the same."""
    from hindcast.markets.prices import history_before, price_at

    one = FakeKalshi.generate(live=3, historical=3, extras=False)
    other = FakeKalshi.generate(live=3, historical=3, extras=False)
    t0s = {}
    for a, b in zip(one.markets, other.markets):
        t0 = a.candles[len(a.candles) // 2][0] + offset_hours * 60  # on an end, or minutes after it
        t0s[a.ticker] = datetime.fromtimestamp(t0, timezone.utc)
        b.candles[:] = [
            c if c[0] < t0 else (c[0], "0.9999" if c[1] else None, "0.0001") for c in b.candles
        ]
    pull_kalshi(tmp_path / "a", client_of(one), KalshiQuery(), NOW)
    pull_kalshi(tmp_path / "b", client_of(other), KalshiQuery(), NOW)
    pa, pb = open_version(tmp_path / "a").bundle.prices, open_version(tmp_path / "b").bundle.prices
    for ticker, t0 in t0s.items():
        mid = f"kalshi:{ticker}"
        assert history_before(pa[mid], t0) == history_before(pb[mid], t0)
        assert price_at(pa[mid], t0) == price_at(pb[mid], t0) and price_at(pa[mid], t0).t < t0
        assert pa[mid] != pb[mid]  # the later candles did differ
