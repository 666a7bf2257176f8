"""Fixtures shared by every test package. Only what the repository ships is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import write_sample_headlines


@pytest.fixture(scope="session")
def sample_headline_files(tmp_path_factory) -> list[Path]:
    """The 46,809 shipped real headlines (archive/sample) written back as `headlines`-format
    JSONL inputs, one `news_YYYY-MM.jsonl` per creation month, once per test session."""
    return write_sample_headlines(tmp_path_factory.mktemp("sample-headlines"))


@pytest.fixture(scope="session")
def pg_server():
    """A real PostgreSQL server started for this session (tests/pg.py), stopped by pid at the end."""
    from tests import pg

    bin_dir = pg.pg_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL server binaries not installed (apt-get install postgresql; .ci/run installs it)")
    server = pg.start(bin_dir)
    try:
        yield server
    finally:
        pg.stop(server)


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path) -> str:
    """A new, empty run database URL on each backend: a SQLite file, a new PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.db'}"
    return request.getfixturevalue("pg_server").create_database()
