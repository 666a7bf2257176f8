"""`bootstrap.replicate_counts` skips the product weights @ counts when every market has the
same count: it must equal that product bit for bit (and replicate_means the plain quotient of
the two products), on draws of many sizes, equal and unequal counts, and subsets of rows."""

from __future__ import annotations

import numpy as np
import pytest

from hindcast.scoring import bootstrap


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))


@pytest.mark.parametrize("n", [5, 6, 57, 1001, 4000])
@pytest.mark.parametrize("per_market", [1, 2, 4, 7])
def test_equal_counts_give_the_product(n, per_market):
    weights = bootstrap.draw_weights(n, 300, bootstrap.rng_for(0, f"counts|{n}"))
    counts = np.full(n, float(per_market))
    assert same_bits(bootstrap.replicate_counts(weights, counts), weights @ counts)
    assert same_bits(bootstrap.replicate_counts(weights[:37], counts), weights[:37] @ counts)


@pytest.mark.parametrize("n", [5, 57, 1001])
def test_replicate_means_are_the_quotient_of_the_products(n):
    rng = np.random.default_rng(n)
    weights = bootstrap.draw_weights(n, 200, bootstrap.rng_for(1, f"means|{n}"))
    for repeats in (np.ones(n, int), rng.integers(1, 4, n), np.where(np.arange(n) < 2, 0, 3)):
        codes = np.repeat(np.arange(n), repeats)
        values = rng.random(codes.size)
        sums = np.array([values[codes == k].sum() for k in range(n)])
        counts = np.array([float((codes == k).sum()) for k in range(n)])
        with np.errstate(invalid="ignore", divide="ignore"):
            want = (weights @ np.bincount(codes, values, n)) / (weights @ counts)
            got = bootstrap.replicate_means(weights, codes, values)
        assert np.allclose(np.bincount(codes, values, n), sums)
        assert same_bits(got, want)
