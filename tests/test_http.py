"""The shared HTTP layer (hindcast.http) against httpx.MockTransport, sync and async alike:
both Retry-After forms, the cap on waits, backoff, status sets, transport errors, timeouts;
and the two clients built on it (the market client's paging with a page cache, its
Retry-After dates, its protocol errors; the chat client's capped waits)."""

import asyncio

import httpx
import pytest

from hindcast.errors import InfrastructureError, PolymarketError
from hindcast.http import AsyncRetrying, Outcome, Retrying, RetryPolicy, retry_after
from hindcast.llm.client import ChatClient, parse_model
from hindcast.markets.polymarket import PolymarketClient

URL = "http://api.invalid/thing"
DATE = "Mon, 01 Jan 2001 00:00:00 GMT"  # far in the past: a wait read against our clock would be 0


def script(*replies):
    """A handler answering each request with the next reply (a Response, or an exception
    class raised as a transport error); the last reply repeats. Records every request."""
    seen = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        reply = replies[min(len(seen), len(replies)) - 1]
        if isinstance(reply, type):
            raise reply("scripted", request=request)
        return reply

    handle.seen = seen
    return handle


def reply(status: int, **headers) -> httpx.Response:
    return httpx.Response(status, headers={k.replace("_", "-"): v for k, v in headers.items()})


def send(mode: str, policy: RetryPolicy, handler, **kw) -> tuple[Outcome, list]:
    """One GET through the sync or the async loop; (outcome, the waits asked for)."""
    sleeps = []
    if mode == "sync":
        with httpx.Client(transport=httpx.MockTransport(handler)) as http:
            return Retrying(http, policy, sleeps.append).request("GET", URL, **kw), sleeps

    async def asleep(seconds):
        sleeps.append(seconds)

    async def go():
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            return await AsyncRetrying(http, policy, asleep).request("GET", URL, **kw)

    return asyncio.run(go()), sleeps


both = pytest.mark.parametrize("mode", ["sync", "async"])


# -- Retry-After: both forms ---------------------------------------------------------------
def test_retry_after_forms():
    assert retry_after(httpx.Headers({"Retry-After": "7"})) == 7.0
    assert retry_after({"retry-after": "2.5"}) == 2.5
    assert retry_after({"retry-after": "-3"}) == 0.0
    assert retry_after({"retry-after": "Mon, 01 Jan 2001 00:00:10 GMT", "date": DATE}) == 10.0
    assert (
        retry_after({"retry-after": "Sun, 31 Dec 2000 23:59:00 GMT", "date": DATE}) == 0.0
    )  # already past
    assert (
        retry_after({"retry-after": "Mon, 01 Jan 2001 00:00:10 GMT"}) == -1.0
    )  # no Date: no clock of ours
    assert retry_after({"retry-after": "soon"}) == -1.0
    assert retry_after({}) == -1.0


@both
def test_retry_after_in_seconds_is_waited(mode):
    outcome, sleeps = send(mode, RetryPolicy(), script(reply(429, Retry_After="7"), reply(200)))
    assert (outcome.last.status_code, outcome.attempts, outcome.transient, sleeps) == (
        200,
        2,
        False,
        [7.0],
    )


@both
def test_retry_after_as_a_date_is_read_against_the_responses_date(mode):
    first = reply(503, Retry_After="Mon, 01 Jan 2001 00:00:12 GMT", Date=DATE)
    outcome, sleeps = send(mode, RetryPolicy(), script(first, reply(200)))
    assert outcome.last.status_code == 200 and sleeps == [12.0]


@both
def test_a_date_without_a_date_header_falls_back_to_backoff(mode):
    first = reply(503, Retry_After="Mon, 01 Jan 2001 00:00:12 GMT")
    _, sleeps = send(mode, RetryPolicy(base_delay=0.5), script(first, reply(200)))
    assert sleeps == [0.5]


