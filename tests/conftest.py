"""Fixtures shared by every test package. Only what the repository ships is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import write_sample_headlines


def pytest_addoption(parser, pluginmanager):
    """Without pytest-xdist (`pytest -p no:xdist`, or not installed) the suite runs in this
    process: pyproject's addopts `-n logical --maxprocesses 4 --dist loadfile` are accepted and
    ignored then."""
    if pluginmanager.has_plugin("xdist"):
        return
    group = parser.getgroup("xdist", "xdist not loaded: tests run in this process")
    # _addoption: pytest reserves lowercase short flags (-n) for plugins; this stands in for one
    group._addoption("-n", "--numprocesses", dest="numprocesses", default=None, help="ignored")
    group.addoption("--maxprocesses", dest="maxprocesses", default=None, help="ignored")
    group.addoption("--dist", dest="dist", default="no", help="ignored")


@pytest.fixture(scope="session")
def sample_headline_files(tmp_path_factory) -> list[Path]:
    """The 46,809 shipped real headlines (archive/sample) written back as `headlines`-format
    JSONL inputs, one `news_YYYY-MM.jsonl` per creation month, once per test session."""
    return write_sample_headlines(tmp_path_factory.mktemp("sample-headlines"))


@pytest.fixture(scope="session")
def pg_server():
    """A real PostgreSQL server started for this session (tests/pg.py),
    stopped by pid at the end."""
    from tests import pg

    bin_dir = pg.pg_bin()
    if bin_dir is None:
        pytest.skip(
            "PostgreSQL server binaries not installed (apt-get install postgresql; .ci/run "
            "installs it)"
        )
    server = pg.start(bin_dir)
    try:
        yield server
    finally:
        pg.stop(server)


@pytest.fixture(params=["sqlite", "postgresql"])
def new_db_url(request, tmp_path):
    """On each backend, a function returning the URL of a new, empty run database: a new SQLite
    file, or a new database on the session's PostgreSQL server."""
    if request.param == "sqlite":
        names = iter(range(1_000_000))
        return lambda: f"sqlite:///{tmp_path / f'runs{next(names)}.db'}"
    return request.getfixturevalue("pg_server").create_database


@pytest.fixture
def db_url(new_db_url) -> str:
    """A new, empty run database URL on each backend: a SQLite file, a new PostgreSQL database."""
    return new_db_url()
