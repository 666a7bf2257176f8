"""Every trap of docs/polymarket-api.md (late 2026), at the HTTP transport, against the shipped
fake (`hindcast.markets.fake_polymarket`) or a transport answering one exact shape."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from hindcast.markets.fake_polymarket import FakePolymarket, Reply, SimMarket, population, transport
from hindcast.markets.polymarket import PolymarketClient, PolymarketError, RetryPolicy
from hindcast.markets.pull import PullQuery, pull
from hindcast.markets.store import open_version
from hindcast.timeutil import from_unix, to_unix

START = datetime(2025, 1, 1, tzinfo=UTC)
NOW = START + timedelta(days=500)
GAMMA, CLOB, DATA = (
    "https://gamma-api.polymarket.com",
    "https://clob.polymarket.com",
    "https://data-api.polymarket.com",
)


class Sleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def client(fake_or_transport, sleeps=None) -> PolymarketClient:
    mock = (
        transport(fake_or_transport)
        if isinstance(fake_or_transport, FakePolymarket)
        else fake_or_transport
    )
    return PolymarketClient(
        httpx.Client(transport=mock),
        GAMMA,
        CLOB,
        RetryPolicy(attempts=3, base_delay=0.5),
        sleeps if sleeps is not None else (lambda s: None),
        data_url=DATA,
    )


def get(fake: FakePolymarket, url: str, **kw) -> httpx.Response:
    return httpx.Client(transport=transport(fake)).get(url, **kw)


# -- Gamma ---------------------------------------------------------------------------------
def test_pages_hold_100_whatever_limit_asks_and_the_cursor_walks_to_the_end():
    fake = FakePolymarket(population(250, START), NOW)
    first = get(fake, f"{GAMMA}/markets/keyset", params={"closed": "true", "limit": 500}).json()
    assert len(first["markets"]) == 100 and "next_cursor" in first  # clamped silently, no error
    pages = list(client(fake).keyset_markets({"closed": "true"}, limit=100))
    assert [len(p.items) for p in pages] == [100, 100, 50] and pages[-1].next_cursor is None
    assert len({m["conditionId"] for p in pages for m in p.items}) == 250


def test_a_short_or_empty_page_with_a_cursor_is_not_the_end():
    answers = iter(
        [
            {"markets": [{"id": "1"}], "next_cursor": "a"},
            {"markets": [], "next_cursor": "b"},
            {"$schema": "x", "markets": [{"id": "2"}, {"id": "3"}], "feeSchedule": {}},
        ]
    )
    sent = []

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(dict(request.url.params))
        return httpx.Response(200, json=next(answers))

    items = [
        m["id"]
        for p in client(httpx.MockTransport(handle)).keyset_markets({"closed": "true"})
        for m in p.items
    ]
    assert items == ["1", "2", "3"] and [q.get("after_cursor") for q in sent] == [None, "a", "b"]


def test_without_closed_true_a_resolved_market_is_not_listed():
    fake = FakePolymarket(population(5, START), NOW)
    assert get(fake, f"{GAMMA}/markets/keyset").json()["markets"] == []
    assert (
        len(get(fake, f"{GAMMA}/markets/keyset", params={"closed": "true"}).json()["markets"]) == 5
    )


def test_the_wrong_cursor_name_answers_page_one_again_and_the_walk_refuses_it():
    fake = FakePolymarket(population(150, START), NOW)
    first = get(fake, f"{GAMMA}/markets/keyset", params={"closed": "true", "limit": 100}).json()
    again = get(
        fake,
        f"{GAMMA}/markets/keyset",
        params={"closed": "true", "limit": 100, "cursor": first["next_cursor"]},
    ).json()
    assert again["markets"] == first["markets"]

    def wrong_name(request: httpx.Request) -> httpx.Response:  # a server that ignores after_cursor
        params = [(k, v) for k, v in request.url.params.multi_items() if k != "after_cursor"]
        reply = fake.answer("GET", "gamma", "markets/keyset", params)
        return httpx.Response(reply.status, content=reply.body, headers=reply.headers)

    with pytest.raises(
        PolymarketError,
        match=r"^https://gamma-api\.polymarket\.com/markets/keyset: the listing does not advance: "
        r"page 2",
    ):
        list(client(httpx.MockTransport(wrong_name)).keyset_markets({"closed": "true"}))


def test_a_cursor_answered_back_unchanged_is_an_error_naming_the_url():
    fake = FakePolymarket(population(250, START), NOW)
    fake.cursor_stuck = True  # page 2 answers page 2's own cursor
    with pytest.raises(
        PolymarketError,
        match=r"^https://gamma-api\.polymarket\.com/markets/keyset: .*does not advance",
    ):
        list(client(fake).keyset_markets({"closed": "true"}))


def test_offset_on_keyset_and_deep_offsets_on_the_legacy_list_answer_422():
    fake = FakePolymarket(population(30, START), NOW, legacy_offset_ceiling=2000)
    assert (
        get(fake, f"{GAMMA}/markets/keyset", params={"closed": "true", "offset": 100}).status_code
        == 422
    )
    shallow = get(fake, f"{GAMMA}/markets", params={"closed": "true", "limit": 500, "offset": 0})
    assert (
        shallow.status_code == 200
        and isinstance(shallow.json(), list)
        and len(shallow.json()) == 30
    )
    assert shallow.headers["Deprecation"] == "true" and "keyset" in shallow.headers["Warning"]
    assert shallow.headers["Sunset"] == "Fri, 01 May 2026 00:00:00 GMT"
    deep = get(fake, f"{GAMMA}/markets", params={"closed": "true", "offset": 2001})
    assert deep.status_code == 422 and "use /markets/keyset" in deep.json()["error"]


def test_a_422_or_an_unknown_envelope_on_the_listing_is_an_error_naming_the_url():
    fake = FakePolymarket(population(5, START), NOW)
    fake.faults[("gamma", "markets/keyset")] = [Reply(422, b'{"error": "bad"}', {})]
    with pytest.raises(PolymarketError, match=r"/markets/keyset\?.*HTTP 422"):
        list(client(fake).keyset_markets({"closed": "true"}))
    fake.faults[("gamma", "markets/keyset")] = [
        Reply(200, json.dumps([{"id": "1"}]).encode(), {})
    ]  # 2025's array
    with pytest.raises(
        PolymarketError, match=r"/markets/keyset \(page 1\): unknown answer shape.*got list"
    ):
        list(client(fake).keyset_markets({"closed": "true"}))


def test_more_than_40_condition_ids_meet_cloudflare_and_the_watch_list_asks_40_at_a_time(tmp_path):
    from hindcast.markets.pull import WorkDir, list_by_id

    fake = FakePolymarket(population(90, START), NOW)
    ids = [m.condition_id for m in fake.markets]
    assert (
        get(
            fake, f"{GAMMA}/markets/keyset", params=[("condition_ids", i) for i in ids[:41]]
        ).status_code
        == 403
    )
    mark = len(fake.requests)
    found = list_by_id(client(fake), WorkDir(tmp_path / "w"), ids)
    assert sorted(m["conditionId"] for m in found) == sorted(ids)
    sizes = [
        sum(k == "condition_ids" for k, _ in q)
        for s, e, q in fake.requests[mark:]
        if e == "markets/keyset"
    ]
    assert max(sizes) == 40 and len(sizes) == 3 * 2  # 3 chunks, each closed=true and open


# -- CLOB ----------------------------------------------------------------------------------
def test_windows_over_15_days_answer_400_and_interval_max_is_only_the_last_31_days():
    market = SimMarket(1, START, START + timedelta(days=100))
    fake = FakePolymarket([market], NOW)
    too_long = get(
        fake,
        f"{CLOB}/prices-history",
        params={
            "market": market.yes_token,
            "startTs": to_unix(START),
            "endTs": to_unix(START) + 15 * 86400 + 1,
            "fidelity": 60,
        },
    )
    assert too_long.status_code == 400 and "interval is too long" in too_long.json()["error"]
    for fidelity in (60, 720, 1440):
        assert client(fake).prices_history(market.yes_token, fidelities=(fidelity,)).history == []
    week = get(
        fake,
        f"{CLOB}/prices-history",
        params={"market": market.yes_token, "interval": "1w", "fidelity": 1},
    )
    assert (
        week.status_code == 400 and "minimum 'fidelity' for '1w' range is 5" in week.json()["error"]
    )


def test_stitched_windows_of_a_market_open_over_a_year_have_no_gap_and_no_duplicate():
    market = SimMarket(2, START, START + timedelta(days=430, hours=7), data_api=False)
    fake = FakePolymarket([market], NOW)
    points = client(fake).windowed_history(
        market.yes_token, to_unix(market.opened), to_unix(market.resolves), 60
    )
    ts = [p["t"] for p in points]
    assert ts == sorted(set(ts))  # no duplicate
    assert [(p["t"], p["p"]) for p in points] == market.series(
        3600
    )  # no gap: every point the fake holds
    windows = [dict(q) for s, e, q in fake.requests if e == "prices-history"]
    assert len(windows) == 29 and all(
        int(w["endTs"]) - int(w["startTs"]) <= 15 * 86400 for w in windows
    )
    assert all(int(b["startTs"]) == int(a["endTs"]) + 1 for a, b in zip(windows, windows[1:]))


def test_the_resolved_market_fidelity_trap_is_retried_coarser(tmp_path):
    trapped = SimMarket(3, START, START + timedelta(days=40), data_api=False, fidelity_trap=True)
    fake = FakePolymarket([trapped], NOW)
    summary = pull(tmp_path, client(fake), PullQuery(), NOW)
    meta = open_version(tmp_path).bundle.meta[trapped.condition_id]
    assert summary.stored == 1 and (meta.price_route, meta.price_bucket_seconds) == (
        "clob /prices-history windows",
        43200,
    )
    assert [
        (to_unix(p.t), p.p) for p in open_version(tmp_path).bundle.prices[trapped.condition_id]
    ] == trapped.series(43200)


def test_batch_prices_history_answers_a_map_and_takes_at_most_20_tokens():
    markets = [SimMarket(n, START, START + timedelta(days=10)) for n in range(21)]
    fake = FakePolymarket(markets, NOW)
    tokens = [m.yes_token for m in markets]
    history = client(fake).batch_history(tokens[:2], to_unix(START), to_unix(START) + 86400, 60)
    assert set(history) == set(tokens[:2]) and [
        (p["t"], p["p"]) for p in history[tokens[0]]
    ] == markets[0].series(3600, to_unix(START), to_unix(START) + 86400 + 1)
    with pytest.raises(ValueError):
        client(fake).batch_history(tokens, to_unix(START), to_unix(START) + 86400, 60)
    refused = httpx.Client(transport=transport(fake)).post(
        f"{CLOB}/batch-prices-history", json={"markets": tokens, "interval": "1d", "fidelity": 60}
    )
    assert refused.status_code == 400


# -- Data API ------------------------------------------------------------------------------
def test_the_data_api_serves_the_whole_life_over_cursor_pages_with_an_off_grid_terminal_point():
    market = SimMarket(4, START, START + timedelta(days=400, hours=2, minutes=50), step=3600)
    fake = FakePolymarket([market], NOW)
    points = client(fake).data_history(market.yes_token, 10800, page_size=500)
    assert [(p["timestamp"], p["price"]) for p in points] == market.series(10800, terminal=True)
    assert points[-1]["timestamp"] % 10800 != 0 and from_unix(
        points[0]["timestamp"]
    ) - START < timedelta(hours=3)
    pages = [dict(q) for s, e, q in fake.requests if e == "v2/prices-history"]
    assert len(pages) == -(-len(points) // 500) and all("cursor" in q for q in pages[1:])


def test_a_200_answer_with_an_error_key_is_throttling_retried_then_a_clear_error():
    market = SimMarket(5, START, START + timedelta(days=30))
    fake, sleeps = FakePolymarket([market], NOW, throttle_every=2), Sleeps()
    fake._data_calls = 1  # the next call is throttled
    assert client(fake, sleeps).data_history(market.yes_token) and sleeps == [0.5]
    fake.faults[("data", "v2/prices-history")] = [
        Reply(200, b'{"error": "Too Many Requests"}', {})
    ] * 3
    with pytest.raises(
        PolymarketError, match=r"data-api\.polymarket\.com/v2/prices-history.*after 3 attempts"
    ):
        client(fake).data_history(market.yes_token)


def test_string_prices_from_the_data_api_are_read(tmp_path):
    market = SimMarket(6, START, START + timedelta(days=20))
    fake = FakePolymarket([market], NOW)
    real = fake.answer

    def as_strings(method, service, endpoint, query, body=b""):
        reply = real(method, service, endpoint, query, body)
        if endpoint == "v2/prices-history" and reply.status == 200:
            data = json.loads(reply.body)
            data["data"] = [{**p, "price": str(p["price"])} for p in data["data"]]
            reply = Reply(200, json.dumps(data).encode(), reply.headers)
        return reply

    fake.answer = as_strings
    pull(tmp_path, client(fake), PullQuery(), NOW)
    assert [
        (to_unix(p.t), p.p) for p in open_version(tmp_path).bundle.prices[market.condition_id]
    ] == market.series(10800, terminal=True)


# -- what a pull reports -------------------------------------------------------------------
def test_empty_and_shorter_than_life_histories_are_reported(tmp_path):
    empty = SimMarket(
        7, START, START + timedelta(days=20), data_api=False, first_price=START + timedelta(days=30)
    )
    late = SimMarket(8, START, START + timedelta(days=20), first_price=START + timedelta(days=9))
    whole = SimMarket(9, START, START + timedelta(days=20))
    summary = pull(tmp_path, client(FakePolymarket([empty, late, whole], NOW)), PullQuery(), NOW)
    counts = summary.counts()
    assert (counts.listed, counts.stored, dict(counts.skipped), counts.incomplete) == (
        3,
        2,
        {"no price history": 1},
        1,
    )
    assert (
        list(summary.incomplete) == [late.condition_id]
        and "history starts" in summary.incomplete[late.condition_id]
    )
    manifest = json.loads((open_version(tmp_path).path / "manifest.json").read_text())
    assert list(manifest["provenance"]["incomplete_histories"]) == [late.condition_id]
    assert manifest["provenance"]["counts"]["skipped"] == {"no price history": 1}
    assert empty.condition_id not in {m.id for m in open_version(tmp_path).bundle.markets}


def test_every_pull_keeps_its_counts_in_the_store_even_when_it_writes_no_new_version(tmp_path):
    markets = [SimMarket(n, START, START + timedelta(days=20 + n)) for n in range(3)]
    first = pull(tmp_path, client(FakePolymarket(markets, NOW)), PullQuery(), NOW)
    second = pull(
        tmp_path, client(FakePolymarket(markets, NOW)), PullQuery(), NOW + timedelta(hours=1)
    )
    assert second.version == first.version
    lines = [json.loads(line) for line in (tmp_path / "pulls.jsonl").read_text().splitlines()]
    assert [(x["pulled_at"], x["listed"], x["stored"], x["version"]) for x in lines] == [
        ("2026-05-16T00:00:00Z", 3, 3, first.version),
        ("2026-05-16T01:00:00Z", 3, 3, first.version),
    ]


def test_a_data_api_point_that_cannot_be_read_fails_its_market_by_name(tmp_path):
    market = SimMarket(10, START, START + timedelta(days=20))
    fake = FakePolymarket([market], NOW)
    fake.faults[("data", "v2/prices-history")] = [
        Reply(
            200,
            json.dumps(
                {
                    "data": [{"timestamp": "soon", "price": 0.4}],
                    "pagination": {"has_more": False, "next_cursor": None},
                }
            ).encode(),
            {},
        )
    ]
    summary = pull(tmp_path, client(fake), PullQuery(), NOW)
    assert summary.failed == [
        f"market {market.condition_id}: Data API price history: t 'soon' is not unix seconds"
    ]
    assert summary.counts().failed == 1 and summary.stored == 0


def test_a_listing_that_does_not_advance_leaves_no_cache_so_a_fixed_server_is_asked_again(tmp_path):
    fake = FakePolymarket(population(250, START), NOW)
    fake.cursor_stuck = True
    with pytest.raises(PolymarketError, match="does not advance"):
        pull(tmp_path, client(fake), PullQuery(), NOW)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".pull.lock"]
    fake.cursor_stuck = False
    assert pull(tmp_path, client(fake), PullQuery(), NOW).stored == 250
