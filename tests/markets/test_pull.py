"""The resumable pull, in-process against httpx.MockTransport."""

import httpx
import pytest

from hindcast.errors import MarketDataError
from hindcast.markets.bundle import description_at
from hindcast.markets.importers import import_forecastbench
from hindcast.markets.polymarket import PolymarketClient, PolymarketError, RetryPolicy
from hindcast.markets.pull import PullQuery, pull
from hindcast.markets.store import open_version, write_version
from hindcast.timeutil import parse_utc, to_unix
from tests.helpers import SAMPLE_MARKETS, at
from tests.markets.conftest import (
    CLOB,
    GAMMA,
    FakePolymarket,
    Reply,
    by_question,
    mock_transport,
    tokens,
)

NOW = at("2026-11-30T06:00:00")
QUERY = PullQuery(page_size=5)
STORED = {
    by_question(q)["conditionId"]
    for q in (
        "Marco Rubio",
        "Bitcoin reach",
        "Acend",
        "emergency rate cut",
        "50 bps",
        "Sam Bankman-Fried",
    )
}
FAILED = {by_question(q)["conditionId"] for q in ("Dow close above", "Solana", "Ethereum")}
NO_HISTORY = by_question("50 bps")["conditionId"]  # no route serves a point: skipped, not stored
STORED_WITH_HISTORY = STORED - {NO_HISTORY}


class Killed(BaseException):
    """Stands for SIGKILL: nothing in the pull may catch it."""


def client_for(fake, sleeps=None):
    http = httpx.Client(transport=mock_transport(fake))
    return PolymarketClient(http, GAMMA, CLOB, RetryPolicy(attempts=3), sleeps or (lambda s: None))


def kill_when(fake, predicate):
    """From now on, a request matching predicate(endpoint, query) kills the pull."""
    original = fake.answer

    def answer(service, endpoint, query):
        if predicate(endpoint, query):
            raise Killed()
        return original(service, endpoint, query)

    fake.answer = answer


def test_a_pull_stores_resolved_binary_markets_and_reports_the_rest(tmp_path, fake):
    summary = pull(tmp_path, client_for(fake), QUERY, NOW)
    bundle = open_version(tmp_path).bundle
    assert (
        {m.id for m in bundle.markets} == STORED_WITH_HISTORY
        and summary.stored == 5
        and summary.listed == 13
    )
    assert summary.skipped == {
        "not binary (3 outcomes)": 1,
        "not closed": 1,
        "no price history": 1,
        "not resolved (umaResolutionStatus='proposed')": 1,
        "listed twice (same conditionId)": 1,
    }
    assert {line.split(":")[0].removeprefix("market ") for line in summary.failed} == FAILED
    counts = summary.counts()
    assert counts.listed == counts.stored + counts.skipped_total + counts.failed and counts.short
    assert summary.version == (tmp_path / "LATEST").read_text().strip()
    assert not (tmp_path / ".pull").exists() or not any((tmp_path / ".pull").iterdir())


def test_failures_say_what_went_wrong_for_each_market(tmp_path, fake):
    failed = "\n".join(pull(tmp_path, client_for(fake), QUERY, NOW).failed)
    assert (
        f"market {by_question('Dow close above')['conditionId']}: outcomePrices is not valid JSON"
        in failed
    )
    assert (
        f"market {by_question('Solana')['conditionId']}: price history: t '2026-01-05' is "
        "not unix seconds" in failed
    )
    assert (
        f"market {by_question('Ethereum')['conditionId']}: "
        "https://clob.polymarket.com/prices-history" in failed
    )
    assert "response is not valid JSON" in failed


def test_pulled_histories_are_the_yes_tokens_at_the_fidelity_that_answered(tmp_path, fake):
    pull(tmp_path, client_for(fake), QUERY, NOW)
    bundle = open_version(tmp_path).bundle
    sbf, btc = by_question("Sam Bankman-Fried"), by_question("Bitcoin reach")
    yes_points = fake.histories[tokens(sbf)[1]]["60"]["history"]
    assert [p.p for p in bundle.prices[sbf["conditionId"]]] == [x["p"] for x in yes_points]
    assert (
        bundle.meta[btc["conditionId"]].history_fidelity == 720
        and len(bundle.prices[btc["conditionId"]]) == 8
    )
    assert by_question("50 bps")["conditionId"] not in bundle.prices
    assert fake.history_requests(tokens(sbf)[0]) == []  # the No token is never asked for
    windows = [dict(r[2]) for r in fake.requests if r[1] == "prices-history"]
    assert windows and all(
        "interval" not in q and 0 <= int(q["endTs"]) - int(q["startTs"]) <= 15 * 86400
        for q in windows
    )
    assert bundle.meta[sbf["conditionId"]].price_route == "clob /prices-history windows"


