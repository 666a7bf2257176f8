"""Issue 23: a watched market that resolves is stored by the next incremental pull (2026 fake).

The market is closed but only proposed at the first tick (listed, not resolved: watched);
by the second tick it has resolved, but its end date and close are older than every window,
so only the watch list can find it — and Gamma lists a closed market only with closed=true."""

from __future__ import annotations

from datetime import timedelta

from hindcast.markets.pull import read_watch
from hindcast.markets.store import open_version
from tests.schedule.conftest import T0, sim_markets, tick, write_config
from tests.schedule.fake_polymarket import FakePolymarket, LocalServer, SimClock, SimMarket

WATCHED = SimMarket(
    30,
    T0 - timedelta(days=40),
    T0 - timedelta(days=3),
    end=T0 - timedelta(days=5),
    settles=T0 + timedelta(days=1),
)
SECOND = T0 + timedelta(days=2)


def test_a_watched_market_that_resolves_is_stored_by_the_next_pull(tmp_path, service_db):
    clock = SimClock(T0)
    with LocalServer(FakePolymarket([*sim_markets(), WATCHED], clock)) as server:
        config = write_config(tmp_path, server.url)
        statuses, _ = tick(config, T0)
        assert set(statuses.values()) == {"ok"}, statuses
        store = tmp_path / "markets" / "store"
        assert WATCHED.condition_id in read_watch(store)
        assert WATCHED.condition_id not in {m.id for m in open_version(store).bundle.markets}

        clock.now = SECOND
        mark = len(server.fake.requests)
        statuses, _ = tick(config, SECOND)
        assert set(statuses.values()) == {"ok"}, statuses
        asked = [
            dict(q) | {"ids": [v for k, v in q if k == "condition_ids"]}
            for s, e, q in server.fake.requests[mark:]
            if e == "markets/keyset" and any(k == "condition_ids" for k, _ in q)
        ]
        assert {a.get("closed") for a in asked} == {"true", None} and all(
            len(a["ids"]) <= 40 for a in asked
        )
        bundle = open_version(store).bundle
        assert WATCHED.condition_id in {m.id for m in bundle.markets}
        assert {r.market_id: r.status for r in bundle.resolutions}[WATCHED.condition_id] == "yes"
        assert bundle.meta[WATCHED.condition_id].price_route == "data-api /v2/prices-history"
        assert WATCHED.condition_id not in read_watch(store)
