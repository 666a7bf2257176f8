"""Resolution metadata read from a Gamma market object (issue 23): wasDisputed, the UMA status
chain (which may lag umaResolutionStatus or be missing) and questionRulesUpdated (and when)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from hindcast.errors import MalformedMarket
from hindcast.markets.parse import parse_gamma_market

BASE = {
    "conditionId": "0x" + "c" * 64,
    "id": "77",
    "question": "Will it rain?",
    "outcomes": '["Yes", "No"]',
    "outcomePrices": '["1", "0"]',
    "clobTokenIds": json.dumps(["1" * 72, "2" * 72]),
    "closed": True,
    "umaResolutionStatus": "resolved",
    "startDate": "2026-01-01T00:00:00Z",
    "closedTime": "2026-02-01 10:00:00+00",
    "updatedAt": "2026-02-03T00:00:00.5Z",
}


def meta(**changes):
    raw = {k: v for k, v in {**BASE, **changes}.items() if v is not None}
    return parse_gamma_market(raw).meta


def test_disputed_and_the_status_chain():
    assert (
        meta(wasDisputed=True).disputed
        and not meta().disputed
        and not meta(wasDisputed="yes").disputed
    )
    assert meta(
        umaResolutionStatuses='["proposed", "disputed", "resolved"]'
    ).resolution_statuses == ("proposed", "disputed", "resolved")
    assert meta(umaResolutionStatuses='["proposed"]').resolution_statuses == (
        "proposed",
        "resolved",
    )  # lagging chain
    assert meta().resolution_statuses == ("resolved",)  # chain missing: the current status alone
    assert meta(umaResolutionStatuses="not json").resolution_statuses == ("resolved",)


def test_when_the_rules_were_updated():
    assert (
        meta().rules_updated_at is None
        and meta(questionRulesUpdated=False).rules_updated_at is None
    )
    assert meta(
        questionRulesUpdated=True, questionRulesUpdatedAt="2026-01-20T12:00:00Z"
    ).rules_updated_at == datetime(2026, 1, 20, 12, tzinfo=UTC)
    assert meta(questionRulesUpdated=True).rules_updated_at == datetime(
        2026, 2, 3, 0, 0, 0, 500000, tzinfo=UTC
    )
    assert meta(questionRulesUpdated=True, updatedAt=None).rules_updated_at == datetime(
        2026, 2, 1, 10, tzinfo=UTC
    )
    with pytest.raises(MalformedMarket, match="questionRulesUpdatedAt 'soon' is not a timestamp"):
        meta(questionRulesUpdated=True, questionRulesUpdatedAt="soon")
