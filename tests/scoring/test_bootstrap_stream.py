"""The compiled way of `bootstrap.draw_weights` makes numpy's bounded draws itself from the
PCG64's raw outputs (Lemire's method, counted as they are made): the counts must be those of
`rng.integers(0, n, dtype=np.int32)` computed here, rejected draws included, and the stream must
be left exactly where `integers` leaves it (the next draws of the same generator equal)."""

from __future__ import annotations

import numpy as np
import pytest

from hindcast.scoring import bootstrap


def numpy_counts(n: int, replicates: int, rng: np.random.Generator) -> np.ndarray:
    picks = rng.integers(0, n, size=(replicates, n), dtype=np.int32).astype(np.int64)
    flat = (picks + (np.arange(replicates) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=replicates * n).reshape(replicates, n).astype(float)


def rejections(n: int, replicates: int, seed: int) -> int:
    """How many raw 32-bit draws numpy's rule rejects before replicates × n are accepted."""
    raw = np.random.default_rng(seed).bit_generator.random_raw(replicates * n).view(np.uint32)
    m = raw.astype(np.uint64) * np.uint64(n)
    rejected = (m & np.uint64(0xFFFFFFFF)) < np.uint64((2**32 - n) % n)
    accepted = np.cumsum(~rejected)
    return int(rejected[: int(np.searchsorted(accepted, replicates * n)) + 1].sum())


@pytest.mark.parametrize(
    ("n", "replicates", "seed"),
    [
        (2, 5, 1),
        (3, 7, 2),
        (57, 11, 3),
        (2001, 3, 4),
        (2001, 4, 5),
        (49_999, 41, 6),
        (65_536, 9, 7),
    ],
)
def test_compiled_draws_are_numpys_and_leave_the_stream_as_it_does(
    monkeypatch, n, replicates, seed
):
    monkeypatch.setattr(bootstrap, "COMPILED", 1)  # the compiled way at every size here
    ours, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    got = bootstrap.draw_weights(n, replicates, ours)
    assert np.array_equal(got, numpy_counts(n, replicates, theirs))
    assert ours.bit_generator.state == theirs.bit_generator.state
    assert np.array_equal(ours.integers(0, 1000, 99), theirs.integers(0, 1000, 99))
    assert np.array_equal(ours.random(5), theirs.random(5))


def test_the_cases_above_include_rejected_draws_and_an_odd_count():
    assert rejections(49_999, 41, 6) > 0
    assert (2001 * 3) % 2 == 1  # ends on the low half of an output: the high half is held


def test_a_stream_holding_a_half_output_is_drawn_the_plain_way(monkeypatch):
    monkeypatch.setattr(bootstrap, "COMPILED", 1)
    ours, theirs = np.random.default_rng(8), np.random.default_rng(8)
    ours.integers(0, 10, 1, dtype=np.int32), theirs.integers(0, 10, 1, dtype=np.int32)
    assert ours.bit_generator.state["has_uint32"] == 1
    assert np.array_equal(bootstrap.draw_weights(300, 7, ours), numpy_counts(300, 7, theirs))
    assert ours.bit_generator.state == theirs.bit_generator.state
