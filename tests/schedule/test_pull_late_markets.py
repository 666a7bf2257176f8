"""Issue 12 item 7: the service's incremental pull misses no resolved market — neither one
without an `endDate` (an `end_date_min` window excludes it) nor one closing long after its
`endDate` (a lookback window alone cannot reach it). Both are stored by the next pull and
swept; the newest-closed-first listing stops paging once it is older than the window."""

from __future__ import annotations

from datetime import timedelta

import pytest

from hindcast.markets.store import open_version
from tests.schedule.conftest import T0, query, sim_markets, tick, write_config
from tests.schedule.fake_polymarket import (
    NO_END_DATE,
    FakePolymarket,
    LocalServer,
    SimClock,
    SimMarket,
)

NO_END = SimMarket(20, T0 - timedelta(days=20), T0 + timedelta(days=1, hours=2), end=NO_END_DATE)
LATE = SimMarket(
    21,
    T0 - timedelta(days=40),
    T0 + timedelta(days=1, hours=5),
    yes=False,
    end=T0 - timedelta(days=10),
)  # closes 11 days after its endDate; the lookback is 2 days
SECOND = T0 + timedelta(days=2)


@pytest.fixture
def world(tmp_path):
    clock = SimClock(T0)
    with LocalServer(FakePolymarket([*sim_markets(), NO_END, LATE], clock)) as server:
        yield tmp_path, server, clock


def swept(folder) -> set[str]:
    return {
        row[0]
        for row in query(folder, "SELECT DISTINCT market_id FROM forecasts WHERE error IS NULL")
    }


def test_markets_without_end_date_or_closing_long_after_it_are_stored_and_swept(world, service_db):
    folder, server, clock = world
    config = write_config(folder, server.url)
    for now in (T0, SECOND):
        clock.now = now
        statuses, _ = tick(config, now)
        assert set(statuses.values()) == {"ok"}, statuses
    stored = {m.id for m in open_version(folder / "markets" / "store").bundle.markets}
    assert {NO_END.condition_id, LATE.condition_id} <= stored
    assert {NO_END.condition_id, LATE.condition_id} <= swept(folder)
    resolutions = {
        r.market_id: r.status for r in open_version(folder / "markets" / "store").bundle.resolutions
    }
    assert (resolutions[NO_END.condition_id], resolutions[LATE.condition_id]) == ("yes", "no")


def test_the_closed_listing_pages_only_down_to_the_window(world, service_db):
    folder, server, clock = world
    config = write_config(folder, server.url)
    config.write_text(config.read_text().replace("timeout = 10", "timeout = 10\npage_size = 2"))
    clock.now = T0
    tick(config, T0)
    already = len(server.fake.listings())
    clock.now = SECOND
    statuses, _ = tick(config, SECOND)
    assert set(statuses.values()) == {"ok"}, statuses
    closed = [p for p in server.fake.listings()[already:] if p.get("order") == "closedTime"]
    # since = T0 - 2d: 7 markets closed since (5 of sim_markets + the 2 late ones), then one older: stop there
    assert (
        len(closed) == 4
        and "after_cursor" not in closed[0]
        and all("offset" not in p for p in closed)
    )
    assert (
        len({p.get("after_cursor") for p in closed}) == 4
    )  # each page asked with the previous answer's cursor
    assert all(p["ascending"] == "false" and "end_date_min" not in p for p in closed)


def test_markets_pull_closed_since_finds_them_too(world):
    from tests.helpers import run_cli

    folder, server, clock = world
    clock.now = SECOND
    args = (
        "markets",
        "pull",
        "--store",
        str(folder / "s"),
        "--gamma-url",
        f"{server.url}/gamma",
        "--clob-url",
        f"{server.url}/clob",
        "--data-url",
        f"{server.url}/data",
        "--attempts",
        "1",
        "--since",
        "2026-02-27",
    )
    run_cli(*args, check=True)
    stored = {m.id for m in open_version(folder / "s").bundle.markets}
    assert (
        not {NO_END.condition_id, LATE.condition_id} & stored
    )  # an end-date window cannot see them
    run_cli(*args, "--closed-since", "2026-02-27", check=True)
    stored = {m.id for m in open_version(folder / "s").bundle.markets}
    assert {NO_END.condition_id, LATE.condition_id} <= stored
