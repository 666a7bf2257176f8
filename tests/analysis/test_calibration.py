"""Walk-forward calibration: Platt and isotonic equal scikit-learn's fits, a calibrator is fitted
on rows of markets resolved before the split only (planted test rows whose relation is inverted
would change it), too little training data gives no calibrator and says why, failures stay
failures, and the same rows give the same finding to the byte."""

from __future__ import annotations

import json
import warnings
from datetime import timedelta

import numpy as np
import pytest

from hindcast.analysis.calibration import (
    MIN_TRAIN_ROWS,
    Isotonic,
    Platt,
    calibrate,
    fit_isotonic,
    fit_platt,
    pava,
    split_rows,
)
from hindcast.analysis.ensemble import clipped_logit
from hindcast.scoring.aggregate import ScoredRow, leaderboard
from tests.helpers import at

SPLIT = at("2025-07-01T00:00:00")
START = at("2025-01-01T00:00:00")


def row(market, p, outcome, resolved, forecaster="llm", k=0, error=None, known=None):
    """A row of a market resolved at `resolved`, its outcome public at `known` (default: then)."""
    t0 = resolved - timedelta(days=10 + k)
    return ScoredRow(
        forecaster,
        market,
        t0,
        f"f={k}",
        "politics",
        p,
        error if p is None else None,
        outcome,
        0.5,
        resolved_at=resolved,
        known_at=resolved if known is None else known,
    )


def sample(rng, n, slope, first_market=0, resolved=START, forecaster="llm"):
    """n markets with two cutoffs each, outcome ~ Bernoulli(expit(slope · logit p)),
    resolved at `resolved` + i h."""
    rows = []
    for i in range(n):
        p = rng.uniform(0.03, 0.97, 2)
        y = float(rng.random() < 1 / (1 + np.exp(-slope * clipped_logit(p.mean()))))
        at_ = resolved + timedelta(hours=i)
        rows += [
            row(f"m{first_market + i:03d}", float(p[k]), y, at_, forecaster, k) for k in range(2)
        ]
    return rows


def sklearn_platt(p, y):
    from sklearn.linear_model import LogisticRegression

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = LogisticRegression(C=np.inf, solver="newton-cholesky", tol=1e-12, max_iter=1000)
        model.fit(clipped_logit(p).reshape(-1, 1), y)
    return float(model.coef_[0, 0]), float(model.intercept_[0])


def test_platt_equals_unpenalised_sklearn_logistic_regression():
    rng = np.random.default_rng(1)
    for slope in (0.5, 1.0, 2.0):
        p = rng.uniform(0.01, 0.99, 300)
        y = (rng.random(300) < 1 / (1 + np.exp(-slope * clipped_logit(p) - 0.3))).astype(float)
        fitted, reason = fit_platt(p, y)
        assert reason is None
        a, b = sklearn_platt(p, y)
        assert fitted.a == pytest.approx(a, abs=1e-6) and fitted.b == pytest.approx(b, abs=1e-6)
        assert fitted.apply([0.2, 0.7]) == pytest.approx(
            1 / (1 + np.exp(-(a * clipped_logit([0.2, 0.7]) + b))), abs=1e-7
        )


