"""Typed records between packages (issue 26): a scored run's manifest is a RunManifest (read by
field, stored and shown in its JSON form unchanged), a scored row's usage a records.Usage."""

from __future__ import annotations

import json
from datetime import datetime, timezone

from hindcast import api, replay, runs
from hindcast.records import MarketStoreRef, RunManifest, Usage
from hindcast.runs import identity_form, identity_of, manifest_form, manifest_of
from hindcast.scoring import ScoredRow
from tests.helpers import SAMPLE_MARKETS

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)


def test_a_rescored_runs_manifest_is_the_record_of_what_was_stored(tmp_path):
    spec = replay.spec_from_mapping(
        {"store": SAMPLE_MARKETS, "forecasters": ["market", "constant"], "limit": 2}
    )
    store = runs.RunStore(f"sqlite:///{tmp_path / 'h.db'}")
    result = api.sweep(spec, runs=store, out=tmp_path / "out", now=NOW)
    stored = json.loads(store.run(result.run_id).manifest_json)
    scores = api.rescore(store, result.run_id)
    assert isinstance(scores.manifest, RunManifest)
    assert manifest_form(scores.manifest) == stored
    assert json.dumps(manifest_form(scores.manifest), sort_keys=True) == json.dumps(
        stored, sort_keys=True
    )
    assert scores.manifest.market_store == MarketStoreRef(**stored["market_store"])
    assert scores.manifest.identity.store_version == stored["identity"]["store_version"]
    assert set(scores.manifest.forecasters) == {"market", "constant"}
    assert all(isinstance(r.usage, Usage) for r in scores.rows)


def test_run_manifest_of_keeps_unknown_keys_and_the_layout_version():
    stored = {
        "identity": {"store_version": "m-1"},
        "forecasters": {},
        "market_store": {"version": "m-1", "root": "/m"},
        "archive": None,
        "scoring_policies": {"outcome": "exclude-non-binary"},
        "git_revision": None,
        "python": "3.11.7",
        "packages": {},
        "sweep": "nightly",
        "runs": ["r-1", "r-2"],
    }
    m = manifest_of(stored)
    assert m.version == 1 and m.extra == {"sweep": "nightly", "runs": ["r-1", "r-2"]}
    assert manifest_form(m) == stored and list(manifest_form(m)) == list(stored)
    later = manifest_of({**stored, "manifest_version": 2})
    assert later.version == 2 and manifest_form(later) == {**stored, "manifest_version": 2}
    assert manifest_of(manifest_form(m)) == m
    older = manifest_of({"identity": {}, "market_store": {"version": "v", "root": "/r"}})
    assert (older.archive, older.git_revision, older.scoring_policies) == (None, None, {})


def test_a_scored_rows_usage_is_a_usage_record_equal_and_hashable_by_content():
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    pairs = (("model", "m"), ("prompt_tokens", 10), ("latency_s", 0.5))
    given = ScoredRow("f", "m1", t0, "1.0", "t", 0.4, None, 1.0, 0.5, usage=pairs)
    assert isinstance(given.usage, Usage) and dict(given.usage) == dict(pairs)
    same = ScoredRow("f", "m1", t0, "1.0", "t", 0.4, None, 1.0, 0.5, usage=Usage.of(dict(pairs)))
    assert given == same and hash(given) == hash(same) and len({given, same}) == 1
    other = ScoredRow("f", "m1", t0, "1.0", "t", 0.4, None, 1.0, 0.5, usage={"model": "x"})
    assert other != given
    assert ScoredRow("f", "m1", t0, "1.0", "t", 0.4, None, 1.0, 0.5).usage == Usage() == {}


def test_the_run_identity_is_a_record_whose_stored_form_is_the_pinned_mapping():
    from hindcast.records import RunIdentity
    from hindcast.replay.identity import run_id, run_identity

    spec = replay.spec_from_mapping(
        {
            "store": SAMPLE_MARKETS,
            "forecasters": ["market"],
            "fractions": [0.5],
            "vector_search": "approx",
            "exclude": ["disputed"],
        }
    )
    identity = run_identity(spec, "v1", ["b", "a"], "s-1")
    assert isinstance(identity, RunIdentity)
    assert identity.markets == ("a", "b") and identity.store_version == "v1"
    stored = identity_form(identity)
    plain = identity_form(
        run_identity(replay.spec_from_mapping({"store": SAMPLE_MARKETS}), "v1", ["a"], None)
    )
    assert list(stored) == [*plain, "vector_search", "nprobe", "exclude"] and len(plain) == 11
    assert stored["markets"] == ["a", "b"] and stored["nprobe"] is None
    assert stored["exclude"] == ["disputed"] and identity_of(stored) == identity
    assert run_id(identity) == run_id(json.loads(json.dumps(stored)))
