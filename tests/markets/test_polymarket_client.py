"""The Gamma/CLOB client against httpx.MockTransport: pagination, retries, timeouts, bodies."""

import httpx
import pytest

from hindcast.markets.polymarket import PolymarketClient, PolymarketError, RetryPolicy
from tests.markets.conftest import (
    CLOB,
    GAMMA,
    TIMEOUT,
    FakePolymarket,
    Reply,
    by_question,
    json_reply,
    mock_transport,
    tokens,
)


def cursors(fake):
    return [dict(r[2]).get("after_cursor") for r in fake.requests if r[1] == "markets/keyset"]


def first_page(client):
    return next(client.keyset_markets({"closed": "true"}))


# -- pagination ----------------------------------------------------------------------------------
def test_keyset_pages_follow_next_cursor_until_an_answer_has_none(client, fake):
    pages = list(client.keyset_markets({"closed": "true"}, limit=5))
    assert [len(p.items) for p in pages] == [5, 5, 3] and pages[-1].next_cursor is None
    assert cursors(fake) == [None, "c5", "c10"]
    assert all(
        ("closed", "true") in r[2] and ("limit", "5") in r[2] and "offset" not in dict(r[2])
        for r in fake.requests
    )


def test_a_listing_that_fills_whole_pages_ends_when_the_cursor_does(sleeps):
    fake = FakePolymarket(FakePolymarket().markets[:10])
    client = PolymarketClient(
        httpx.Client(transport=mock_transport(fake)), GAMMA, CLOB, sleep=sleeps
    )
    assert [len(p.items) for p in client.keyset_markets({}, limit=5)] == [5, 5]
    assert cursors(fake) == [None, "c5"]


def test_repeatable_filters_are_sent_once_per_value(client, fake):
    ids = ["0x" + "a" * 64, "0x" + "b" * 64]
    list(client.keyset_markets({"condition_ids": ids, "end_date_min": "2026-01-01T00:00:00Z"}))
    (request,) = fake.requests
    assert [v for k, v in request[2] if k == "condition_ids"] == ids
    assert ("end_date_min", "2026-01-01T00:00:00Z") in request[2]


def test_a_page_that_is_not_the_keyset_envelope_is_refused_with_its_url(client, fake):
    fake.faults[("gamma", "markets/keyset")] = [json_reply({"error": "bad"})]
    with pytest.raises(
        PolymarketError,
        match=r"gamma-api\.polymarket\.com/markets/keyset \(page 1\): unknown answer shape",
    ):
        list(client.keyset_markets({}))


def test_clob_markets_follow_next_cursor_until_LTE(client, fake):
    items = list(client.clob_markets())
    assert len(items) == 3 and fake.count("markets", "clob") == 2


# -- retries -------------------------------------------------------------------------------------
def test_429_waits_what_retry_after_says_then_succeeds(client, fake, sleeps):
    fake.faults[("gamma", "markets/keyset")] = [Reply(429, b"slow down", {"Retry-After": "7"})]
    assert len(first_page(client).items) == 13
    assert sleeps == [7.0] and fake.count("markets/keyset") == 2


def test_429_without_retry_after_backs_off_exponentially(client, fake, sleeps):
    fake.faults[("gamma", "markets/keyset")] = [Reply(429, b""), Reply(429, b"")]
    first_page(client)
    assert sleeps == [0.5, 1.0]


def test_a_retry_after_given_as_a_date_falls_back_to_backoff(client, fake, sleeps):
    fake.faults[("gamma", "markets/keyset")] = [
        Reply(503, b"", {"Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"})
    ]
    first_page(client)
    assert sleeps == [0.5]


def test_a_retry_after_longer_than_allowed_fails_at_once(client, fake, sleeps):
    fake.faults[("gamma", "markets/keyset")] = [Reply(429, b"", {"Retry-After": "3600"})]
    with pytest.raises(PolymarketError, match="asks to retry after 3600s"):
        first_page(client)
    assert sleeps == [] and fake.count("markets/keyset") == 1


def test_5xx_then_success(client, fake, sleeps):
    fake.faults[("clob", "prices-history")] = [Reply(500, b"oops"), Reply(503, b"")]
    a = by_question("Marco Rubio")
    history = client.prices_history(tokens(a)[0], 0, 2**31)
    assert history.fidelity == 60 and len(history.history) == 12
    assert sleeps == [0.5, 1.0]


