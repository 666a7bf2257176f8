"""The service config: parsed once, paths relative to the file, precise refusals."""

from __future__ import annotations

from datetime import timedelta

import pytest

from hindcast.errors import HindcastError
from hindcast.schedule.config import ScheduleError, load
from tests.helpers import ROOT
from tests.schedule.conftest import CONFIG, write_config


def test_the_test_config_parses_into_its_jobs(tmp_path):
    config = load(write_config(tmp_path, "http://127.0.0.1:1"))
    assert config.jobs == ("pull", "sweeps", "export")
    assert config.db_url == f"sqlite:///{tmp_path / 'runs' / 'hindcast.db'}"
    assert config.lock == tmp_path / "runs" / "hindcast.schedule.lock"
    assert config.markets.lookback == timedelta(days=2) and config.every["pull"] == timedelta(
        hours=1
    )
    spec = config.sweep("baselines").spec
    assert (
        spec.store == tmp_path / "markets" / "store"
    )  # the [markets] store, as no sweep store is given
    assert spec.forecasters == ("market", "constant", "base-rate") and spec.fractions == (0.5, 0.9)


def test_a_sweep_spec_file_in_the_sweep_spec_layout(tmp_path):
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "b.toml").write_text(
        '[cutoffs]\nfractions = [0.25]\n[[forecasters]]\nspec = "constant"\n'
    )
    text = CONFIG.split("[[sweeps]]")[0] + '[[sweeps]]\nname = "b"\nspec = "sweeps/b.toml"\n'
    (tmp_path / "hindcast.toml").write_text(text.format(url="http://x"))
    spec = load(tmp_path / "hindcast.toml").sweep("b").spec
    assert spec.forecasters == ("constant",) and spec.fractions == (0.25,)


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            '\n[[leaderboards]]\nsweep = "nope"\nout = "x"\n',
            "names sweep 'nope', which is not configured",
        ),
        (
            '\n[[sweeps]]\nname = "baselines"\n[sweeps.cutoffs]\nfractions = [0.5]\n',
            "a sweep name is used twice",
        ),
        ('\n[[sweeps]]\nname = "lim"\n[sweeps.markets]\nlimit = 3\n', "limit is refused"),
        (
            '\n[[sweeps]]\nname = "sub"\n[[sweeps.forecasters]]\nspec = "constant"\nmarkets = 2\n',
            "subsets is refused",
        ),
        ('\n[[sweeps]]\nname = "v"\n[sweeps.markets]\nversion = "m-1"\n', "version is refused"),
        (
            '\n[[sweeps]]\nname = "s"\n[sweeps.archive]\nroot = "a"\nsnapshot = "a-1"\n',
            "snapshot is refused",
        ),
        (
            '\n[[leaderboards]]\nsweep = "baselines"\nout = "x"\nformats = ["pdf"]\n',
            "unknown format",
        ),
    ],
)
def test_refusals_name_the_problem(tmp_path, extra, message):
    with pytest.raises(HindcastError, match=message):
        load(write_config(tmp_path, "http://x", extra))


def test_unknown_keys_and_bad_intervals_are_refused(tmp_path):
    path = write_config(tmp_path, "http://x")
    path.write_text(path.read_text().replace('pull = "1h"', 'pull = "90m"'))
    with pytest.raises(ScheduleError, match=r"\[jobs\] pull: offset '90m'"):
        load(path)
    path.write_text(path.read_text().replace('pull = "90m"', 'pull = "1h"\ncleanup = "1d"'))
    with pytest.raises(ScheduleError, match=r"\[jobs\]: unknown key cleanup"):
        load(path)


def test_the_shipped_example_parses():
    config = load(ROOT / "hindcast.example.toml")
    assert config.jobs == ("pull", "inbox", "sweeps", "export")
    assert config.sweep("baselines").spec.store == ROOT / "markets" / "store"


def test_a_spec_file_and_inline_sections_together_are_refused(tmp_path):
    extra = '\n[[sweeps]]\nname = "both"\nspec = "x.toml"\n[sweeps.cutoffs]\nfractions = [0.5]\n'
    with pytest.raises(ScheduleError, match='give spec = "file" or inline sections, not both'):
        load(write_config(tmp_path, "http://x", extra))