# -- caps ----------------------------------------------------------------------------------
@both
def test_a_wait_longer_than_max_delay_is_refused_at_once_by_default(mode):
    handler = script(reply(429, Retry_After="3600"), reply(200))
    outcome, sleeps = send(mode, RetryPolicy(max_delay=60), handler)
    assert (outcome.transient, outcome.refused_wait, outcome.attempts, sleeps) == (
        True,
        3600.0,
        1,
        [],
    )
    assert len(handler.seen) == 1


@both
def test_a_wait_longer_than_max_delay_is_capped_when_the_policy_says_cap(mode):
    first = reply(429, Retry_After="Mon, 01 Jan 2001 01:00:00 GMT", Date=DATE)
    outcome, sleeps = send(
        mode, RetryPolicy(max_delay=60, long_wait="cap"), script(first, reply(200))
    )
    assert outcome.last.status_code == 200 and outcome.refused_wait is None and sleeps == [60.0]


@both
def test_backoff_doubles_up_to_max_delay_and_attempts_are_bounded(mode):
    handler = script(reply(502))
    outcome, sleeps = send(mode, RetryPolicy(attempts=5, base_delay=1, max_delay=3), handler)
    assert (outcome.last.status_code, outcome.attempts, outcome.transient) == (502, 5, True)
    assert sleeps == [1, 2, 3, 3] and len(handler.seen) == 5


def test_a_policy_refuses_settings_it_cannot_apply():
    with pytest.raises(ValueError, match="at least one attempt"):
        RetryPolicy(attempts=0)
    with pytest.raises(ValueError, match="fail or cap"):
        RetryPolicy(long_wait="sometimes")


# -- status sets ---------------------------------------------------------------------------
@both
@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_transient_statuses_are_retried(mode, status):
    outcome, sleeps = send(mode, RetryPolicy(base_delay=0.25), script(reply(status), reply(200)))
    assert outcome.last.status_code == 200 and outcome.attempts == 2 and sleeps == [0.25]


@both
@pytest.mark.parametrize("status", [400, 401, 403, 404, 408, 409, 425, 501])
def test_other_statuses_are_final_at_once(mode, status):
    outcome, sleeps = send(mode, RetryPolicy(), script(reply(status), reply(200)))
    assert (outcome.last.status_code, outcome.attempts, outcome.transient, sleeps) == (
        status,
        1,
        False,
        [],
    )


@both
def test_a_policy_names_its_own_status_set_and_a_caller_may_narrow_it(mode):
    policy = RetryPolicy(base_delay=0.25, statuses=frozenset({408, 503}))
    outcome, _ = send(mode, policy, script(reply(408), reply(200)))
    assert outcome.attempts == 2
    outcome, _ = send(mode, policy, script(reply(503), reply(200)), transient=lambda r: False)
    assert (outcome.last.status_code, outcome.attempts) == (503, 1)


# -- transport errors and timeouts ---------------------------------------------------------
@both
@pytest.mark.parametrize(
    "error", [httpx.ConnectError, httpx.ReadTimeout, httpx.RemoteProtocolError]
)
def test_transport_errors_are_retried_and_the_last_is_returned(mode, error):
    outcome, sleeps = send(mode, RetryPolicy(attempts=3, base_delay=0.5), script(error))
    assert isinstance(outcome.last, error) and outcome.response is None
    assert (outcome.attempts, outcome.transient, sleeps) == (3, True, [0.5, 1.0])


@both
def test_every_attempt_carries_the_policy_timeout(mode):
    handler = script(httpx.ReadTimeout, reply(200))
    outcome, _ = send(mode, RetryPolicy(timeout=4.5), handler)
    assert outcome.response.status_code == 200 and len(handler.seen) == 2
    assert all(
        r.extensions["timeout"] == dict.fromkeys(("connect", "read", "write", "pool"), 4.5)
        for r in handler.seen
    )


