"""The Manifold pull into the market store, against the shipped fake at the HTTP transport
(manifold-api.md): each trap of the API, the counts, the breaker, the pacing, re-pulls."""

from __future__ import annotations

import json
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hindcast.errors import MalformedMarket, ManifoldError
from hindcast.http import RetryPolicy
from hindcast.markets.bundle import market_at
from hindcast.markets.fake_manifold import FakeManifold, Reply, json_reply, mock_transport
from hindcast.markets.manifold import ManifoldClient, Pacer
from hindcast.markets.manifold_parse import parse_bets
from hindcast.markets.manifold_pull import ManifoldQuery, pull_manifold
from hindcast.markets.prices import history_before, price_at
from hindcast.markets.store import open_version
from tests.markets.kalshi_support import polymarket_store, tree

BASE = "https://api.manifold.markets/v0"
NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def ms_time(ms: int) -> datetime:
    return EPOCH + timedelta(milliseconds=ms)


@pytest.fixture
def fake() -> FakeManifold:
    return FakeManifold.generate(binary=60, seed=7, bets=40)


def client_of(fake: FakeManifold, page_limit: int = 7, transport=None) -> ManifoldClient:
    http = httpx.Client(transport=transport or mock_transport(fake))
    retry = RetryPolicy(attempts=2, base_delay=0.0)
    return ManifoldClient(http, BASE, retry, lambda s: None, page_limit, Pacer(10**6))


