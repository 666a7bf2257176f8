"""Difficulty-adjusted comparison: planted effects are recovered (exactly without noise, within
the noise's standard error with it), the fit equals an independent OLS (statsmodels) on an
unbalanced panel, the question share of variance equals a hand computation, failures leave
the matched rows and are counted, and the same rows give the same Finding to the byte."""

from __future__ import annotations

import math
from datetime import timedelta

import numpy as np
import pytest

from hindcast.analysis.effects import (
    MARKET,
    brier_index,
    effects,
    fit,
    least_squares,
    question_share,
)
from hindcast.errors import ConfigError
from hindcast.scoring.aggregate import ScoredRow
from tests.helpers import at

T = at("2025-10-01T00:00:00")


def row(forecaster, market, k, brier, repeat=0, price=None, outcome=0.0):
    """A row whose Brier is `brier` (outcome 0, p = √brier); brier None is a stored failure."""
    p = None if brier is None else math.sqrt(brier)
    return ScoredRow(
        forecaster,
        market,
        T + timedelta(days=k),
        f"f={k}",
        "politics",
        p,
        "invalid" if p is None else None,
        outcome,
        price,
        repeat=repeat,
    )


def planted(n_markets=12, cutoffs=3, betas=(0.0, 0.05, -0.04, 0.02), noise=0.0, seed=7, mu=0.25):
    """Rows with Brier = mu + alpha_q + beta_f + noise, one per question × forecaster."""
    rng = np.random.default_rng(seed)
    alpha = rng.uniform(-0.1, 0.1, size=(n_markets, cutoffs))
    rows = []
    for m in range(n_markets):
        for k in range(cutoffs):
            for f, b in enumerate(betas):
                value = mu + alpha[m, k] + b + noise * rng.standard_normal()
                assert 0.0 <= value <= 1.0
                rows.append(row(f"f{f}", f"m{m:02d}", k, value))
    return rows


def by_name(finding):
    return {r["forecaster"]: r for r in finding.to_json()["rows"]}


# ---- (1) planted effects -----------------------------------------------------------------------


def test_planted_effects_recovered_exactly_without_noise():
    betas = (0.0, 0.05, -0.04, 0.02)
    out = by_name(effects(planted(betas=betas), include_market=False, replicates=200))
    for f, b in enumerate(betas):
        assert out[f"f{f}"]["adjusted_brier"] - out["f0"]["adjusted_brier"] == pytest.approx(
            b, abs=1e-12
        )
        assert out[f"f{f}"]["effect"] == pytest.approx(b - np.mean(betas), abs=1e-12)