@both
def test_before_runs_before_every_attempt_and_may_stop_the_loop(mode):
    calls = []

    def before():
        calls.append(len(calls))
        if len(calls) == 3:
            raise RuntimeError("breaker open")

    handler = script(reply(503))
    with pytest.raises(RuntimeError, match="breaker open"):
        send(mode, RetryPolicy(), handler, before=before)
    assert calls == [0, 1, 2] and len(handler.seen) == 2


# -- the market client on the shared layer --------------------------------------------------
def polymarket(handler, sleeps, **policy) -> PolymarketClient:
    http = httpx.Client(transport=httpx.MockTransport(handler))
    return PolymarketClient(
        http, "http://gamma", "http://clob", RetryPolicy(base_delay=0.5, **policy), sleeps.append
    )


def test_the_market_client_honours_a_retry_after_date():
    sleeps = []
    first = reply(503, Retry_After="Mon, 01 Jan 2001 00:00:09 GMT", Date=DATE)
    client = polymarket(script(first, httpx.Response(200, json={"markets": []})), sleeps)
    assert next(client.keyset_markets({})).items == [] and sleeps == [9.0]


def test_the_market_client_retries_a_protocol_error_and_names_the_url_after_the_last():
    sleeps = []
    client = polymarket(script(httpx.RemoteProtocolError), sleeps, attempts=2)
    with pytest.raises(
        PolymarketError, match=r"http://clob/prices-history: connection failed after 2 attempts"
    ):
        client.prices_history("1")
    assert sleeps == [0.5]


class Pages(dict):
    """A keyset page cache in memory (a pull keeps its pages in its work directory)."""

    def keyset_page(self, number, cursor):
        page = self.get(number)
        return page if page is not None and page.cursor == cursor else None

    def save_keyset_page(self, page):
        self[page.number] = page


def test_paging_reads_cached_pages_back_and_saves_fetched_ones():
    from hindcast.markets.polymarket import KeysetPage

    items = [{"id": str(i)} for i in range(7)]

    def gamma(request):
        start, limit = (
            int(request.url.params.get("after_cursor", "0")),
            int(request.url.params["limit"]),
        )
        asked.append(start)
        more = {"next_cursor": str(start + limit)} if start + limit < len(items) else {}
        return httpx.Response(200, json={"markets": items[start : start + limit], **more})

    asked, cache = [], Pages({0: KeysetPage(0, "", items[:3], "3")})
    client = polymarket(gamma, [])
    pages = list(client.keyset_markets({"closed": "true"}, limit=3, cache=cache))
    assert [p.cursor for p in pages] == ["", "3", "6"] and [
        i for p in pages for i in p.items
    ] == items
    assert asked == [3, 6] and sorted(cache) == [0, 1, 2] and cache[2].next_cursor is None


# -- the chat client on the shared layer ----------------------------------------------------
def chat(handler, sleeps, **kw) -> ChatClient:
    async def asleep(seconds):
        sleeps.append(seconds)

    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return ChatClient(
        parse_model("openai-compatible:http://model.invalid/v1#m"), http=http, sleep=asleep, **kw
    )


def completion(text: str) -> httpx.Response:
    return httpx.Response(
        200, json={"choices": [{"message": {"content": text}, "finish_reason": "stop"}]}
    )


def test_the_chat_client_caps_a_long_retry_after_at_max_wait_and_counts_retries():
    sleeps = []
    client = chat(script(reply(429, Retry_After="3600"), completion("ok")), sleeps, max_wait=5)
    answer = asyncio.run(client.complete([{"role": "user", "content": "hi"}]))
    assert (answer.content, answer.retries, sleeps, client.requests) == ("ok", 1, [5.0], 2)


def test_the_chat_client_retries_its_own_status_set_then_reports_an_outage():
    sleeps = []
    client = chat(script(reply(408), reply(425), reply(409)), sleeps, max_retries=2, backoff=0.5)
    with pytest.raises(InfrastructureError, match=r"HTTP 409: *\(gave up after 3 attempts\)"):
        asyncio.run(client.complete([{"role": "user", "content": "hi"}]))
    assert sleeps == [0.5, 1.0]
