"""CORP reliability against an independent pool-adjacent-violators and the reliabilitydiag
decomposition written out again, a hand-worked example, and the miscalibration test's power."""

import numpy as np
import pytest

from hindcast.analysis import MarketFacts, Settings, corp
from tests.analysis.rows import row


def pav(p, y):
    """Textbook PAV (blocks merged while a later mean is below an earlier
    one), ties pooled first."""
    order = sorted(set(p))
    blocks = [
        [sum(yi for pi, yi in zip(p, y) if pi == v), sum(1 for pi in p if pi == v), [v]]
        for v in order
    ]
    merged = []
    for block in blocks:
        merged.append(block)
        while len(merged) > 1 and merged[-2][0] / merged[-2][1] > merged[-1][0] / merged[-1][1]:
            last = merged.pop()
            merged[-1] = [merged[-1][0] + last[0], merged[-1][1] + last[1], merged[-1][2] + last[2]]
    value = {v: s / n for s, n, vs in merged for v in vs}
    return [value[pi] for pi in p]


def reference(p, y):
    n = len(p)
    cp = pav(p, y)
    base = sum(y) / n
    score = sum((a - b) ** 2 for a, b in zip(p, y)) / n
    recal = sum((a - b) ** 2 for a, b in zip(cp, y)) / n
    unc = sum((base - b) ** 2 for b in y) / n
    return score, score - recal, unc - recal, unc


def test_hand_worked_example():
    # sorted outcomes 0, 1, 0, 1: the middle pair violates and pools to 0.5
    p, y = [0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1]
    assert list(corp.recalibrate(p, y)) == [0.0, 0.5, 0.5, 1.0]
    d = corp.decompose(p, y)
    assert (d.score, d.mcb, d.dsc, d.unc) == pytest.approx((0.275, 0.15, 0.125, 0.25), abs=1e-15)


@pytest.mark.parametrize("seed", range(6))
def test_decomposition_matches_reliabilitydiag_formulas_and_sums_to_the_mean_score(seed):
    rng = np.random.default_rng(seed)
    n = 150
    p = np.round(rng.random(n), 2)  # rounded: many tied forecasts
    y = (rng.random(n) < np.clip(p + rng.normal(0, 0.2, n), 0, 1)).astype(float)
    assert list(corp.recalibrate(p, y)) == pytest.approx(pav(list(p), list(y)), abs=1e-12)
    d = corp.decompose(p, y)
    assert (d.score, d.mcb, d.dsc, d.unc) == pytest.approx(reference(list(p), list(y)), abs=1e-12)
    assert d.mcb - d.dsc + d.unc == pytest.approx(d.score, abs=1e-15)
    assert d.score == pytest.approx(float(np.mean((p - y) ** 2)), abs=1e-15)
    assert d.mcb >= -1e-15 and d.dsc >= -1e-15


def test_the_miscalibration_test_rejects_an_overconfident_forecaster_and_not_a_calibrated_one():
    rng = np.random.default_rng(11)
    q = rng.random(300)
    y = (rng.random(300) < q).astype(float)
    rows = [row("calibrated", f"m{i}", 0, float(q[i]), float(y[i])) for i in range(300)]
    rows += [
        row("overconfident", f"m{i}", 0, float(np.clip(q[i] * 2 - 0.5, 0.01, 0.99)), float(y[i]))
        for i in range(300)
    ]
    found = {
        c.forecaster: c
        for c in corp.corp(rows, MarketFacts(), Settings(replicates=200, band_draws=300))
    }
    assert found["overconfident"].p_value < 0.01 < 0.05 < found["calibrated"].p_value
    calibrated = found["calibrated"]
    assert (
        calibrated.mcb_low is not None and 0 <= calibrated.mcb_low <= calibrated.mcb_high
    )  # 300 markets: intervals
    inside = [
        c.band_low <= c.p <= c.band_high for c in calibrated.curve
    ]  # the band surrounds the diagonal
    assert sum(inside) / len(inside) > 0.8
    assert found["calibrated"].ece >= 0  # fixed-bin ECE is kept beside it