def test_planted_effects_recovered_without_noise_on_an_unbalanced_panel():
    """Each forecaster misses a different third of the questions: the raw means are confounded
    by difficulty, the fixed effects are not."""
    betas = (0.0, 0.05, -0.04, 0.02)
    rows = [r for i, r in enumerate(planted(betas=betas)) if (i // 4 + int(r.forecaster[1])) % 3]
    out = by_name(effects(rows, include_market=False, panel="available", replicates=200))
    raw_gap = out["f1"]["raw_brier"] - out["f0"]["raw_brier"]
    assert abs(raw_gap - 0.05) > 1e-3  # difficulty does distort the raw comparison here
    for f, b in enumerate(betas):
        assert out[f"f{f}"]["adjusted_brier"] - out["f0"]["adjusted_brier"] == pytest.approx(
            b, abs=1e-12
        )


def test_planted_effects_recovered_within_the_noise():
    """With noise σ on every cell, β_f − β_g has standard error σ·√(2/Q) on Q balanced questions."""
    betas, sigma = (0.0, 0.05, -0.04, 0.02), 0.02
    rows = planted(n_markets=30, betas=betas, noise=sigma, seed=3)
    out = by_name(effects(rows, include_market=False, replicates=200))
    tolerance = 4 * sigma * math.sqrt(2 / 90)
    for f, b in enumerate(betas):
        assert out[f"f{f}"]["adjusted_brier"] - out["f0"]["adjusted_brier"] == pytest.approx(
            b, abs=tolerance
        )


def test_the_closed_form_equals_the_least_squares_path_on_a_balanced_panel_with_weights():
    rng = np.random.default_rng(0)
    y, w = rng.random((20, 4)), rng.integers(0, 3, 20).astype(float)
    w[0] = 1.0
    closed, solved = fit(y, w), least_squares(y, w)
    assert closed.balanced and not solved.balanced
    np.testing.assert_allclose(closed.adjusted, solved.adjusted, atol=1e-12)
    np.testing.assert_allclose(closed.beta, solved.beta, atol=1e-12)


def test_balanced_adjusted_brier_is_the_raw_brier_on_matched_rows_and_the_index_follows():
    out = effects(planted(), include_market=False, replicates=200)
    for r in out.to_json()["rows"]:
        assert r["adjusted_brier"] == pytest.approx(r["raw_brier"], abs=1e-12)
        assert r["brier_index"] == pytest.approx(
            100 * (1 - math.sqrt(r["adjusted_brier"])), abs=1e-12
        )
        assert r["adjusted_ci_low"] < r["adjusted_brier"] < r["adjusted_ci_high"]
        assert r["brier_index_ci_low"] < r["brier_index"] < r["brier_index_ci_high"]
    assert brier_index(0.25) == 50.0 and brier_index(0.0) == 100.0 and brier_index(None) is None


def test_rows_are_best_first():
    names = [r[0] for r in effects(planted(), include_market=False, replicates=50).rows]
    assert names == ["f2", "f0", "f3", "f1"]


# ---- (2) against an independent implementation ---------------------------------------------------


def unbalanced_rows(seed=11):
    """8 markets × 2 cutoffs, 4 forecasters each missing random questions, some with 2 repeats."""
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(8):
        for k in range(2):
            for f in range(4):
                if f > 0 and rng.random() < 0.35:
                    continue
                for rep in range(1 + int(rng.random() < 0.3)):
                    rows.append(row(f"f{f}", f"m{m}", k, float(rng.uniform(0.01, 0.9)), repeat=rep))
    return rows


def statsmodels_fit(rows, weights=None):
    """OLS brier ~ C(question) + C(forecaster) on per-cell mean Briers (WLS
    with question weights)."""
    pd = pytest.importorskip("pandas")
    smf = pytest.importorskip("statsmodels.formula.api")
    frame = pd.DataFrame(
        {
            "question": [f"{r.market_id}|{r.label}" for r in rows],
            "forecaster": [r.forecaster for r in rows],
            "brier": [r.brier for r in rows],
        }
    )
    cells = frame.groupby(["question", "forecaster"], as_index=False)["brier"].mean()
    cells["w"] = 1.0 if weights is None else cells["question"].map(weights)
    cells = cells[cells["w"] > 0]
    model = smf.wls("brier ~ C(question) + C(forecaster)", data=cells, weights=cells["w"]).fit()
    grid = pd.DataFrame(
        [
            (q, f)
            for q in sorted(cells["question"].unique())
            for f in sorted(cells["forecaster"].unique())
        ],
        columns=["question", "forecaster"],
    )
    grid["fitted"] = model.predict(grid)
    grid["w"] = 1.0 if weights is None else grid["question"].map(weights)
    grid["wf"] = grid["w"] * grid["fitted"]
    sums = grid.groupby("forecaster")[["wf", "w"]].sum()
    return model, (
        sums["wf"] / sums["w"]
    ).to_dict()  # adjusted: fitted Brier averaged over the questions


def test_matches_statsmodels_ols_on_an_unbalanced_panel():
    pytest.importorskip("statsmodels")
    rows = unbalanced_rows()
    model, adjusted = statsmodels_fit(rows)
    out = by_name(effects(rows, include_market=False, panel="available", replicates=100))
    for f in ("f1", "f2", "f3"):
        gap = out[f]["adjusted_brier"] - out["f0"]["adjusted_brier"]
        assert gap == pytest.approx(model.params[f"C(forecaster)[T.{f}]"], abs=1e-9)
    for f, value in adjusted.items():
        assert out[f]["adjusted_brier"] == pytest.approx(value, abs=1e-9)
    assert any(
        abs(out[f]["adjusted_brier"] - out[f]["raw_brier"]) > 1e-3 for f in out
    )  # unbalanced: they differ


def test_a_weighted_refit_matches_statsmodels_wls():
    """What one bootstrap replicate computes: questions weighted by their market's draw count."""
    pytest.importorskip("statsmodels")
    rows = unbalanced_rows()
    draws = {"m0": 2.0, "m1": 0.0, "m2": 1.0, "m3": 3.0, "m4": 1.0, "m5": 0.0, "m6": 1.0, "m7": 1.0}
    questions = sorted({(r.market_id, r.label) for r in rows})
    forecasters = sorted({r.forecaster for r in rows})
    y = np.full((len(questions), len(forecasters)), np.nan)
    for i, q in enumerate(questions):
        for j, f in enumerate(forecasters):
            own = [r.brier for r in rows if (r.market_id, r.label) == q and r.forecaster == f]
            y[i, j] = np.mean(own) if own else np.nan
    w = np.array([draws[m] for m, _ in questions])
    _, adjusted = statsmodels_fit(rows, {f"{m}|{k}": draws[m] for m, k in questions})
    mine = fit(y, w).adjusted
    for j, f in enumerate(forecasters):
        assert mine[j] == pytest.approx(adjusted[f], abs=1e-9)


def test_available_panel_keeps_a_forecaster_on_a_few_markets_that_matched_drops():
    rows = planted(n_markets=10, cutoffs=1, betas=(0.0, 0.05))
    rows += [
        row("few", f"m{m:02d}", 0, r.brier + 0.03) for m, r in enumerate(rows[:6:2])
    ]  # f0 + 0.03 on 3 markets
    matched = by_name(effects(rows, include_market=False, replicates=50))
    available = by_name(effects(rows, include_market=False, panel="available", replicates=300))
    assert "few" not in matched and available["few"]["n_questions"] == 3
    assert available["few"]["adjusted_brier"] - available["f0"]["adjusted_brier"] == pytest.approx(
        0.03, abs=1e-12
    )
    assert available["few"]["adjusted_ci_low"] is not None


def test_a_replicate_without_a_forecasters_markets_leaves_the_others_unchanged():
    rng = np.random.default_rng(5)
    y = rng.random((12, 3))
    y[4:, 2] = np.nan  # the third forecaster answered questions 0-3 only
    y[[5, 7], 1] = np.nan
    w = np.r_[np.zeros(4), rng.integers(1, 3, 8)].astype(float)  # none of its questions drawn
    mine = least_squares(y, w).adjusted
    alone = least_squares(y[4:, :2], w[4:]).adjusted
    assert np.isnan(mine[2])
    np.testing.assert_allclose(mine[:2], alone, atol=1e-12)


# ---- (3) variance share ------------------------------------------------------------------------


def test_question_share_against_a_hand_computation():
    """Cells [[.1,.3],[.5,.7],[0,.2]]: grand mean .3, question means .2,.6,.1; question SS
    2·(.01+.09+.04) = .28; total SS .04+0+.04+.16+.09+.01 = .34; share 14/17."""
    y = np.array([[0.1, 0.3], [0.5, 0.7], [0.0, 0.2]])
    assert question_share(y) == pytest.approx(14 / 17, abs=1e-12)
    rows = [row(f, f"m{m}", 0, y[m, j]) for m in range(3) for j, f in enumerate(("a", "b"))]
    notes = effects(rows, include_market=False, replicates=10).notes
    assert any("question share of score variance: 0.824" in n for n in notes)
    assert question_share(np.full((3, 2), 0.2)) is None


def test_question_share_on_an_unbalanced_panel_is_between_question_ss():
    y = np.array([[0.1, np.nan], [0.5, 0.7], [0.0, 0.2]])  # grand .3; question means .1,.6,.1
    assert question_share(y) == pytest.approx(
        (0.04 + 2 * 0.09 + 2 * 0.04) / (0.04 + 0.04 + 0.16 + 0.09 + 0.01)
    )


# ---- (4) failures and the market -------------------------------------------------------------------


def test_failures_leave_the_matched_rows_and_are_counted():
    rows = planted(n_markets=6, cutoffs=1, betas=(0.0, 0.05))
    rows = [r for r in rows if not (r.forecaster == "f1" and r.market_id == "m03")]
    rows += [row("f1", "m03", 0, None), row("f1", "m03", 0, None, repeat=1)]  # every repeat failed
    rows += [row("f0", "m04", 0, None, repeat=1)]  # one failed repeat beside a valid one
    rows += [row("dead", f"m{m:02d}", 0, None) for m in range(6)]  # only failures
    finding = effects(rows, include_market=False, replicates=50)
    out = by_name(finding)
    assert set(out) == {"f0", "f1"}
    assert out["f0"]["n_questions"] == out["f1"]["n_questions"] == 5
    assert out["f1"]["n_failed"] == 2 and out["f0"]["n_failed"] == 1
    valid_f0 = [
        r.brier
        for r in rows
        if r.forecaster == "f0" and r.market_id != "m03" and r.probability is not None
    ]
    assert out["f0"]["raw_brier"] == pytest.approx(
        np.mean(valid_f0), abs=1e-12
    )  # the failed repeat is not filled
    notes = " | ".join(finding.notes)
    assert "failures excluded, never imputed: 9 (dead: 6, f0: 1, f1: 2)" in notes
    assert "1 questions left out" in notes and "dead (no valid forecast)" in notes


def test_the_market_price_is_a_forecaster_on_questions_with_a_price():
    rows = [
        row(f, f"m{m}", 0, 0.04 * (m + 1) + 0.1 * j, price=None if m == 5 else 0.3)
        for m in range(7)
        for j, f in enumerate(("a", "b"))
    ]
    out = by_name(effects(rows, replicates=50))
    assert out[MARKET]["n_questions"] == 6 and out["a"]["n_questions"] == 6  # m5 had no price
    assert out[MARKET]["raw_brier"] == pytest.approx(0.09)  # (0.3 − 0)²
    assert MARKET not in by_name(effects(rows, include_market=False, replicates=50))


def test_a_forecaster_on_too_few_questions_is_dropped_not_allowed_to_shrink_the_panel():
    rows = planted(n_markets=10, cutoffs=1, betas=(0.0, 0.05))
    rows += [row("late", "m00", 0, 0.2), row("late", "m01", 0, 0.2)]
    finding = effects(rows, include_market=False, replicates=50)
    assert set(by_name(finding)) == {"f0", "f1"} and by_name(finding)["f0"]["n_questions"] == 10
    assert any("late (2 of 10 questions, < 50% of the best coverage)" in n for n in finding.notes)


def test_no_interval_under_five_markets_and_no_fit_without_questions():
    out = effects(planted(n_markets=4), include_market=False, replicates=50)
    assert all(r["adjusted_ci_low"] is None for r in out.to_json()["rows"])
    assert any("n too small: 4 markets" in n for n in out.notes)
    empty = effects([row("a", "m0", 0, 0.1), row("b", "m1", 0, 0.1)], include_market=False)
    assert empty.rows == () and any("no fit" in n for n in empty.notes)


def test_unlinked_forecasters_give_no_fit():
    rows = [row("a", f"m{m}", 0, 0.1 + 0.01 * m) for m in range(5)] + [
        row("b", f"m{m}", 0, 0.2) for m in range(5, 10)
    ]
    out = effects(rows, include_market=False, panel="available", replicates=50)
    assert out.rows == () and any("do not link" in n for n in out.notes)


# ---- (5) determinism ------------------------------------------------------------------------------


def test_same_rows_same_finding_and_the_seed_moves_only_the_interval():
    rows = unbalanced_rows()
    for panel in ("matched", "available"):
        first = effects(rows, panel=panel, replicates=300).to_json()
        assert effects(list(reversed(rows)), panel=panel, replicates=300).to_json() == first
    a, b = (
        by_name(effects(rows, panel="available", replicates=300)),
        by_name(effects(rows, panel="available", replicates=300, seed=1)),
    )
    assert all(a[f]["adjusted_brier"] == b[f]["adjusted_brier"] for f in a)
    assert any(a[f]["adjusted_ci_low"] != b[f]["adjusted_ci_low"] for f in a)


def test_unknown_panel_and_bad_coverage_are_refused():
    with pytest.raises(ConfigError, match="panel"):
        effects([], panel="everything")
    with pytest.raises(ConfigError, match="min_coverage"):
        effects([], min_coverage=1.5)
