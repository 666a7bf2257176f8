"""The stored forms of a run's records (issue 38, "records are records"): the retrieval log is
typed Retrieval records in memory and the same JSON as before in the run database; a run's
manifest and identity are records with typed fields (store and archive references), read back
from any stored layout (an older release's, the live arm's) and written back unchanged."""

from __future__ import annotations

import json

from hindcast.records import ArchiveRef, MarketStoreRef, Retrieval, RunManifest
from hindcast.runs import (
    identity_form,
    identity_of,
    manifest_form,
    manifest_of,
    retrieval_form,
    retrieval_of,
    retrievals_of,
)

# entries as forecasts have always stored them (sorted keys, as the run store dumps them)
STORED_LOG = [
    {"ids": ["d1", "d2"], "k": 5, "mode": "hybrid", "op": "search", "query": "rain"},
    {"doc_id": "d2", "ids": ["d2"], "op": "read"},
    {"doc_id": "d1", "ids": [], "op": "withhold", "verdict": {"label": "x"}, "via": {"op": "s"}},
    {"ids": [], "op": "price_history"},
]


def test_a_stored_retrieval_log_reads_as_records_and_writes_back_byte_identical():
    calls = retrievals_of(STORED_LOG)
    assert all(isinstance(c, Retrieval) for c in calls)
    assert [c.op for c in calls] == ["search", "read", "withhold", "price_history"]
    assert calls[0].ids == ("d1", "d2") and calls[0].detail["query"] == "rain"
    assert (calls[1].doc_id, calls[2].doc_id, calls[3].doc_id) == ("d2", "d1", "")
    written = [retrieval_form(c) for c in calls]
    assert json.dumps(written, sort_keys=True) == json.dumps(STORED_LOG, sort_keys=True)


def test_an_entry_stored_without_ids_returned_none():
    assert retrieval_of({"op": "question"}) == Retrieval("question", (), {})


LIVE = {
    "kind": "live",
    "sweep": "nightly",
    "forecasters": ["market"],
    "store_version": "live (each forecast: the log's store_version)",
    "snapshot": "live (each forecast: the log's snapshot)",
}


def test_the_live_arms_identity_keeps_its_own_keys_and_writes_back_only_what_it_had():
    identity = identity_of(LIVE)
    assert identity.forecasters == ("market",) and identity.extra == {
        "kind": "live",
        "sweep": "nightly",
    }
    assert "markets" in identity.absent and "store_version" not in identity.absent
    assert identity_form(identity) == LIVE


def test_a_manifest_of_a_release_that_recorded_no_market_store_reads_it_as_none():
    stored = {"identity": {"store_version": "m-1"}, "forecasters": {}, "archive": None}
    m = manifest_of(stored)
    assert m.market_store is None and m.archive is None
    assert manifest_form(m)["market_store"] == {}  # the layout's empty mapping, as before


def test_store_and_archive_references_are_records():
    stored = {
        "identity": {"store_version": "m-1", "snapshot": "s-1"},
        "market_store": {"version": "m-1", "root": "/m"},
        "archive": {"snapshot": "s-1", "root": "/a"},
    }
    m = manifest_of(stored)
    assert isinstance(m, RunManifest)
    assert m.market_store == MarketStoreRef("m-1", "/m")
    assert m.archive == ArchiveRef("s-1", "/a")
    assert m.identity.snapshot == "s-1" and m.identity.store_version == "m-1"
