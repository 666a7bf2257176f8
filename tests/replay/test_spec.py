from datetime import timedelta

import pytest

from hindcast.errors import HindcastError
from hindcast.replay.identity import run_id, run_identity
from hindcast.replay.layout import load_toml
from hindcast.replay.spec import ReplaySpec, parse_offset, spec_from_mapping
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
        "[run]\nrepeats = 3\nseed = 9\nmax_failures = 0\n"
    )
    spec = spec_from_mapping(load_toml(tmp_path / "spec.toml"))
    assert spec.store == tmp_path / "m" and spec.topics == ("politics",) and spec.limit == 5
    assert spec.resolved_after == at("2025-10-01T00:00:00") and spec.at == (
        at("2025-11-01T00:00:00"),
    )
    assert spec.forecasters == ("market", "constant:p=0.3") and spec.subset_sizes == {
        "constant:p=0.3": 2
    }
    assert (spec.repeats, spec.seed, spec.max_failures, spec.offsets) == (3, 9, 0, ("7d",))


@pytest.mark.parametrize(
    "body, message",
    [
        ('[markets]\nstore = "m"\nbogus = 1\n', r"unknown key bogus in \[markets\]"),
        ("[markets\n", "spec file"),
        ('[markets]\nstore = "m"\n[cutoffs]\nfractions = [1.5]\n', "lifetime fraction"),
        (
            '[markets]\nstore = "m"\n[[forecasters]]\nspec = "market"\n[[forecasters]]\nspec '
            '= "market"\n',
            "named twice",
        ),
        ('[markets]\nstore = "m"\n[cutoffs]\nat = [2025-11-01T00:00:00]\n', "naive"),
    ],
)
def test_bad_spec_files_fail_clearly(tmp_path, body, message):
    (tmp_path / "spec.toml").write_text(body)
    with pytest.raises(HindcastError, match=message):
        spec_from_mapping(load_toml(tmp_path / "spec.toml"))


def test_run_id_follows_inputs_and_schedule_not_concurrency():
    a = ReplaySpec(store=SAMPLE_MARKETS, concurrency=1)
    b = ReplaySpec(store=SAMPLE_MARKETS, concurrency=32, max_failures=3)
    c = ReplaySpec(store=SAMPLE_MARKETS, repeats=2)
    ident = lambda s: run_id(run_identity(s, "m-1", ["x"], None))
    assert ident(a) == ident(b) != ident(c)
    assert run_id(run_identity(a, "m-2", ["x"], None)) != ident(a)