def test_resolutions_and_metadata_survive_the_store(tmp_path, fake):
    pull(tmp_path, client_for(fake), QUERY, NOW)
    bundle = open_version(tmp_path).bundle
    status = {r.market_id: r.status for r in bundle.resolutions}
    assert sorted(status.values()) == ["fifty-fifty", "no", "no", "yes", "yes"]
    acend = bundle.meta[by_question("Acend")["conditionId"]]
    assert acend.neg_risk and acend.outcomes == ("Acend", "Bebop") and acend.tags[0] == "Sports"


def test_a_killed_pull_resumes_without_refetching_pages_or_histories(tmp_path, fake):
    stop_at = tokens(by_question("Sam Bankman-Fried"))[1]
    kill_when(fake, lambda endpoint, query: ("market", stop_at) in query)
    with pytest.raises(Killed):
        pull(tmp_path, client_for(fake), QUERY, NOW)
    assert not (tmp_path / "LATEST").exists()
    first = list(fake.requests)

    again = FakePolymarket()
    summary = pull(tmp_path, client_for(again), QUERY, NOW)
    in_flight = tokens(by_question("Sam Bankman-Fried"))[1]  # its Data API answer is asked again
    assert again.count("markets/keyset") == 0
    assert {r for r in again.requests if ("token_id", in_flight) not in r[2]}.isdisjoint(first)
    assert summary.histories_cached == 5 and summary.histories_fetched == 1
    assert {m.id for m in open_version(tmp_path).bundle.markets} == STORED_WITH_HISTORY


def test_a_second_pull_reuses_stored_histories_and_changes_nothing(tmp_path, fake):
    first = pull(tmp_path, client_for(fake), QUERY, NOW)
    again = FakePolymarket()
    second = pull(tmp_path, client_for(again), QUERY, at("2026-12-01T00:00:00"))
    assert second.version == first.version and second.histories_reused == 5
    fetched = {r for r in again.requests if r[1] == "prices-history"}
    failing_tokens = {tokens(by_question(q))[0] for q in ("Solana", "Ethereum", "50 bps")}
    assert {
        dict(r[2])["market"] for r in fetched
    } == failing_tokens  # only the failures are tried again


def test_a_changed_description_becomes_a_new_version_known_from_the_pull(tmp_path, fake):
    pull(tmp_path, client_for(fake), QUERY, NOW)
    rubio = by_question("Marco Rubio")
    clarified = rubio["description"] + "\n\nClarification: a recess appointment does not count."
    changed = [
        dict(m, description=clarified) if m["id"] == rubio["id"] else m for m in fake.markets
    ]
    later = at("2026-12-05T00:00:00")
    pull(tmp_path, client_for(FakePolymarket(changed)), QUERY, later)
    version = open_version(tmp_path)
    assert description_at(version, rubio["conditionId"], later) == rubio["description"]
    assert description_at(version, rubio["conditionId"], at("2026-12-05T00:00:01")) == clarified
    market = next(m for m in version.bundle.markets if m.id == rubio["conditionId"])
    assert market.description == clarified


def test_a_pull_adds_to_the_markets_already_in_the_store(tmp_path, fake):
    source = SAMPLE_MARKETS / "forecastbench"
    imported = import_forecastbench(source / "markets.jsonl", source / "prices_daily.csv")
    write_version(tmp_path, imported)
    pull(tmp_path, client_for(fake), QUERY, NOW)
    bundle = open_version(tmp_path).bundle
    assert {m.id for m in bundle.markets} == {m.id for m in imported.markets} | STORED_WITH_HISTORY
    assert all(bundle.prices[k] == v for k, v in imported.prices.items())


def test_limit_caps_the_markets_looked_at(tmp_path, fake):
    summary = pull(tmp_path, client_for(fake), PullQuery(limit=4, page_size=5), NOW)
    assert summary.listed == 4 and fake.count("markets/keyset") == 1 and summary.stored == 4


def test_filters_reach_gamma(tmp_path, fake):
    query = PullQuery(since=at("2026-01-01T00:00:00"), until=at("2026-02-01T00:00:00"), page_size=5)
    pull(tmp_path, client_for(fake), query, NOW)
    params = dict(fake.requests[0][2])
    assert params["closed"] == "true" and params["end_date_min"] == "2026-01-01T00:00:00Z"
    assert params["end_date_max"] == "2026-02-01T00:00:00Z"


def test_a_history_that_keeps_failing_fails_only_its_market(tmp_path, fake):
    fake.faults[("clob", "prices-history")] = [Reply(503, b"")] * 3
    summary = pull(tmp_path, client_for(fake), QUERY, NOW)
    rubio = by_question("Marco Rubio")["conditionId"]
    assert any(
        line.startswith(f"market {rubio}: ") and "HTTP 503 after 3 attempts" in line
        for line in summary.failed
    )
    assert summary.stored == 4 and rubio not in {
        m.id for m in open_version(tmp_path).bundle.markets
    }


