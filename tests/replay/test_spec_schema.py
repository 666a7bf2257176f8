"""One spec schema: field names are the names users type (TOML keys, `hindcast.sweep`
settings); the run identity and the service's recorded batch specs keep their bytes."""

from hindcast.replay.identity import run_id, run_identity
from hindcast.replay.spec import spec_from_mapping
from hindcast.runs import identity_form
from hindcast.schedule.sweeps import spec_json, spec_of

KNOWN = {
    "store": "markets/sample",
    "version": "v1",
    "ids": ["b", "a"],
    "forecasters": ["market", "constant:p=0.3"],
    "subsets": [["constant:p=0.3", 2]],
    "fractions": [0.5, 0.25],
    "offsets": ["7d"],
    "at": ["2025-11-01T00:00:00Z"],
    "hindcast_rule": True,
    "repeats": 2,
    "seed": 7,
    "concurrency": 3,
}


def test_a_known_spec_keeps_its_run_id():
    """Computed with the spec before its fields were renamed (markets, store_version,
    market_ids, instants): run ids must not move, or every stored run would be re-run."""
    spec = spec_from_mapping(KNOWN)
    identity = run_identity(spec, "v1", ["b", "a"], "s-1")
    assert list(identity_form(identity)) == [
        "store_version",
        "snapshot",
        "markets",
        "forecasters",
        "subsets",
        "fractions",
        "offsets",
        "instants",
        "hindcast_rule",
        "repeats",
        "seed",
    ]
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


# -- the model validates itself, however it is built ----------------------------------------------
def test_fields_given_directly_are_checked_and_converted_like_a_mapping():
    """Before: a ReplaySpec built from fields took any value (a string concurrency broke
    later with a TypeError; a list of ISO instants stayed text)."""
    import pytest

    from hindcast.errors import ConfigError
    from hindcast.replay.spec import ReplaySpec
    from tests.helpers import SAMPLE_MARKETS, at

    spec = ReplaySpec(
        store=str(SAMPLE_MARKETS), at=["2025-11-01T00:00:00Z"], ids=["a"], fractions=[1]
    )
    assert (
        spec.store == SAMPLE_MARKETS
        and spec.at == (at("2025-11-01T00:00:00"),)
        and spec.ids == ("a",)
    )
    assert spec.fractions == (1.0,) and spec == spec_from_mapping(
        {"store": SAMPLE_MARKETS, "ids": ["a"], "fractions": [1], "at": ["2025-11-01T00:00:00Z"]}
    )
    with pytest.raises(
        ConfigError, match=r"invalid sweep spec: concurrency must be an integer ≥ 1, got '8'"
    ):
        ReplaySpec(store=SAMPLE_MARKETS, concurrency="8")
    with pytest.raises(
        ConfigError,
        match=r"invalid sweep spec: unknown spec key max_cots \(did you mean max_cost\?\)",
    ):
        ReplaySpec(store=SAMPLE_MARKETS, max_cots=1.0)
    with pytest.raises(ConfigError, match=r"invalid sweep spec: at: .* without a zone"):
        ReplaySpec(store=SAMPLE_MARKETS, at=["2025-11-01T00:00:00"])


def test_replace_keeps_validating():
    import dataclasses

    import pytest

    from hindcast.errors import ConfigError
    from hindcast.replay.spec import ReplaySpec
    from tests.helpers import SAMPLE_MARKETS

    spec = ReplaySpec(store=SAMPLE_MARKETS)
    assert dataclasses.replace(spec, ids=("x",)).ids == ("x",)
    with pytest.raises(ConfigError, match=r"concurrency must be an integer ≥ 1, got '8'"):
        dataclasses.replace(spec, concurrency="8")  # before: a TypeError from a comparison


# -- one name per concept ------------------------------------------------------------------------
def test_every_field_is_a_toml_key_a_setting_and_a_sweep_flag_of_its_own_name():
    """`hindcast sweep --x-y` is the parameter and the field `x_y` (FLAGS lists the few flags
    named otherwise); the TOML layout fills every field and nothing else."""
    import inspect

    from hindcast.cli.sweep import sweep
    from hindcast.replay.layout import FORECASTER_KEYS, LAYOUT
    from hindcast.replay.spec import FIELDS, ReplaySpec

    params = inspect.signature(sweep).parameters
    for name in FIELDS:
        assert name in params, f"hindcast sweep has no parameter named after the field {name}"
        assert params[name].default.param_decls[0].split("/")[0] == ReplaySpec.flag(name), name
    filled = [f for keys in LAYOUT.values() for f in keys.values()] + list(FORECASTER_KEYS.values())
    assert sorted(filled) == sorted(FIELDS)


def test_a_service_sweep_uses_the_same_names(tmp_path):
    """An inline [[sweeps]] is the spec layout under `sweeps.`: the same keys, the same spec."""
    from hindcast.replay.layout import load_toml
    from hindcast.schedule.config import load
    from tests.helpers import SAMPLE_MARKETS

    tables = (
        f'[markets]\nstore = "{SAMPLE_MARKETS}"\ntopics = ["politics"]\n[cutoffs]\nfractions = '
        '[0.5]\nat = [2025-11-01T00:00:00Z]\n[[forecasters]]\nspec = "market"\n[run]\nseed = 3\n'
    )
    (tmp_path / "spec.toml").write_text(tables, encoding="utf-8")
    service = tables.replace("[markets]", "[sweeps.markets]").replace(
        "[cutoffs]", "[sweeps.cutoffs]"
    )
    service = service.replace("[[forecasters]]", "[[sweeps.forecasters]]").replace(
        "[run]", "[sweeps.run]"
    )
    (tmp_path / "hindcast.toml").write_text('[[sweeps]]\nname = "s"\n' + service, encoding="utf-8")
    assert load(tmp_path / "hindcast.toml").sweep("s").spec == spec_from_mapping(
        load_toml(tmp_path / "spec.toml")
    )
