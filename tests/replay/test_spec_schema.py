"""One spec schema: field names are the names users type (TOML keys, `hindcast.sweep`
settings); the run identity and the service's recorded batch specs keep their bytes."""

from hindcast.replay.spec import run_id, run_identity, spec_from_mapping
from hindcast.schedule.sweeps import spec_json, spec_of

KNOWN = {"store": "markets/sample", "version": "v1", "ids": ["b", "a"], "forecasters": ["market", "constant:p=0.3"],
         "subsets": [["constant:p=0.3", 2]], "fractions": [0.5, 0.25], "offsets": ["7d"],
         "at": ["2025-11-01T00:00:00Z"], "hindcast_rule": True, "repeats": 2, "seed": 7, "concurrency": 3}


def test_a_known_spec_keeps_its_run_id():
    """Computed with the spec before its fields were renamed (markets, store_version,
    market_ids, instants): run ids must not move, or every stored run would be re-run."""
    spec = spec_from_mapping(KNOWN)
    identity = run_identity(spec, "v1", ["b", "a"], "s-1")
    assert list(identity) == ["store_version", "snapshot", "markets", "forecasters", "subsets", "fractions",
                              "offsets", "instants", "hindcast_rule", "repeats", "seed"]
    assert run_id(identity) == "r-75e3c567bff6"


def test_recorded_batch_specs_keep_the_former_keys_and_read_back():
    """The service records each batch's spec as JSON; a database written before the rename
    must read back, and new records keep the same keys."""
    spec = spec_from_mapping(KNOWN)
    data = spec_json(spec)
    assert {"markets", "store_version", "market_ids", "instants"} <= set(data)
    assert not {"store", "version", "ids", "at"} & set(data)
    assert data["markets"] == "markets/sample" and data["market_ids"] == ["b", "a"]
    assert data["instants"] == ["2025-11-01T00:00:00Z"]
    assert spec_of(data) == spec
