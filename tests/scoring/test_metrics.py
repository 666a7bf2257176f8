"""Metrics against hand-computed values and independent implementations (scikit-learn)."""

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss, log_loss

from hindcast.scoring import metrics

RNG = np.random.default_rng(7)
P = RNG.uniform(0.02, 0.98, 500)
O = (RNG.uniform(0, 1, 500) < P).astype(float)  # noqa: E741  (outcomes, beside P)


def test_brier_by_hand_and_against_sklearn():
    assert metrics.brier([0.8, 0.3], [1, 0]).tolist() == pytest.approx([0.04, 0.09])
    assert metrics.brier(P, O).mean() == pytest.approx(brier_score_loss(O, P), abs=1e-15)


def test_log_score_against_sklearn_and_the_clipping_policy():
    assert -metrics.log_score(P, O).mean() == pytest.approx(log_loss(O, P), rel=1e-12)
    assert metrics.log_score([0.25], [1])[0] == pytest.approx(np.log(0.25))
    assert metrics.log_score([0.0], [1])[0] == pytest.approx(np.log(metrics.LOG_CLIP))
    assert np.isfinite(metrics.log_score([1.0], [0])[0])


def test_accuracy_gives_half_a_point_at_one_half():
    assert metrics.accuracy([0.9, 0.2, 0.5, 0.6], [1, 1, 0, 0]).tolist() == [1.0, 0.0, 0.5, 0.0]


def test_ece_by_hand():
    # bin [0.1,0.2): p=0.1,0.1 outcomes 0,1 → |0.1−0.5|; bin [0.9,1]: p=0.9 outcome 1 → 0.1
    assert metrics.ece([0.1, 0.1, 0.9], [0, 1, 1]) == pytest.approx(2 / 3 * 0.4 + 1 / 3 * 0.1)
    table = metrics.reliability_table([0.1, 0.1, 0.9, 1.0], [0, 1, 1, 1])
    assert [b.n for b in table] == [0, 2, 0, 0, 0, 0, 0, 0, 0, 2]
    assert table[9].mean_probability == pytest.approx(0.95) and table[9].observed_frequency == 1.0


def test_skill_is_undefined_against_a_perfect_reference():
    assert metrics.skill(0.1, 0.2) == pytest.approx(0.5)
    assert metrics.skill(0.1, 0.0) is None


# A fractional outcome (Manifold MKT, e.g. 0.73): scored by Brier and the log score as it is,
# left out of accuracy (no side won), averaged into the calibration table's observed frequency.
FRACTIONAL_P = [0.9, 0.2, 0.5, 0.8, 0.6, 0.3]
FRACTIONAL_O = [1.0, 0.73, 0.0, 0.25, 0.0, 1.0]


def _independent_accuracy(p: list[float], o: list[float]) -> tuple[float, int, int]:
    """Plain loops: right side 1, wrong 0, 0.5 at p = 0.5; only outcomes exactly 0 or 1."""
    points, counted, left_out = 0.0, 0, 0
    for pi, oi in zip(p, o):
        if oi not in (0.0, 1.0):
            left_out += 1
            continue
        counted += 1
        points += 0.5 if pi == 0.5 else float((pi > 0.5) == (oi == 1.0))
    return points / counted, counted, left_out


def test_accuracy_counts_binary_outcomes_only_and_says_how_many_fractional_were_left_out():
    value, counted, left_out = _independent_accuracy(FRACTIONAL_P, FRACTIONAL_O)
    got = metrics.binary_accuracy(FRACTIONAL_P, FRACTIONAL_O)
    assert (got.value, got.n, got.fractional_left_out) == (pytest.approx(value), counted, left_out)
    assert (counted, left_out) == (4, 2)  # 0.9→1 right, 0.5→0 half, 0.6→0 wrong, 0.3→1 wrong
    assert value == pytest.approx(1.5 / 4)
    per_row = metrics.accuracy(FRACTIONAL_P, FRACTIONAL_O)
    assert np.isnan(per_row[[1, 3]]).all()  # 0.73 and 0.25 are neither "yes" nor "no"
    only_fractional = metrics.binary_accuracy([0.7], [0.73])
    assert (only_fractional.value, only_fractional.n, only_fractional.fractional_left_out) == (
        None,
        0,
        1,
    )


def test_brier_and_log_score_use_the_fraction_itself():
    for p, o in zip(FRACTIONAL_P, FRACTIONAL_O):
        assert metrics.brier([p], [o])[0] == pytest.approx((p - o) ** 2)
        expected = o * np.log(p) + (1 - o) * np.log(1 - p)
        assert metrics.log_score([p], [o])[0] == pytest.approx(expected)


def test_calibration_averages_a_fraction_into_the_observed_frequency():
    # bin [0.7, 0.8): p = 0.7 with outcomes 0.73 and 0.0 → observed 0.365 (not 0: "no" twice)
    table = metrics.reliability_table([0.7, 0.7], [0.73, 0.0])
    assert table[7].n == 2 and table[7].observed_frequency == pytest.approx(0.365)
    assert metrics.ece([0.7, 0.7], [0.73, 0.0]) == pytest.approx(abs(0.7 - 0.365))