# -- issue 13: the spec is validated whole, naming the file; nothing falls back silently ----------
@pytest.mark.parametrize(
    "body, message",
    [
        ('[market]\nstore = "m"\n', r"unknown table \[market\] \(did you mean \[markets\]\?\)"),
        (
            '[markets]\nstore = "m"\n[cutof]\nfractions = [0.5]\n',
            r"unknown table \[cutof\] \(did you mean \[cutoffs\]\?\)",
        ),
        (
            '[markets]\nstore = "m"\n[[forecaster]]\nspec = "market"\n',
            r"did you mean \[forecasters\]",
        ),
        (
            '[markets]\nstore = "m"\nlimt = 3\n',
            r"unknown key limt in \[markets\] \(did you mean limit\?\)",
        ),
        (
            '[markets]\nstore = "m"\n[run]\nrepeat = 2\n',
            r"unknown key repeat in \[run\] \(did you mean repeats\?\)",
        ),
        (
            '[markets]\nstore = "m"\n[run]\nrepeats = 2\n[cutoffs]\nseed = 3\n',
            r"unknown key seed in \[cutoffs\]",
        ),
        (
            '[markets]\nstore = "m"\n[[forecasters]]\nspec = '
            '"market"\n[[forecasters]]\nmarkets = 3\n',
            r"\[\[forecasters\]\] entry 2 has no spec",
        ),
        (
            '[markets]\nstore = "m"\n[[forecasters]]\nspec = "market"\nmarket = 3\n',
            r"\[\[forecasters\]\] entry 1: unknown key market \(did you mean markets\?\)",
        ),
        (
            '[markets]\nstore = "m"\n[run]\nretry_failed = "yes"\n',
            "retry_failed must be true or false",
        ),
        (
            '[markets]\nstore = "m"\n[run]\nmax_cost = -1\n',
            "max_cost must be a number of dollars ≥ 0",
        ),
        ('[markets]\nstore = "m"\n[run]\nmax_cost = "5"\n', "max_cost must be a number"),
        ('[markets]\nstore = "m"\n[run]\nmax_tokens = 0\n', r"max_tokens must be an integer ≥ 1"),
        ('[markets]\nstore = "m"\n[run]\nmax_tokens = 1.5\n', r"max_tokens must be an integer ≥ 1"),
        (
            '[markets]\nstore = "m"\n[run]\nbreaker_threshold = 0\n',
            r"breaker_threshold must be an integer ≥ 1",
        ),
        (
            '[markets]\nstore = "m"\n[run]\nconcurrency = "8"\n',
            r"concurrency must be an integer ≥ 1",
        ),
        ('[markets]\nstore = "m"\nlimit = true\n', r"limit must be an integer ≥ 1"),
        ("[markets]\nstore = 5\n", r"store must be a path"),
    ],
)
def test_a_misspelled_or_mistyped_spec_is_refused_naming_the_file(tmp_path, body, message):
    from hindcast.errors import ConfigError

    (tmp_path / "spec.toml").write_text(body, encoding="utf-8")
    with pytest.raises(ConfigError, match=message) as info:
        spec_from_mapping(load_toml(tmp_path / "spec.toml"))
    assert str(info.value).startswith(f"spec file {tmp_path / 'spec.toml'}: ") and "\n" not in str(
        info.value
    )


def test_the_run_integrity_keys_in_a_spec_file(tmp_path):
    (tmp_path / "spec.toml").write_text(
        '[markets]\nstore = "m"\n[run]\nretry_failed = true\nmax_cost = 2.5\n'
        "max_tokens = 100000\nbreaker_threshold = 3\n",
        encoding="utf-8",
    )
    spec = spec_from_mapping(load_toml(tmp_path / "spec.toml"))
    assert (spec.retry_failed, spec.max_cost, spec.max_tokens, spec.breaker_threshold) == (
        True,
        2.5,
        100000,
        3,
    )
    (tmp_path / "spec.toml").write_text(
        '[markets]\nstore = "m"\n[run]\nmax_cost = 0\n', encoding="utf-8"
    )
    assert spec_from_mapping(load_toml(tmp_path / "spec.toml")).max_cost == 0


def test_flags_are_checked_like_file_keys():
    from hindcast.errors import ConfigError

    with pytest.raises(
        ConfigError,
        match=r"invalid sweep spec: unknown spec key max_cots \(did you mean max_cost\?\)",
    ):
        spec_from_mapping({"store": SAMPLE_MARKETS, "max_cots": 1.0})
    with pytest.raises(
        ConfigError, match=r"invalid sweep spec: max_tokens \(--max-tokens\) must be an integer"
    ):
        spec_from_mapping({"store": SAMPLE_MARKETS, "max_tokens": "many"})


def test_a_misspelled_table_no_longer_sweeps_the_sample(tmp_path):
    """Before: `[market]` was ignored, so `hindcast sweep --spec` swept the shipped sample."""
    from tests.helpers import run_cli

    (tmp_path / "spec.toml").write_text(
        '[market]\nstore = "mine"\n[[forecasters]]\nspec = "constant"\n'
    )
    proc = run_cli("sweep", "--spec", str(tmp_path / "spec.toml"), "--out", str(tmp_path / "runs"))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr == (
        f"hindcast: error: spec file {tmp_path / 'spec.toml'}: unknown table [market] "
        "(did you mean [markets]?)\n"
    )
    assert not (tmp_path / "runs").exists()
