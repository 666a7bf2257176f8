"""The permutation test's swaps (`pairwise.swaps`) read from the raw stream must be numpy's
`rng.integers(0, 2, size=…).astype(float)` of the same stream, computed here, at any shape."""

from __future__ import annotations

import numpy as np
import pytest

from hindcast.analysis.pairwise import swaps


@pytest.mark.parametrize(("rows", "columns"), [(1, 1), (3, 5), (2000, 7), (17, 1001), (64, 64)])
@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_swaps_are_numpys_coin_flips(rows, columns, seed):
    want = np.random.default_rng([seed, 9]).integers(0, 2, size=(rows, columns)).astype(float)
    got = swaps(np.random.default_rng([seed, 9]), rows, columns)
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_a_stream_holding_a_half_output_is_drawn_the_plain_way():
    ours, theirs = np.random.default_rng(4), np.random.default_rng(4)
    ours.integers(0, 3, 1, dtype=np.int32), theirs.integers(0, 3, 1, dtype=np.int32)
    want = theirs.integers(0, 2, size=(5, 9)).astype(float)
    assert np.array_equal(swaps(ours, 5, 9), want)
