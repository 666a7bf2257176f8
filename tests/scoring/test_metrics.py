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
