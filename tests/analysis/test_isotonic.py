"""hindcast's isotonic fit (hindcast/analysis/isotonic.py) gives scipy's
`isotonic_regression(x, weights=w).x` bit for bit: scipy (a dependency, imported here as the
reference) against the line-for-line translation of its algorithm."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import isotonic_regression

from hindcast.analysis import corp, isotonic

VALUES = st.one_of(
    st.floats(0.0, 1.0, allow_nan=False),
    st.sampled_from([0.0, 1 / 3, 0.5, 2 / 3, 1.0]),  # ties: pooled equal values
)
WEIGHTS = st.one_of(st.integers(1, 6).map(float), st.floats(1e-3, 50.0, allow_nan=False))


def _scipy(x, w) -> bytes:
    return isotonic_regression(np.array(x), weights=np.array(w), increasing=True).x.tobytes()


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(VALUES, WEIGHTS), min_size=1, max_size=80))
def test_the_translation_gives_scipy_s_bits(pairs):
    x, w = [p[0] for p in pairs], [p[1] for p in pairs]
    assert np.array(isotonic.fit(x, w)).tobytes() == _scipy(x, w)


def test_long_inputs_on_both_sides_of_the_threshold():
    rng = np.random.default_rng(39)
    for n in (isotonic.SMALL - 1, isotonic.SMALL, isotonic.SMALL + 1, 5_000):
        x, w = np.sort(rng.random(n)) + rng.normal(0, 0.2, n), rng.integers(1, 9, n).astype(float)
        expected = _scipy(x, w)
        assert np.array(isotonic.fit(x, w)).tobytes() == expected
        assert np.array(isotonic.pava(x.tolist(), w.tolist())).tobytes() == expected


def test_corp_recalibration_of_a_resample_is_scipy_s():
    rng = np.random.default_rng(7)
    p = rng.integers(0, 40, 300) / 40
    y = (rng.random(300) < p).astype(float)
    w = rng.integers(0, 3, 300).astype(float)  # resample counts: some rows drawn 0 times
    values, inverse = np.unique(p, return_inverse=True)
    weight, hits = np.bincount(inverse, w, len(values)), np.bincount(inverse, w * y, len(values))
    kept = weight > 0
    expected = np.full(len(values), np.nan)
    expected[kept] = isotonic_regression(hits[kept] / weight[kept], weights=weight[kept]).x
    assert corp.recalibrate(p, y, w).tobytes() == expected[inverse].tobytes()
