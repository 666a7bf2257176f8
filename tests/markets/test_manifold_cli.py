"""`hindcast markets pull --venue manifold` as a user runs it (a subprocess) against the shipped
fake over 127.0.0.1: 300+ resolved binary markets over several pages, bets over several pages
with boundary-millisecond ties, MKT and CANCEL, edited and moved markets, multiple-choice and
numeric ones; killed with SIGKILL and re-run; swept in a mixed store and sliced by venue."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from hindcast.markets.fake_manifold import FakeManifold, serve
from hindcast.markets.prices import price_at
from hindcast.markets.store import open_version
from tests.helpers import ROOT, run_cli
from tests.markets.kalshi_support import polymarket_store, tree
from tests.markets.sweep_support import sweep_and_export

PAGE = "40"
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def served():
    """One fake for the module, served once: (fake, base URL)."""
    fake = FakeManifold.generate(binary=345, seed=41, bets=70)
    with serve(fake) as url:
        yield fake, url


@dataclass(frozen=True)
class Pulled:
    """The module's one complete pull (its store is only read by the tests that share it)."""

    proc: subprocess.CompletedProcess
    store: Path
    listing_pages: int  # /search-markets requests the pull made


@pytest.fixture(scope="module")
def clean(served, tmp_path_factory) -> Pulled:
    fake, url = served
    store = tmp_path_factory.mktemp("clean") / "store"
    mark = len(fake.requests)
    proc = run_cli(*args(url, store, "--json"))
    assert proc.returncode == 0, proc.stderr
    pages = sum(p == "/search-markets" for p, _ in fake.requests[mark:])
    return Pulled(proc, store, pages)


def args(url: str, store, *extra: str) -> list[str]:
    return [
        "markets",
        "pull",
        "--venue",
        "manifold",
        "--manifold-url",
        url,
        "--store",
        str(store),
        "--manifold-page-size",
        PAGE,
        "--requests-per-minute",
        "100000",
        "--attempts",
        "2",
        *extra,
    ]


def ms_time(ms: int) -> datetime:
    return EPOCH + timedelta(milliseconds=ms)


def test_every_resolved_binary_market_is_stored_priced_and_counted(served, clean):
    fake, _ = served
    binary = fake.binary_resolved()
    assert len(binary) >= 300
    proc = clean.proc
    summary = json.loads(proc.stdout)
    counts = summary["counts"]
    listed = [m for m in fake.markets if m.raw.get("resolutionTime") is not None]
    assert counts["listed"] == len(listed) == counts["stored"] + counts["skipped_total"]
    assert counts["stored"] == len(binary) and counts["failed"] == 0
    assert counts["skipped"]["resolved CANCEL (N/A): no outcome"] == sum(
        m.raw.get("resolution") == "CANCEL" for m in listed
    )
    assert summary["fractional_outcomes"] == sum(m.raw["resolution"] == "MKT" for m in binary)
    assert clean.listing_pages >= len(listed) // int(PAGE)  # several pages
    assert "warning: stored" in proc.stderr  # fewer stored than listed is said on stderr

    bundle = open_version(clean.store).bundle
    assert {m.id for m in bundle.markets} == {f"manifold:{m.id}" for m in binary}
    multi_page = 0
    for market in binary:
        multi_page += len(market.bets) > int(PAGE)
        history = bundle.prices.get(f"manifold:{market.id}", ())
        raw = market.raw
        life = raw["resolutionTime"] - raw["createdTime"]
        for t0 in (
            raw["createdTime"] + life // 5,
            raw["createdTime"] + life // 2,
            raw["resolutionTime"] - 1,
        ):
            point = price_at(history, ms_time(t0))
            assert (point.p if point else None) == market.price_before(t0), (market.id, t0)
    assert multi_page >= 10


def test_a_pull_killed_with_sigkill_resumes_and_stores_the_same_version(served, clean, tmp_path):
    fake, url = served
    mark = len(fake.requests)
    proc = subprocess.Popen(
        [sys.executable, "-m", "hindcast", *args(url, tmp_path / "store")],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while sum(p.startswith("/market/") for p, _ in fake.requests[mark:]) < 60:
        assert proc.poll() is None and time.monotonic() < deadline, "the pull ended first"
        time.sleep(0.005)
    proc.kill()
    proc.communicate(timeout=30)
    started = sum(p.startswith("/market/") for p, _ in fake.requests[mark:])
    assert proc.returncode == -9 and not (tmp_path / "store" / "LATEST").exists()
    before_rerun = len(fake.requests)
    again = run_cli(*args(url, tmp_path / "store", "--json"))
    assert again.returncode == 0, again.stderr
    resumed = json.loads(again.stdout)
    # every market finished before the kill is read from the cache (the one in flight is not)
    assert started - 1 <= resumed["histories"]["cached"] <= started
    asked = sum(p.startswith("/market/") for p, _ in fake.requests[before_rerun:])
    assert asked == resumed["counts"]["stored"] - resumed["histories"]["cached"]
    assert resumed["version"] == json.loads(clean.proc.stdout)["version"]
    assert open_version(tmp_path / "store").id == open_version(clean.store).id


def test_an_unreachable_host_is_one_error_line_and_the_store_is_unchanged(tmp_path):
    store = tmp_path / "store"
    polymarket_store(store)
    before = tree(store)
    proc = run_cli(*args("http://127.0.0.1:9/v0", store, "--timeout", "2"))
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith("hindcast: error: ") and "127.0.0.1:9/v0/search-markets" in lines[0]
    assert tree(store) == before


def test_options_of_another_venue_are_refused(tmp_path):
    proc = run_cli(
        "markets", "pull", "--venue", "manifold", "--series", "X", "--store", str(tmp_path)
    )
    assert proc.returncode == 2 and "--series" in proc.stderr
    proc = run_cli("markets", "pull", "--manifold-url", "http://x", "--store", str(tmp_path))
    assert proc.returncode == 2 and "--manifold-url" in proc.stderr
    assert not tmp_path.joinpath("LATEST").exists()


def test_a_mixed_store_sweeps_and_exports_by_venue_with_mkt_scored_as_its_fraction(tmp_path):
    fake = FakeManifold.generate(binary=24, seed=5, bets=30)
    store = tmp_path / "store"
    polymarket_store(store)
    with serve(fake) as url:
        assert run_cli(*args(url, store)).returncode == 0
    sweep_and_export(store, tmp_path, ("market", "constant"), "--by", "venue", "--format", "csv")
    rows = list(csv.DictReader(open(tmp_path / "lb" / "leaderboard.csv", encoding="utf-8")))
    assert {r["slice"] for r in rows} == {"venue=polymarket", "venue=manifold"}
    stored = len(fake.binary_resolved())
    manifold = [r for r in rows if r["slice"] == "venue=manifold" and r["forecaster"] == "market"]
    assert manifold[0]["n_markets"] == str(stored)
    fractions = {
        f"manifold:{m.id}": m.raw["resolutionProbability"]
        for m in fake.binary_resolved()
        if m.raw["resolution"] == "MKT"
    }
    seen = 0
    for row in csv.DictReader(open(tmp_path / "lb" / "forecasts.csv", encoding="utf-8")):
        if row["market_id"] in fractions and row["forecaster"] == "constant":
            outcome = fractions[row["market_id"]]
            assert float(row["outcome"]) == outcome
            assert float(row["brier"]) == pytest.approx((float(row["probability"]) - outcome) ** 2)
            seen += 1
    assert seen >= 4
