"""Fixtures shared by every test package."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import SHARED_DATA


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (SHARED_DATA / "polymarket" / "markets.jsonl").exists():
        pytest.fail(f"the shared real data is missing at {SHARED_DATA} (set HINDCAST_SHARED_DATA)")
    return SHARED_DATA
