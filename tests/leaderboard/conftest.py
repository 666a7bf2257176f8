from __future__ import annotations

import pytest

from tests.leaderboard.sample_runs import load, sweep_runs


@pytest.fixture(scope="session")
def swept(tmp_path_factory):
    """(database URL, {"wide": run id, "narrow": run id}) of two real sweeps."""
    return sweep_runs(tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="session")
def wide(swept):
    url, ids = swept
    return load(url, ids["wide"])


@pytest.fixture(scope="session")
def narrow(swept):
    url, ids = swept
    return load(url, ids["narrow"])
