"""`markets import forecastbench-datasets --histories venue` pulls, by id, the Polymarket and
Manifold markets the venue store lacks (against the Polymarket and Manifold fakes, under the
real ForecastBench ids of the shipped excerpts), counts them (asked = stored + skipped +
failed), and joins every question to its venue history; `--histories store` reads the store
only; an unreachable host stops the import (breaker, exit 4) and writes no store."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from hindcast.markets.fake_manifold import FakeManifold
from hindcast.markets.fake_manifold import serve as serve_manifold
from hindcast.markets.fake_polymarket import FakePolymarket
from hindcast.markets.fake_polymarket import serve as serve_polymarket
from hindcast.markets.prices import price_at
from hindcast.markets.store import open_version
from hindcast.records import PricePoint
from tests.helpers import run_cli
from tests.markets.test_forecastbench_datasets import (
    FIXTURE,
    RESOLUTIONS,
    ROUND,
    RealIdMarket,
    load,
    opened_of,
)

ROWS = {(r["source"], r["id"]): r for r in load(RESOLUTIONS)["resolutions"]}


def resolved(source: str) -> list[dict]:
    """The round's questions of `source` with a resolved row, read straight from the files."""
    return [
        q
        for q in load(ROUND)["questions"]
        if q["source"] == source and ROWS.get((source, q["id"]), {}).get("resolved")
    ]


def polymarket_fake(leave_out: int = 0) -> tuple[FakePolymarket, dict]:
    sims = {}
    for n, q in enumerate(resolved("polymarket")[leave_out:]):
        when = datetime.fromisoformat(ROWS[("polymarket", q["id"])]["resolution_date"])
        sims[q["id"]] = RealIdMarket(
            n=n,
            opened=opened_of(q),
            resolves=when.replace(tzinfo=timezone.utc) + timedelta(hours=12),
            yes=ROWS[("polymarket", q["id"])]["resolved_to"] == 1.0,
            cid=q["id"],
        )
    now = datetime(2026, 8, 1, tzinfo=timezone.utc)
    return FakePolymarket(list(sims.values()), now=now), sims


def manifold_fake() -> FakeManifold:
    """Fake markets renamed to the excerpt's resolved Manifold ids (bets follow), resolved as
    the resolution set says."""
    fake = FakeManifold.generate(binary=24, seed=7, bets=30)
    usable = [m for m in fake.binary_resolved() if m.raw["resolution"] in ("YES", "NO")]
    for market, q in zip(usable, resolved("manifold")):
        market.raw["id"] = q["id"]
        market.raw["resolution"] = "YES" if ROWS[("manifold", q["id"])]["resolved_to"] else "NO"
        for bet in market.bets:
            bet["contractId"] = q["id"]
    return fake


@pytest.fixture(scope="module")
def fakes():
    poly, sims = polymarket_fake()
    manifold = manifold_fake()
    with serve_polymarket(poly) as purl, serve_manifold(manifold) as murl:
        urls = (
            f"--gamma-url={purl}/gamma",
            f"--clob-url={purl}/clob",
            f"--data-url={purl}/data",
            f"--manifold-url={murl}",
        )
        yield poly, sims, manifold, urls


def run_import(store, venue, *extra: str):
    return run_cli(
        "markets",
        "import",
        "forecastbench-datasets",
        str(FIXTURE),
        "--store",
        str(store),
        "--venue-store",
        str(venue),
        "--attempts",
        "2",
        *extra,
    )