def test_an_unreadable_page_stops_the_pull_and_writes_nothing(tmp_path, fake):
    fake.faults[("gamma", "markets/keyset")] = [Reply(200, b"[{")]
    with pytest.raises(PolymarketError, match=r"/markets/keyset\?.*not valid JSON"):
        pull(tmp_path, client_for(fake), QUERY, NOW)
    assert not (tmp_path / "LATEST").exists() and not (tmp_path / "versions").exists()
    assert not (tmp_path / ".pull").exists()  # a failed listing keeps no page


def test_a_corrupt_cache_file_is_named(tmp_path, fake):
    kill_when(fake, lambda endpoint, query: endpoint == "prices-history")
    with pytest.raises(Killed):
        pull(tmp_path, client_for(fake), QUERY, NOW)
    work = next((tmp_path / ".pull").iterdir())
    (work / "pages" / "000000000.json").write_text("[{", encoding="utf-8")
    with pytest.raises(MarketDataError, match=r"000000000\.json: corrupt pull cache"):
        pull(tmp_path, client_for(FakePolymarket()), QUERY, NOW)


def test_a_second_pull_into_the_same_store_is_refused_while_one_runs(tmp_path, fake):
    """Two pulls at once would both merge into the same previous version and the later
    LATEST would drop the other's markets: the second is refused and writes nothing."""
    from hindcast.filelock import FileLock

    with FileLock(tmp_path / ".pull.lock").acquire({"pid": 4242, "since": "2026-11-30T05:59:00Z"}):
        with pytest.raises(
            MarketDataError,
            match=r"another pull into .* is running \(pid 4242 since 2026-11-30T05:59:00Z\)",
        ):
            pull(tmp_path, client_for(fake), QUERY, NOW)
        assert not (tmp_path / "LATEST").exists() and not (tmp_path / ".pull").exists()
    assert pull(tmp_path, client_for(fake), QUERY, NOW).stored == 5  # the lock went with its holder


def test_a_market_listed_before_it_resolved_is_asked_for_again_by_id_until_it_does(tmp_path, fake):
    """Gamma lists by scheduled end date: a market resolving long after it would never be
    listed again. It goes on the watch list, and later pulls ask Gamma for it by id."""
    from hindcast.markets.pull import read_watch

    gpt6, greenland = by_question("GPT-6"), by_question("Greenland")  # proposed; not closed yet
    watched = {gpt6["conditionId"], greenland["conditionId"]}
    first = pull(tmp_path, client_for(fake), QUERY, NOW)
    assert (
        set(first.pending) == watched
        and set(read_watch(tmp_path)) == watched
        and first.rechecked == 0
    )
    assert gpt6["conditionId"] not in {m.id for m in open_version(tmp_path).bundle.markets}

    later = FakePolymarket(
        markets=[]
    )  # the window no longer lists them: their end dates are long past
    later.by_id = [{**gpt6, "umaResolutionStatus": "resolved"}, greenland]
    opened = to_unix(parse_utc(gpt6.get("startDate") or gpt6["createdAt"]))
    later.histories[tokens(gpt6)[0]] = {"60": {"history": [{"t": opened + 3600, "p": 0.3}]}}
    second = pull(
        tmp_path,
        client_for(later),
        PullQuery(page_size=5, since=at("2026-06-01T00:00:00")),
        at("2026-07-01T00:00:00"),
    )
    asked = [
        value
        for service, endpoint, query in later.requests
        for key, value in query
        if (service, endpoint, key) == ("gamma", "markets/keyset", "condition_ids")
    ]
    assert (
        sorted(asked) == sorted([*watched, *watched])
        and second.rechecked == 2
        and second.stored == 1
    )
    closed = [
        dict(q).get("closed")
        for s, e, q in later.requests
        if e == "markets/keyset" and ("condition_ids", gpt6["conditionId"]) in q
    ]
    assert sorted(closed, key=str) == ["true", None] or sorted(closed, key=str) == [None, "true"]
    assert gpt6["conditionId"] in {m.id for m in open_version(tmp_path).bundle.markets}
    assert read_watch(tmp_path) == {
        greenland["conditionId"]: "2026-11-30T06:00:00Z"
    }  # still open, first seen then


def test_an_unreadable_watch_list_stops_the_pull_with_its_path_and_writes_nothing(tmp_path, fake):
    (tmp_path / "pending.json").write_text('{"pending": [1, 2', encoding="utf-8")
    with pytest.raises(MarketDataError, match=r"pending\.json: unreadable watch list"):
        pull(tmp_path, client_for(fake), QUERY, NOW)
    assert not (tmp_path / "LATEST").exists()