def test_5xx_on_every_attempt_is_a_clear_error_after_the_last(client, fake, sleeps):
    fake.faults[("gamma", "markets/keyset")] = [Reply(502, b"bad gateway")] * 10
    with pytest.raises(
        PolymarketError,
        match=r"https://gamma-api\.polymarket\.com/markets/keyset\?.*: HTTP 502 after 4 attempts",
    ):
        first_page(client)
    assert fake.count("markets/keyset") == 4 and len(sleeps) == 3


def test_timeouts_are_retried_then_succeed(client, fake, sleeps):
    fake.faults[("gamma", "markets/keyset")] = [TIMEOUT, TIMEOUT]
    assert len(first_page(client).items) == 13
    assert fake.count("markets/keyset") == 3 and sleeps == [0.5, 1.0]


def test_a_dropped_connection_is_retried(fake, sleeps):
    calls = []

    def flaky(request):
        calls.append(request)
        if len(calls) == 1:
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(200, json={"markets": []})

    client = PolymarketClient(httpx.Client(transport=httpx.MockTransport(flaky)), sleep=sleeps)
    assert first_page(client).items == [] and len(calls) == 2 and sleeps == [1.0]


def test_timeouts_on_every_attempt_name_the_url(client, fake):
    fake.faults[("clob", "prices-history")] = [TIMEOUT] * 4
    with pytest.raises(
        PolymarketError, match=r"clob\.polymarket\.com/prices-history: timed out after 4 attempts"
    ):
        client.prices_history("123", None, None)


def test_a_4xx_other_than_429_is_not_retried(client, fake, sleeps):
    fake.faults[("gamma", "markets/keyset")] = [Reply(404, b"no such thing")]
    with pytest.raises(PolymarketError, match="HTTP 404: no such thing"):
        first_page(client)
    assert sleeps == [] and fake.count("markets/keyset") == 1


def test_a_body_that_is_not_json_names_the_url(client, fake):
    fake.faults[("gamma", "markets/keyset")] = [Reply(200, b'[{"id": "1", "question": ')]
    with pytest.raises(PolymarketError, match=r"/markets/keyset\?.*: response is not valid JSON"):
        first_page(client)


def test_every_request_carries_the_policy_timeout(fake):
    seen = []

    def record(request):
        seen.append(request.extensions["timeout"])
        return httpx.Response(
            200, json={"history": []} if "prices-history" in request.url.path else {"markets": []}
        )

    client = PolymarketClient(
        httpx.Client(transport=httpx.MockTransport(record)), retry=RetryPolicy(timeout=4.5)
    )
    first_page(client)
    client.prices_history("1", None, None)
    assert len(seen) == 4 and all(
        t == {"connect": 4.5, "read": 4.5, "write": 4.5, "pool": 4.5} for t in seen
    )


# -- price histories -----------------------------------------------------------------------------
def test_a_fine_history_is_used_as_is_with_the_token_id_as_text(client, fake):
    token = tokens(by_question("Marco Rubio"))[0]
    assert len(token) >= 70 and token.isdigit()
    history = client.prices_history(token, 1767373451, 1769201796)
    (request,) = fake.requests
    assert dict(request[2]) == {
        "market": token,
        "fidelity": "60",
        "startTs": "1767373451",
        "endTs": "1769201796",
    }
    assert history.token_id == token and history.fidelity == 60


def test_a_coarse_only_history_is_found_by_retrying_coarser(client, fake):
    token = tokens(by_question("Bitcoin reach"))[0]
    history = client.prices_history(token, None, None)
    assert [dict(r[2])["fidelity"] for r in fake.requests] == ["60", "720"]
    assert history.fidelity == 720 and len(history.history) == 8
    assert all(dict(r[2])["interval"] == "max" for r in fake.requests)


def test_an_empty_history_is_empty_only_after_every_fidelity(client, fake):
    token = tokens(by_question("50 bps"))[0]
    history = client.prices_history(token, 1, 2)
    assert [dict(r[2])["fidelity"] for r in fake.requests] == ["60", "720", "1440"]
    assert history.history == []


def test_a_history_body_of_the_wrong_shape_is_refused(client, fake):
    fake.faults[("clob", "prices-history")] = [json_reply([{"t": 1, "p": 0.5}])]
    with pytest.raises(PolymarketError, match=r"token 42: expected \{\"history\""):
        client.prices_history("42", None, None)
