"""The newest-closed-first listing of an incremental pull (`PullQuery.closed_since`): pages down
to the window and no further; an item without a readable closedTime never ends the paging."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from urllib.parse import parse_qs

import httpx

from hindcast.markets.polymarket import PolymarketClient, RetryPolicy
from hindcast.markets.pull import PullQuery, WorkDir, list_closed_since

SINCE = datetime(2026, 3, 1, tzinfo=UTC)
ITEMS = [
    {"conditionId": "a", "closedTime": "2026-03-05 10:00:00+00"},
    {"conditionId": "b"},  # no closedTime: kept, and does not stop the paging
    {"conditionId": "c", "closedTime": "2026-03-01 00:00:00+00"},  # exactly at the window: kept
    {"conditionId": "d", "closedTime": "2026-02-27 12:00:00+00"},  # older: left out, paging stops
    {"conditionId": "e", "closedTime": "2026-02-20 12:00:00+00"},
]


def test_the_closed_listing_stops_at_the_window(tmp_path):
    asked = []

    def answer(request: httpx.Request) -> httpx.Response:
        query = {k: v[0] for k, v in parse_qs(request.url.query.decode()).items()}
        asked.append(query)
        assert request.url.path == "/markets/keyset" and "offset" not in query
        offset, limit = int(query.get("after_cursor", "0")), int(query["limit"])
        more = {"next_cursor": str(offset + limit)} if offset + limit < len(ITEMS) else {}
        return httpx.Response(
            200, content=json.dumps({"markets": ITEMS[offset : offset + limit], **more})
        )

    client = PolymarketClient(
        httpx.Client(transport=httpx.MockTransport(answer)),
        "http://gamma",
        "http://clob",
        RetryPolicy(attempts=1),
        lambda s: None,
    )
    items = list_closed_since(
        client, WorkDir(tmp_path / "w"), PullQuery(page_size=2, closed_since=SINCE)
    )
    assert [i["conditionId"] for i in items] == ["a", "b", "c"]
    assert [q.get("after_cursor") for q in asked] == [None, "2"]
    assert all(
        (q["closed"], q["order"], q["ascending"]) == ("true", "closedTime", "false") for q in asked
    )
    again = list_closed_since(
        client, WorkDir(tmp_path / "w"), PullQuery(page_size=2, closed_since=SINCE)
    )
    assert again == items and len(asked) == 2  # a resumed pull reads its cached pages