def cutoffs(market) -> list[int]:
    """Three t0 (ms) inside the market's life, one of them exactly on a bet's millisecond."""
    raw = market.raw
    start, end = raw["createdTime"], raw["resolutionTime"]
    on_bet = [market.bets[len(market.bets) // 2]["createdTime"]] if market.bets else []
    return [start + (end - start) // 4, *on_bet, end - 1, start + (end - start) // 2][:3]


def test_every_resolved_binary_market_is_stored_and_priced_as_its_last_bet_before_t0(
    fake, tmp_path
):
    summary = pull_manifold(tmp_path, client_of(fake), ManifoldQuery(), NOW)
    bundle = open_version(tmp_path).bundle
    expected = {f"manifold:{m.id}" for m in fake.binary_resolved()}
    assert {m.id for m in bundle.markets} == expected and summary.stored == len(expected)
    checked = 0
    for market in fake.binary_resolved():
        history = bundle.prices.get(f"manifold:{market.id}", ())
        for t0 in cutoffs(market):
            point = price_at(history, ms_time(t0))
            want = market.price_before(t0)
            assert (point and point.p) == want, (market.id, t0)
            checked += 1
    assert checked >= 3 * len(expected) - 10  # markets without bets have fewer distinct cutoffs


def test_the_counts_add_up_and_name_every_skip(fake, tmp_path):
    summary = pull_manifold(tmp_path, client_of(fake), ManifoldQuery(), NOW)
    c = summary.counts()
    listed = [m for m in fake.markets if m.raw.get("resolutionTime") is not None]
    assert c.listed == len(listed) == c.stored + c.skipped_total + c.failed and c.failed == 0
    skipped = dict(c.skipped)
    cancels = sum(m.raw.get("resolution") == "CANCEL" for m in listed)
    assert skipped["resolved CANCEL (N/A): no outcome"] == cancels > 0
    assert skipped["multiple choice (outcomeType 'MULTIPLE_CHOICE'): not a binary market"] == 3
    assert skipped["numeric (outcomeType 'PSEUDO_NUMERIC'): not a binary market"] == 3
    assert skipped["numeric (outcomeType 'NUMBER'): not a binary market"] == 3
    assert skipped["not binary (outcomeType 'POLL'): not a binary market"] == 3


def test_outcomes_read_resolution_and_mkt_is_its_fraction_never_the_amm_probability(fake, tmp_path):
    pull_manifold(tmp_path, client_of(fake), ManifoldQuery(), NOW)
    resolutions = {r.market_id: r for r in open_version(tmp_path).bundle.resolutions}
    seen = set()
    for market in fake.binary_resolved():
        raw, r = market.raw, resolutions[f"manifold:{market.id}"]
        seen.add(raw["resolution"])
        if raw["resolution"] == "MKT":
            assert r.status == "fractional" and r.outcome == raw["resolutionProbability"]
        else:  # resolutionProbability is set here too (the price before resolving): not read
            assert r.outcome == {"YES": 1.0, "NO": 0.0}[raw["resolution"]]
            assert "resolutionProbability" in raw
        assert r.resolved_at == r.known_at == ms_time(raw["resolutionTime"])
    assert seen == {"YES", "NO", "MKT"}


def test_a_close_time_read_after_resolution_is_never_shown_and_is_recorded_as_read(fake, tmp_path):
    pull_manifold(tmp_path, client_of(fake), ManifoldQuery(), NOW)
    version = open_version(tmp_path)
    assert all(m.scheduled_close is None for m in version.bundle.markets)
    read = json.loads((version.path / "manifest.json").read_text())["provenance"]
    close = read["close_times_as_read"]
    moved = [m for m in fake.binary_resolved() if m.raw["closeTime"] == m.raw["resolutionTime"]]
    assert close["read_at"] == "2026-12-01T00:00:00Z" and moved
    for m in fake.binary_resolved():
        assert close["close_time"][f"manifold:{m.id}"] == _iso(ms_time(m.raw["closeTime"]))


def _iso(t: datetime) -> str:
    from hindcast.timeutil import iso

    return iso(t)


def test_text_is_uncertain_up_to_the_last_update_of_the_market(fake, tmp_path):
    pull_manifold(tmp_path, client_of(fake), ManifoldQuery(), NOW)
    meta = open_version(tmp_path).bundle.meta
    for m in fake.binary_resolved():
        assert meta[f"manifold:{m.id}"].rules_updated_at == ms_time(m.raw["lastUpdatedTime"])
        assert meta[f"manifold:{m.id}"].venue == "manifold"


def test_listing_ties_on_a_page_boundary_are_all_listed(tmp_path):
    """Markets sharing createdTime across a page edge: a walk with `beforeTime` = the oldest
    time itself (strict <) would lose them; every one is stored."""
    fake = FakeManifold.generate(binary=40, seed=3, bets=3)
    listed = sorted(
        (m.raw for m in fake.markets if m.raw.get("resolutionTime")),
        key=lambda r: -r["createdTime"],
    )
    page = 5
    edges = [i for i in range(page, len(listed), page)]
    assert any(listed[i]["createdTime"] == listed[i - 1]["createdTime"] for i in edges)
    pull_manifold(tmp_path, client_of(fake, page), ManifoldQuery(), NOW)
    stored = {m.id for m in open_version(tmp_path).bundle.markets}
    assert stored == {f"manifold:{m.id}" for m in fake.binary_resolved()}


def test_bets_sharing_the_boundary_millisecond_of_a_page_are_all_read(fake, tmp_path):
    page = 7
    straddling = [
        m
        for m in fake.binary_resolved()
        for newest in [sorted(m.bets, key=lambda b: -b["createdTime"])]
        if any(
            newest[i]["createdTime"] == newest[i - 1]["createdTime"]
            for i in range(page, len(newest), page)
        )
    ]
    assert straddling, "the fake has no bet tie across a page edge"
    client = client_of(fake, page)
    for m in straddling:
        assert {b["id"] for b in client.bets(m.id)} == {b["id"] for b in m.bets}


def test_a_full_page_that_adds_nothing_is_asked_larger_then_is_an_error_not_an_end(fake, tmp_path):
    """A server that ignores `beforeTime` (or ties filling pages): the same full page comes
    back; asked again with a larger limit up to the most, then refused — never an end."""
    page = [m.raw for m in fake.markets[:14]]
    fake.faults["/search-markets"] = [json_reply(page)] * 3
    client = client_of(fake)
    client.max_page = 14
    with pytest.raises(ManifoldError, match="a full page of 14 before .* cannot advance"):
        pull_manifold(tmp_path, client, ManifoldQuery(), NOW)
    assert not tmp_path.joinpath("LATEST").exists()
    limits = [dict(q)["limit"] for p, q in fake.requests if p == "/search-markets"]
    assert limits == ["7", "7", "14"]


def test_a_short_page_does_not_end_the_walk(fake, tmp_path):
    """A page shorter than the limit is not the end: only a page that adds no new id is."""
    newest = sorted(fake.markets, key=lambda m: -m.raw["createdTime"])
    short = [m.raw for m in newest if m.raw.get("resolutionTime")][:3]
    fake.faults["/search-markets"] = [json_reply(short)]
    pull_manifold(tmp_path, client_of(fake), ManifoldQuery(), NOW)
    stored = {m.id for m in open_version(tmp_path).bundle.markets}
    assert stored == {f"manifold:{m.id}" for m in fake.binary_resolved()}


def test_an_unknown_parameter_is_a_400_naming_it(fake):
    reply = fake.answer("/bets", [("contractId", "x"), ("cursor", "1")])
    assert reply.status == 400 and b"Unrecognized key(s) in object: 'cursor'" in reply.body
    client = client_of(fake)
    with pytest.raises(ManifoldError, match="HTTP 400: Error validating request"):
        client.get_json("/bets", {"contractId": "x", "cursor": "1"})


def test_a_non_json_answer_from_a_proxy_is_an_error_naming_the_url(fake):
    fake.faults["/search-markets"] = [Reply(200, b"<html>bad gateway</html>")]
    with pytest.raises(ManifoldError, match="search-markets.*: response is not JSON"):
        next(client_of(fake).resolved_markets())


def test_an_unreachable_host_trips_the_breaker_and_a_rerun_resumes(fake, tmp_path):
    store = tmp_path / "store"
    polymarket_store(store)
    before = tree(store)
    inner = mock_transport(fake)

    def handle(request: httpx.Request) -> httpx.Response:
        """The host goes down once ten markets have been fetched."""
        served = {p for p, _ in fake.requests if p.startswith("/market/")}
        if request.url.path.startswith("/v0/market/") and len(served) >= 10:
            raise httpx.ConnectError("connection refused")
        return inner.handle_request(request)

    with pytest.raises(ManifoldError) as caught:
        down = client_of(fake, transport=httpx.MockTransport(handle))
        pull_manifold(store, down, ManifoldQuery(), NOW)
    assert caught.value.unreachable and "connection failed" in str(caught.value)
    kept = {k: v for k, v in tree(store).items() if not k.startswith(".pull")}
    assert kept == {k: v for k, v in before.items() if not k.startswith(".pull")}
    mark = len(fake.requests)
    summary = pull_manifold(store, client_of(fake), ManifoldQuery(), NOW)
    assert summary.histories_cached == 10 and summary.stored == len(fake.binary_resolved())
    again = {p for p, _ in fake.requests[mark:] if p.startswith("/market/")}
    assert len(again) == summary.stored - 10
    assert not (store / ".pull").joinpath(ManifoldQuery().key(BASE)).exists()


def test_a_market_that_fails_for_good_is_named_and_the_rest_stored(fake, tmp_path):
    victim = fake.binary_resolved()[4]
    fake.faults[f"/market/{victim.id}"] = [json_reply({"message": "An unexpected error"}, 500)] * 2
    summary = pull_manifold(tmp_path, client_of(fake), ManifoldQuery(), NOW)
    assert len(summary.failed) == 1 and victim.id in summary.failed[0]
    assert "HTTP 500 after 2 attempts" in summary.failed[0]
    assert summary.stored == len(fake.binary_resolved()) - 1


def test_a_429_waits_what_retry_after_says(fake):
    waits = []
    fake.faults["/market/x"] = [json_reply({"message": "slow down"}, 429, {"Retry-After": "3"})]
    client = ManifoldClient(
        httpx.Client(transport=mock_transport(fake)),
        BASE,
        RetryPolicy(attempts=2, base_delay=0.0),
        waits.append,
        pacer=Pacer(10**6),
    )
    with pytest.raises(ManifoldError, match="404"):
        client.market("x")
    assert waits == [3.0]


def test_the_pacer_lets_at_most_500_requests_through_any_minute():
    clock = {"t": 0.0}
    sent = []

    def sleep(seconds: float) -> None:
        clock["t"] += seconds

    pacer = Pacer(500, lambda: clock["t"], sleep)
    for n in range(1600):
        pacer.wait()
        sent.append(clock["t"])
        clock["t"] += 0.01 if n % 3 else 0.0
    for i in range(len(sent) - 500):
        assert sent[i + 500] - sent[i] >= 60.0 - 1e-9
    assert sent[-1] < 4 * 60  # and it does not wait longer than it must


def test_bets_of_one_millisecond_are_one_point_at_the_end_of_their_chain():
    opened = ms_time(1000)
    bets = [  # served newest first, ties in no useful order
        {"id": "c", "createdTime": 5000, "probBefore": 0.6, "probAfter": 0.5},
        {"id": "r", "createdTime": 5000, "probBefore": 0.5, "probAfter": 0.5, "isRedemption": True},
        {"id": "b", "createdTime": 5000, "probBefore": 0.5, "probAfter": 0.6},
        {"id": "a", "createdTime": 2000, "probBefore": 0.3, "probAfter": 0.5},
        {"id": "m", "createdTime": 3000, "probBefore": 0.2, "probAfter": 0.9, "answerId": "x"},
    ]
    points = parse_bets("manifold:x", opened, bets)
    assert [(p.t, p.p) for p in points] == [
        (ms_time(1000), 0.3),
        (ms_time(2000), 0.5),
        (ms_time(5000), 0.5),
    ]
    with pytest.raises(MalformedMarket, match="createdTime 5.0 is not integer ms"):
        parse_bets("manifold:x", opened, [{**bets[0], "createdTime": 5.0}])


def test_pulling_into_a_polymarket_store_keeps_its_markets(fake, tmp_path):
    _, poly = polymarket_store(tmp_path)
    pull_manifold(tmp_path, client_of(fake), ManifoldQuery(), NOW)
    bundle = open_version(tmp_path).bundle
    assert {m.id for m in poly.markets} <= {m.id for m in bundle.markets}
    from hindcast.markets.venues import venues

    assert set(venues(bundle).values()) == {"polymarket", "manifold"}


def test_since_until_and_limit_narrow_what_is_stored(fake, tmp_path):
    times = sorted(m.raw["resolutionTime"] for m in fake.binary_resolved())
    since, until = ms_time(times[10]), ms_time(times[30])
    summary = pull_manifold(tmp_path / "a", client_of(fake), ManifoldQuery(since, until), NOW)
    assert summary.stored == 21 and summary.skipped["resolved outside --since/--until"] > 0
    limited = pull_manifold(tmp_path / "b", client_of(fake), ManifoldQuery(limit=9), NOW)
    assert limited.listed == 9 == limited.counts().stored + limited.counts().skipped_total


def test_a_repull_after_edits_keeps_what_stood_before(fake, tmp_path):
    """Text edited, bets added and a resolution changed after the first pull: every cutoff
    before that pull sees the same question, description and prices as before."""
    pull_manifold(tmp_path, client_of(fake), ManifoldQuery(), NOW)
    first = open_version(tmp_path).bundle
    for m in fake.binary_resolved()[:10]:
        m.raw.update(question="EDITED " + m.raw["question"], textDescription="EDITED text")
        m.raw["resolution"] = "NO" if m.raw["resolution"] == "YES" else "YES"
        late = m.raw["resolutionTime"] + 1
        m.bets.append(
            {
                **(m.bets or [{}])[-1],
                "id": "late" + m.id,
                "createdTime": late,
                "probBefore": 0.5,
                "probAfter": 0.99,
            }
        )
    pull_manifold(tmp_path, client_of(fake), ManifoldQuery(), NOW + timedelta(days=1))
    second = open_version(tmp_path).bundle
    for m in fake.binary_resolved()[:10]:
        mid = f"manifold:{m.id}"
        for t0 in cutoffs(m):
            at = ms_time(t0)
            assert market_at(second, mid, at) == market_at(first, mid, at)
            assert history_before(second.prices.get(mid, ()), at) == history_before(
                first.prices.get(mid, ()), at
            )
        later = market_at(second, mid, NOW + timedelta(days=2))
        assert later.description == "EDITED text" and not later.question.startswith("EDITED")


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10**6),
    fraction=st.floats(0.05, 0.95),
    late_ms=st.integers(0, 5000),
    edit=st.booleans(),
    flip=st.booleans(),
)
def test_no_look_ahead_nothing_after_t0_changes_what_a_forecaster_sees(
    tmp_path, seed, fraction, late_ms, edit, flip
):
    """Bets at or after t0 (from exactly t0 on), text edits and resolution changes made after
    a pull: the question, description, history before t0 and price at t0 are unchanged."""
    from hindcast.markets.prices import history_before

    one, other = (FakeManifold.generate(binary=4, seed=seed, bets=10) for _ in range(2))
    t0s = {}
    for a, b in zip(one.binary_resolved(), other.binary_resolved()):
        raw = a.raw
        t0 = raw["createdTime"] + int((raw["resolutionTime"] - raw["createdTime"]) * fraction)
        t0s[a.id] = t0
        start = a.price_before(t0)  # where trading after t0 starts from
        late = [
            {
                "id": f"late{k}{b.id}",
                "createdTime": t0 + late_ms + k,
                "probBefore": p,
                "probAfter": q,
            }
            for k, (p, q) in enumerate([(start, 0.98), (0.98, 0.02)])
        ]
        b.bets[:] = [x for x in b.bets if x["createdTime"] < t0] + late
    root = Path(tempfile.mkdtemp(dir=tmp_path))  # one store per example (tmp_path is shared)
    pull_manifold(root / "a", client_of(one), ManifoldQuery(), NOW)
    pull_manifold(root / "b", client_of(other), ManifoldQuery(), NOW)
    a, b = open_version(root / "a").bundle, open_version(root / "b").bundle
    for m in other.binary_resolved():
        m.raw.update(question="EDITED" if edit else m.raw["question"], textDescription="EDITED")
        m.raw["resolution"] = (
            {"YES": "NO", "NO": "MKT", "MKT": "YES"}[m.raw["resolution"]]
            if flip
            else m.raw["resolution"]
        )
    pull_manifold(root / "b", client_of(other), ManifoldQuery(), NOW + timedelta(days=3))
    later = open_version(root / "b").bundle
    for mid_raw, t0_ms in t0s.items():
        mid, t0 = f"manifold:{mid_raw}", ms_time(t0_ms)
        for seen in (b, later):
            assert market_at(seen, mid, t0) == market_at(a, mid, t0)
            assert history_before(seen.prices.get(mid, ()), t0) == history_before(
                a.prices.get(mid, ()), t0
            )
            assert price_at(seen.prices.get(mid, ()), t0) == price_at(a.prices.get(mid, ()), t0)