def market_like(seed: int, n: int = 427) -> tuple[np.ndarray, np.ndarray]:
    """A confident, mostly right price on rows whose outcomes overlap (issue 36, item 12: the
    427-row pattern whose Newton step stalled at the gradient's rounding noise)."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(float)
    z = np.where(y == 1.0, rng.normal(2.5, 2.0, n), rng.normal(-2.5, 2.0, n))
    return np.clip(np.round(1 / (1 + np.exp(-z)), 3), 0.001, 0.999), y


@pytest.mark.parametrize("seed", [7, 8, 13, 15])
def test_overlapping_outcomes_whose_newton_step_stalls_at_noise_get_the_fit(seed):
    p, y = market_like(seed)
    assert p[y == 0.0].max() > p[y == 1.0].min()  # overlapping: a finite fit exists
    fitted, reason = fit_platt(p, y)
    assert reason is None
    a, b = sklearn_platt(p, y)
    assert fitted.a == pytest.approx(a, abs=1e-6) and fitted.b == pytest.approx(b, abs=1e-6)


def test_separation_is_decided_on_the_data_including_a_tie_at_the_boundary():
    reason = "training outcomes separated by p (no finite Platt fit)"
    assert fit_platt([0.1, 0.2, 0.3, 0.4], [0.0, 0.0, 1.0, 1.0]) == (None, reason)
    assert fit_platt([0.1, 0.3, 0.3, 0.4], [0.0, 0.0, 1.0, 1.0]) == (None, reason)  # quasi
    assert fit_platt([0.1, 0.2, 0.3, 0.4], [1.0, 1.0, 0.0, 0.0]) == (None, reason)  # reversed
    fitted, why = fit_platt([0.1, 0.35, 0.3, 0.4], [0.0, 0.0, 1.0, 1.0])  # one pair crosses
    assert why is None and fitted.a > 0


def test_isotonic_equals_sklearn_with_ties_and_out_of_range():
    from sklearn.isotonic import IsotonicRegression

    rng = np.random.default_rng(2)
    p = np.round(rng.uniform(0.1, 0.9, 200), 2)  # many ties
    y = (rng.random(200) < p).astype(float)
    fitted, reason = fit_isotonic(p, y)
    assert reason is None
    reference = IsotonicRegression(out_of_bounds="clip").fit(p, y)
    query = np.concatenate([np.linspace(0.0, 1.0, 101), p])
    assert fitted.apply(query) == pytest.approx(reference.predict(query), abs=1e-12)


def test_pava_by_hand():
    assert pava(np.array([1.0, 3.0, 2.0, 4.0]), np.ones(4)).tolist() == [1.0, 2.5, 2.5, 4.0]
    assert pava(np.array([3.0, 2.0, 1.0]), np.array([1.0, 1.0, 2.0])).tolist() == [1.75] * 3


def test_the_split_puts_a_market_resolved_at_the_split_on_the_test_side():
    rows = [
        row("a", 0.3, 1.0, SPLIT - timedelta(seconds=1)),
        row("b", 0.3, 1.0, SPLIT),
        row("c", None, 0.0, START),
        ScoredRow("llm", "d", START, "f=0", "t", 0.5, None, 1.0, 0.5),
    ]  # no resolved_at
    parts = split_rows(rows, SPLIT)
    assert [r.market_id for r in parts.train] == ["a"]  # c failed: never fitted on
    assert [r.market_id for r in parts.test] == ["b"]
    assert parts.undated == 1


def test_walk_forward_never_fits_on_a_test_row():
    """Planted: before the split a higher p means Yes; after it the relation is inverted. A
    calibrator that saw any test row would differ; it must equal the fit on the train rows alone."""
    rng = np.random.default_rng(3)
    train = sample(rng, 40, slope=2.0)
    test = sample(rng, 40, slope=-3.0, first_market=100, resolved=SPLIT)
    result = calibrate(train + test, SPLIT, replicates=300)
    p_train, y_train = [r.probability for r in train], [r.outcome for r in train]
    alone = {"platt": fit_platt(p_train, y_train)[0], "isotonic": fit_isotonic(p_train, y_train)[0]}
    leaked = {
        "platt": fit_platt(*_xy(train + test))[0],
        "isotonic": fit_isotonic(*_xy(train + test))[0],
    }
    for method in ("platt", "isotonic"):
        fitted = result.calibrators[("llm", method)]
        assert fitted == alone[method]
        assert fitted != leaked[method]  # leakage would have changed the result
    assert alone["platt"].a > 0  # before the split a higher p meant Yes
    # the calibrated rows are the test rows only, mapped by the train-only calibrator
    platt_rows = [r for r in result.rows if r.forecaster == "llm·platt"]
    assert {r.market_id for r in platt_rows} == {r.market_id for r in test}
    by_key = {(r.market_id, r.t0): r.probability for r in test}
    for r in platt_rows:
        assert r.probability == pytest.approx(
            float(alone["platt"].apply([by_key[(r.market_id, r.t0)]])[0]), abs=0
        )
    # changing every test outcome changes nothing in the calibrators
    flipped = [ScoredRow(**{**_fields(r), "outcome": 1.0 - r.outcome}) for r in test]
    assert calibrate(train + flipped, SPLIT, replicates=50).calibrators == result.calibrators


def test_finding_compares_raw_and_calibrated_on_the_same_test_rows():
    rng = np.random.default_rng(4)
    train = sample(
        rng, 30, slope=0.4
    )  # overconfident forecaster: calibration should pull toward 0.5
    test = sample(rng, 30, slope=0.4, first_market=100, resolved=SPLIT)
    test[0] = row(test[0].market_id, None, test[0].outcome, test[0].resolved_at, error="invalid")
    result = calibrate(train + test, SPLIT, replicates=500)
    table = {r[1]: dict(zip(result.finding.columns, r)) for r in result.finding.rows}
    platt = table["platt"]
    valid = [r for r in test if r.probability is not None]
    calibrated = [
        r for r in result.rows if r.forecaster == "llm·platt" and r.probability is not None
    ]
    assert (platt["n_train"], platt["n_test"], platt["n_test_failed"], platt["n_test_markets"]) == (
        60,
        60,
        1,
        30,
    )
    assert platt["brier_raw"] == pytest.approx(np.mean([r.brier for r in valid]))
    assert platt["brier_calibrated"] == pytest.approx(np.mean([r.brier for r in calibrated]))
    assert platt["diff"] == pytest.approx(platt["brier_calibrated"] - platt["brier_raw"])
    assert platt["diff_ci_low"] <= platt["diff"] <= platt["diff_ci_high"]
    failed = [r for r in result.rows if r.forecaster == "llm·platt" and r.probability is None]
    assert len(failed) == 1 and failed[0].error == "invalid"  # stays failed, not imputed
    board = {b.forecaster: b for b in leaderboard(result.rows, replicates=100)}
    assert board["llm·platt"].n_failed == 1 and board["llm·isotonic"].n_forecasts == 59


def test_too_few_rows_one_class_or_separated_gives_no_calibrator_and_a_reason():
    rng = np.random.default_rng(5)
    test = sample(rng, 6, slope=1.0, first_market=100, resolved=SPLIT)
    few = sample(rng, MIN_TRAIN_ROWS // 2 - 1, slope=1.0)
    one_class = [
        row(f"m{i:03d}", 0.2 + i / 100, 1.0, START, k=k) for i in range(15) for k in range(2)
    ]
    separated = [
        row(f"m{i:03d}", 0.1 + 0.8 * (i % 2) + k / 100, float(i % 2), START, k=k)
        for i in range(15)
        for k in range(2)
    ]
    for train, method, words in (
        (few, "platt", "too few training rows"),
        (one_class, "isotonic", "of one outcome"),
        (separated, "platt", "separated"),
    ):
        result = calibrate(train + test, SPLIT, methods=(method,), replicates=50)
        assert result.rows == [] and result.calibrators == {}
        (only,) = [dict(zip(result.finding.columns, r)) for r in result.finding.rows]
        assert (
            only["derived"] is None and words in only["note"] and only["brier_calibrated"] is None
        )
        assert only["brier_raw"] == pytest.approx(
            np.mean([r.brier for r in test])
        )  # the raw score is still shown
    assert fit_platt([0.3] * 30, [0.0, 1.0] * 15) == (
        None,
        "probabilities all equal on the training rows (no slope to fit)",
    )


def test_strict_drops_test_rows_forecast_before_the_split():
    rng = np.random.default_rng(6)
    train = sample(rng, 20, slope=1.0)
    test = sample(
        rng, 10, slope=1.0, first_market=100, resolved=SPLIT + timedelta(days=10, hours=-5)
    )  # t0 = resolved − 10 d − k d
    loose, strict = (
        calibrate(train + test, SPLIT, replicates=50),
        calibrate(train + test, SPLIT, strict=True, replicates=50),
    )
    assert {r.t0 < SPLIT for r in loose.rows} == {True, False}
    assert all(r.t0 >= SPLIT for r in strict.rows) and strict.rows
    assert any("t0 before the split" in n for n in loose.finding.notes)


def test_a_market_resolved_before_the_split_but_public_after_it_is_never_fitted_on():
    """Planted: markets resolved before the split whose outcome became public only after it (and
    after some test rows' t0) carry the inverted relation. Split by the effective resolution they
    would be training rows and change the calibrator; split by `known_at` they are test rows."""
    rng = np.random.default_rng(9)
    train = sample(rng, 30, slope=2.0)
    late = [
        row(
            r.market_id,
            r.probability,
            r.outcome,
            SPLIT - timedelta(days=3),
            k=int(r.label[2:]),
            known=SPLIT + timedelta(days=2),
        )
        for r in sample(rng, 30, slope=-3.0, first_market=200)
    ]
    result = calibrate(train + late, SPLIT, replicates=50)
    alone = fit_platt(*_xy(train))[0]
    assert result.calibrators[("llm", "platt")] == alone
    assert fit_platt(*_xy(train + late))[0] != alone  # fitting on them would have changed it
    assert {r.market_id for r in result.rows if r.forecaster == "llm·platt"} == {
        r.market_id for r in late
    }
    parts = split_rows(train + late, SPLIT)
    assert {r.market_id for r in parts.train} == {r.market_id for r in train}


def test_strict_means_every_calibrated_row_used_only_outcomes_public_before_its_t0():
    """Planted: a market resolved before the split but public after it, with a test row at a t0
    after the split and before that outcome was public. Under strict, for every calibrated row,
    every outcome its calibrator was fitted on was public before the row's t0."""
    rng = np.random.default_rng(10)
    train = sample(rng, 25, slope=1.0)
    hidden = [
        row(
            f"h{i:02d}",
            float(rng.uniform(0.05, 0.95)),
            float(i % 2),
            SPLIT - timedelta(hours=1),
            k=-12,
            known=SPLIT + timedelta(days=5),
        )
        for i in range(10)
    ]  # t0 = split + 2 days − 1 hour
    later = sample(rng, 10, slope=1.0, first_market=100, resolved=SPLIT + timedelta(days=20))
    rows = train + hidden + later
    for strict in (False, True):
        parts = split_rows(rows, SPLIT, strict)
        assert not {r.market_id for r in parts.train} & {r.market_id for r in hidden}
        if strict:
            assert parts.test and all(
                max(t.known_at for t in parts.train) < r.t0 for r in parts.test
            )
    assert all(r.t0 < r.known_at for r in hidden) and all(r.t0 >= SPLIT for r in hidden)


def test_each_forecaster_is_calibrated_on_its_own_rows_and_output_is_deterministic():
    rng = np.random.default_rng(8)
    rows = (
        sample(rng, 30, 1.0)
        + sample(rng, 30, 1.0, 100, SPLIT)
        + sample(rng, 30, -1.0, 0, START, "other")
        + sample(rng, 30, -1.0, 100, SPLIT, "other")
    )
    first, again = (
        calibrate(rows, SPLIT, replicates=300),
        calibrate(list(reversed(rows)), SPLIT, replicates=300),
    )
    assert first.rows == again.rows
    assert json.dumps(first.finding.to_json()) == json.dumps(again.finding.to_json())
    assert first.calibrators[("llm", "platt")].a > 0 > first.calibrators[("other", "platt")].a
    assert {r.forecaster for r in first.rows} == {
        "llm·platt",
        "llm·isotonic",
        "other·platt",
        "other·isotonic",
    }
    assert isinstance(first.calibrators[("llm", "isotonic")], Isotonic)
    assert isinstance(first.calibrators[("llm", "platt")], Platt)


def _xy(rows):
    return [r.probability for r in rows], [r.outcome for r in rows]


def _fields(r: ScoredRow) -> dict:
    return {name: getattr(r, name) for name in ScoredRow.__dataclass_fields__}


def test_aggregates_can_be_calibrated_in_turn():
    """Derived rows keep resolved_at, so `<forecaster>·logit-mean`
    calibrates like any forecaster."""
    from hindcast.analysis.ensemble import aggregate

    rng = np.random.default_rng(9)
    base = sample(rng, 25, 1.0) + sample(rng, 10, 1.0, 100, SPLIT)
    noisy = [
        ScoredRow(
            **{
                **_fields(r),
                "repeat": k,
                "probability": float(np.clip(r.probability + d, 0.01, 0.99)),
            }
        )
        for r in base
        for k, d in enumerate((-0.05, 0.0, 0.05))
    ]
    derived = [r for r in aggregate(noisy, replicates=50).rows if r.forecaster == "llm·logit-mean"]
    result = calibrate(derived, SPLIT, replicates=50)
    assert {r.forecaster for r in result.rows} == {
        "llm·logit-mean·platt",
        "llm·logit-mean·isotonic",
    }
    assert len([r for r in result.rows if r.forecaster == "llm·logit-mean·platt"]) == 20