def test_the_import_pulls_what_the_venue_store_lacks_counts_it_and_joins_every_history(
    tmp_path, fakes
):
    poly, sims, manifold, urls = fakes
    store, venue = tmp_path / "store", tmp_path / "venue"
    proc = run_import(store, venue, "--histories", "venue", *urls, "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    for source, n in (("polymarket", 6), ("manifold", 4)):
        assert len(resolved(source)) == n
        counts = report["venue_pulls"][source]["counts"]
        assert (counts["listed"], counts["stored"], counts["failed"]) == (n, n, 0)
        assert counts["listed"] == counts["stored"] + counts["skipped_total"] + counts["failed"]
        assert report["by_source"][source]["venue_histories"] == n
    bundle = open_version(store).bundle
    for q in resolved("polymarket"):
        points = bundle.prices[f"fb:2025-10-26:polymarket:{q['id']}"]
        expected = [
            PricePoint(datetime.fromtimestamp(t, timezone.utc), p)
            for t, p in sims[q["id"]].points()
        ]
        for t0 in (points[1].t, points[len(points) // 2].t + timedelta(seconds=1), points[-1].t):
            assert price_at(points, t0) == price_at(expected, t0)
    for q in resolved("manifold"):
        points = bundle.prices[f"fb:2025-10-26:manifold:{q['id']}"]
        truth = manifold.market(q["id"])
        for point in (points[0], points[len(points) // 2], points[-1]):
            t0 = point.t + timedelta(milliseconds=1)
            ms = int(t0.timestamp() * 1000)
            assert price_at(points, t0).p == truth.price_before(ms)
    asked = len(poly.requests) + len(manifold.requests)
    again = run_import(tmp_path / "again", venue, "--histories", "venue", *urls, "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["venue_pulls"] == {}  # nothing lacked: nothing asked
    assert len(poly.requests) + len(manifold.requests) == asked


def test_a_market_the_venue_does_not_return_is_skipped_by_reason_and_keeps_its_freeze_price(
    tmp_path,
):
    poly, _ = polymarket_fake(leave_out=1)
    gone = resolved("polymarket")[0]["id"]
    with serve_polymarket(poly) as url, serve_manifold(manifold_fake()) as murl:
        proc = run_import(
            tmp_path / "store",
            tmp_path / "venue",
            "--histories",
            "venue",
            f"--gamma-url={url}/gamma",
            f"--clob-url={url}/clob",
            f"--data-url={url}/data",
            f"--manifold-url={murl}",
        )
    assert proc.returncode == 0, proc.stderr
    assert (
        "pulled polymarket markets the venue store lacked: asked 6; stored 5; skipped 1; "
        "failed 0" in proc.stdout
    )
    assert "1 × not found at the venue (asked by id)" in proc.stdout
    assert "0 ×" not in proc.stdout  # no empty reason
    for step in ("listing", "price histories", "markets and bets"):  # progress on stderr
        assert f"markets import: {step}:" in proc.stderr
    assert "pulled manifold markets the venue store lacked: asked 4; stored 4;" in proc.stdout
    assert "polymarket: 9 question(s), 6 imported (5 with the venue's history" in proc.stdout
    bundle = open_version(tmp_path / "store").bundle
    meta = bundle.meta[f"fb:2025-10-26:polymarket:{gone}"]
    assert meta.price_route == "forecastbench freeze_datetime_value"
    venue = open_version(tmp_path / "venue").bundle
    assert gone not in venue.prices and len(venue.prices) == 9


def test_an_unreachable_venue_host_stops_the_import_and_writes_no_store(tmp_path):
    """The breaker of `markets pull` (3 refused connections in a row): exit 4, one line, no
    import written, and a venue store this import would have created is not left behind."""
    dead = "http://127.0.0.1:9"
    proc = run_import(
        tmp_path / "store",
        tmp_path / "venue",
        "--histories",
        "venue",
        f"--gamma-url={dead}",
        f"--clob-url={dead}",
        f"--data-url={dead}",
        f"--manifold-url={dead}/v0",
        "--attempts",
        "5",
    )
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "cannot be reached" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "store").exists() and not (tmp_path / "venue").exists()


def test_histories_store_never_asks_a_venue_and_a_missing_store_is_one_line(tmp_path):
    proc = run_import(tmp_path / "store", tmp_path / "nowhere", "--histories", "store")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "nowhere" in proc.stderr
    assert not (tmp_path / "store").exists() and not (tmp_path / "nowhere").exists()
    proc = run_import(
        tmp_path / "store", tmp_path / "v", "--histories", "store", "--gamma-url=http://x"
    )
    assert proc.returncode == 2 and "--gamma-url" in proc.stderr


@pytest.mark.parametrize("option", ["--gamma-url", "--clob-url", "--data-url", "--manifold-url"])
def test_a_venue_url_carrying_a_credential_is_refused_without_echoing_it(tmp_path, option):
    secret = "s3cr3t-token"
    proc = run_import(
        tmp_path / "store",
        tmp_path / "venue",
        "--histories",
        "venue",
        f"{option}=https://user:{secret}@example.org/x",
    )
    assert proc.returncode == 2 and option in proc.stderr
    assert secret not in proc.stderr + proc.stdout
    assert not any(tmp_path.iterdir())


def test_an_import_stopped_by_one_dead_host_resumes_asking_only_what_the_store_lacks(tmp_path):
    """Polymarket answers, Manifold's host is down: exit 4, nothing imported, Polymarket's
    markets kept in the venue store; the re-run asks Polymarket nothing and Manifold the rest."""
    poly, _ = polymarket_fake()
    store, venue = tmp_path / "store", tmp_path / "venue"
    with serve_polymarket(poly) as url:
        urls = (f"--gamma-url={url}/gamma", f"--clob-url={url}/clob", f"--data-url={url}/data")
        dead = run_import(
            store,
            venue,
            "--histories",
            "venue",
            *urls,
            "--manifold-url=http://127.0.0.1:9/v0",
            "--attempts",
            "5",  # 3 refused connections in a row: the breaker
        )
        assert dead.returncode == 4 and "127.0.0.1:9" in dead.stderr, dead.stderr
        assert not store.exists() and len(open_version(venue).bundle.prices) == 6
        asked = len(poly.requests)
        manifold = manifold_fake()
        with serve_manifold(manifold) as murl:
            again = run_import(
                store, venue, "--histories", "venue", *urls, f"--manifold-url={murl}", "--json"
            )
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert len(poly.requests) == asked and "polymarket" not in report["venue_pulls"]
    assert report["venue_pulls"]["manifold"]["counts"]["stored"] == 4
    assert report["by_source"]["polymarket"]["venue_histories"] == 6
    assert report["by_source"]["manifold"]["venue_histories"] == 4
