"""Acceptance (issue 23): `hindcast markets pull` as a user runs it, against the shipped 2026
fake (keyset listing, 100 a page, legacy list deprecated, interval=max = last 31 days) on
127.0.0.1: every market stored, each history back to its opening, prices at t0 equal to the
fake's last point strictly before t0."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from hindcast.markets.fake_polymarket import FakePolymarket, Reply, population, serve
from hindcast.markets.prices import price_at
from hindcast.markets.store import open_version
from hindcast.timeutil import from_unix
from tests.helpers import ROOT

START = datetime(2025, 6, 1, tzinfo=UTC)
NOW = START + timedelta(days=260)
COUNT = 320


def pull(base: str, store, *extra: str) -> subprocess.CompletedProcess:
    args = [
        sys.executable,
        "-m",
        "hindcast",
        "markets",
        "pull",
        "--store",
        str(store),
        "--gamma-url",
        f"{base}/gamma",
        "--clob-url",
        f"{base}/clob",
        "--data-url",
        f"{base}/data",
        "--timeout",
        "20",
        "--attempts",
        "2",
        *extra,
    ]
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def pulled(tmp_path_factory):
    fake = FakePolymarket(population(COUNT, START), NOW)
    store = tmp_path_factory.mktemp("pull2026") / "store"
    with serve(fake) as base:
        proc = pull(base, store, "--json")
    return fake, store, proc


def test_every_market_of_a_2026_fake_is_stored_and_counted(pulled):
    fake, store, proc = pulled
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["counts"] == {
        "listed": COUNT,
        "stored": COUNT,
        "skipped": {},
        "skipped_total": 0,
        "failed": 0,
        "incomplete": 0,
    }
    assert summary["stored_fewer_than_listed"] is False and "warning" not in proc.stderr
    bundle = open_version(store).bundle
    assert {m.id for m in bundle.markets} == {m.condition_id for m in fake.markets}
    listings = [dict(q) for s, e, q in fake.requests if s == "gamma"]
    assert {e for s, e, q in fake.requests if s == "gamma"} == {
        "markets/keyset"
    }  # never the legacy list
    assert len(listings) == -(-COUNT // 100) and all(q["closed"] == "true" for q in listings)
    assert not [q for s, e, q in fake.requests if s == "clob" and ("interval", "max") in q]


def test_each_history_reaches_back_to_the_opening_and_prices_at_t0_are_the_fakes(pulled):
    fake, store, _ = pulled
    bundle = open_version(store).bundle
    routes = set()
    for market in fake.markets:
        meta, history = bundle.meta[market.condition_id], bundle.prices[market.condition_id]
        routes.add(meta.price_route)
        served = market.series(
            meta.price_bucket_seconds, terminal=meta.price_route.startswith("data-api")
        )
        assert history[0].t - market.opened <= timedelta(
            seconds=max(meta.price_bucket_seconds, 3 * 3600)
        )
        life = market.resolves - market.opened
        for fraction in (0.05, 0.5, 0.95):
            t0 = market.opened + life * fraction
            expected = [(t, p) for t, p in served if from_unix(t) < t0][-1]
            point = price_at(history, t0)
            assert (point.t, point.p) == (from_unix(expected[0]), expected[1])
    assert routes == {"data-api /v2/prices-history", "clob /prices-history windows"}


def test_show_prints_provenance_and_resolution_metadata(pulled):
    fake, store, _ = pulled
    disputed = next(m for m in fake.markets if m.disputed and m.rules_updated_at and m.data_api)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "hindcast",
            "markets",
            "show",
            disputed.condition_id,
            "--store",
            str(store),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        "route data-api /v2/prices-history; bucket 10800 s; definition midpoint (unconfirmed)"
        in proc.stdout
    )
    assert (
        "disputed yes; rules updated at "
        f"{disputed.rules_updated_at.isoformat().replace('+00:00', 'Z')}" in proc.stdout
    )
    assert "status chain proposed → disputed → proposed → resolved" in proc.stdout
    manifest = json.loads((open_version(store).path / "manifest.json").read_text())
    assert manifest["provenance"]["counts"]["stored"] == COUNT
    assert set(manifest["provenance"]["price_routes"]) == {
        "data-api /v2/prices-history",
        "clob /prices-history windows",
    }


# -- a listing that cannot be trusted: one line naming the URL, exit non-zero, store unchanged --
def tree(store) -> dict:
    """Every file and folder of the store, its lock file included (emptied when a pull ends)."""
    return {
        str(p.relative_to(store)): p.read_bytes() if p.is_file() else None
        for p in sorted(store.rglob("*"))
    }


@pytest.mark.parametrize(
    "break_it, said",
    [
        (
            lambda fake: setattr(fake, "cursor_stuck", True),
            "the listing does not advance: page 2 answers the cursor it was sent",
        ),
        (
            lambda fake: fake.faults.update(
                {("gamma", "markets/keyset"): [Reply(422, b'{"error": "invalid"}', {})]}
            ),
            "HTTP 422",
        ),
        (
            lambda fake: fake.faults.update(
                {("gamma", "markets/keyset"): [Reply(200, b'{"data": []}', {})]}
            ),
            "unknown answer shape",
        ),
    ],
    ids=["cursor-not-advancing", "422", "unknown-envelope"],
)
def test_a_listing_that_cannot_be_trusted_stops_the_pull_and_changes_no_store(
    tmp_path, break_it, said
):
    markets = population(150, START)
    store = tmp_path / "store"
    with serve(FakePolymarket(markets[:120], NOW)) as base:
        assert pull(base, store).returncode == 0
    before = tree(store)
    assert before[".pull.lock"] == b""
    broken = FakePolymarket(markets, NOW)
    break_it(broken)
    with serve(broken) as base:
        proc = pull(base, store)
    assert proc.returncode == 1 and proc.stdout == ""
    assert (
        proc.stderr.startswith(f"hindcast: error: {base}/gamma/markets/keyset")
        and said in proc.stderr
    )
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr
    assert tree(store) == before


def test_a_later_pull_that_changes_a_stored_point_makes_a_new_version_and_keeps_the_old(tmp_path):
    """A store holding a history from before routes were recorded (2025's interval=max: the
    last 31 days) is fetched again; the changed points go into a new version, never over the old."""
    from dataclasses import replace

    from hindcast.markets.store import write_version

    market = population(1, START)[0]
    store = tmp_path / "store"
    with serve(FakePolymarket([market], NOW)) as base:
        assert pull(base, store).returncode == 0
    full = open_version(store)
    old_meta = replace(
        full.bundle.meta[market.condition_id],
        price_route="",
        price_bucket_seconds=None,
        price_definition="",
        history_fidelity=60,
    )
    last = full.bundle.prices[market.condition_id][
        -5:
    ]  # 2025: only the end, and one point disagreeing
    truncated = (replace(last[0], p=round(last[0].p + 0.01, 4)), *last[1:])
    old = replace(
        full.bundle, prices={market.condition_id: truncated}, meta={market.condition_id: old_meta}
    )
    old_id = write_version(store, old)
    with serve(FakePolymarket([market], NOW)) as base:
        proc = pull(base, store, "--json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["histories"]["changed"] == [market.condition_id] and summary["version"] not in (
        old_id,
        None,
    )
    assert (
        open_version(store, old_id).bundle.prices[market.condition_id] == truncated
    )  # kept, byte for byte
    assert (
        open_version(store).bundle.prices[market.condition_id]
        == full.bundle.prices[market.condition_id]
    )
