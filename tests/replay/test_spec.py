from datetime import timedelta

import pytest

from hindcast.errors import HindcastError
from hindcast.replay.spec import ReplaySpec, load_toml, parse_offset, run_id, run_identity, spec_from_mapping
from tests.helpers import SAMPLE_MARKETS, at


def test_offsets_parse_and_bad_ones_are_refused():
    assert parse_offset("7d") == timedelta(days=7) and parse_offset("12h") == timedelta(hours=12)
    for bad in ("0d", "7", "d7", "-1d", "7y"):
        with pytest.raises(HindcastError, match="offset"):
            parse_offset(bad)


def test_toml_spec_round_trip_with_paths_relative_to_the_file(tmp_path):
    (tmp_path / "spec.toml").write_text(
        '[markets]\nstore = "m"\ntopics = ["politics"]\nresolved_after = 2025-10-01\nlimit = 5\n'
        '[cutoffs]\nfractions = [0.5]\noffsets = ["7d"]\nat = [2025-11-01T00:00:00Z]\n'
        '[[forecasters]]\nspec = "market"\n[[forecasters]]\nspec = "constant:p=0.3"\nmarkets = 2\n'
        '[run]\nrepeats = 3\nseed = 9\nmax_failures = 0\n')
    spec = spec_from_mapping(load_toml(tmp_path / "spec.toml"))
    assert spec.markets == tmp_path / "m" and spec.topics == ("politics",) and spec.limit == 5
    assert spec.resolved_after == at("2025-10-01T00:00:00") and spec.instants == (at("2025-11-01T00:00:00"),)
    assert spec.forecasters == ("market", "constant:p=0.3") and spec.subset_sizes == {"constant:p=0.3": 2}
    assert (spec.repeats, spec.seed, spec.max_failures, spec.offsets) == (3, 9, 0, ("7d",))


@pytest.mark.parametrize("body, message", [
    ('[markets]\nstore = "m"\nbogus = 1\n', "unknown spec key"),
    ('[markets\n', "spec file"),
    ('[markets]\nstore = "m"\n[cutoffs]\nfractions = [1.5]\n', "lifetime fraction"),
    ('[markets]\nstore = "m"\n[[forecasters]]\nspec = "market"\n[[forecasters]]\nspec = "market"\n', "named twice"),
    ('[markets]\nstore = "m"\n[cutoffs]\nat = [2025-11-01T00:00:00]\n', "naive"),
])
def test_bad_spec_files_fail_clearly(tmp_path, body, message):
    (tmp_path / "spec.toml").write_text(body)
    with pytest.raises(HindcastError, match=message):
        spec_from_mapping(load_toml(tmp_path / "spec.toml"))


def test_run_id_follows_inputs_and_schedule_not_concurrency():
    a = ReplaySpec(markets=SAMPLE_MARKETS, concurrency=1)
    b = ReplaySpec(markets=SAMPLE_MARKETS, concurrency=32, max_failures=3)
    c = ReplaySpec(markets=SAMPLE_MARKETS, repeats=2)
    ident = lambda s: run_id(run_identity(s, "m-1", ["x"], None))
    assert ident(a) == ident(b) != ident(c)
    assert run_id(run_identity(a, "m-2", ["x"], None)) != ident(a)
