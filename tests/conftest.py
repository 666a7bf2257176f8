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
