"""Repeats → derived forecasters: exact aggregates on crafted repeats, the clipping policy, the
empirical-Bayes shrinkage factor, failures (all failed stays failed, partial counted, never
imputed), names that cannot collide, rows the leaderboard scores, determinism."""

from __future__ import annotations

import json
import math
from datetime import timedelta

import numpy as np
import pytest

from hindcast.analysis.ensemble import (
    CLIP,
    KINDS,
    Shrinkage,
    aggregate,
    clipped_logit,
    combine,
    fit_shrinkage,
)
from hindcast.errors import ConfigError
from hindcast.scoring.aggregate import ScoredRow, leaderboard
from tests.helpers import at

T = at("2025-10-01T00:00:00")
RESOLVED = at("2025-12-01T00:00:00")


def row(market, p, repeat, outcome=1.0, forecaster="llm", error=None, k=0, usage=()):
    return ScoredRow(
        forecaster,
        market,
        T + timedelta(days=k),
        f"f={k}",
        "politics",
        p,
        error if p is None else None,
        outcome,
        0.4,
        "reg",
        "cov",
        repeat,
        usage,
        RESOLVED,
        T - timedelta(hours=1),
    )


def repeats(market, ps, **kw):
    return [row(market, p, i, error="invalid answer", **kw) for i, p in enumerate(ps)]


def logit(p):
    return math.log(p / (1 - p))


def expit(x):
    return 1 / (1 + math.exp(-x))


def by_name(result):
    return {(r.forecaster, r.market_id, r.t0): r for r in result.rows}


def test_exact_aggregates_on_crafted_repeats():
    ps = [0.2, 0.5, 0.9]
    result = aggregate(repeats("m1", ps))
    got = {r.forecaster: r.probability for r in result.rows}
    assert got["llm·mean"] == pytest.approx(1.6 / 3, abs=1e-15)
    assert got["llm·median"] == 0.5
    m = (logit(0.2) + logit(0.5) + logit(0.9)) / 3
    assert got["llm·logit-mean"] == pytest.approx(expit(m), abs=1e-14)
    # one question only: σ² = var of the three logits (ddof 1), τ² = max(0, m² − σ²/3)
    sigma2 = np.var([logit(p) for p in ps], ddof=1)
    tau2 = max(0.0, m * m - sigma2 / 3)
    assert got["llm·logit-shrunk"] == pytest.approx(
        expit(m * tau2 / (tau2 + sigma2 / 3)), abs=1e-14
    )
    assert set(got) == {f"llm·{k}" for k in KINDS}


def test_even_count_median_is_the_mean_of_the_middle_two():
    got = {
        r.forecaster: r.probability for r in aggregate(repeats("m1", [0.1, 0.3, 0.6, 0.95])).rows
    }
    assert got["llm·median"] == pytest.approx(0.45)


def test_clipping_policy_bounds_logits_of_certain_draws():
    assert clipped_logit([0.0, 1.0]).tolist() == pytest.approx([logit(CLIP), -logit(CLIP)])
    assert np.isfinite(clipped_logit([0.0, 1.0])).all()
    got = {r.forecaster: r.probability for r in aggregate(repeats("m1", [0.0, 0.0, 1.0])).rows}
    # logit mean = (2·logit(1e-6) − logit(1e-6)) / 3 = logit(1e-6) / 3: finite, not −∞ or NaN
    assert got["llm·logit-mean"] == pytest.approx(expit(logit(CLIP) / 3), rel=1e-12)
    assert got["llm·mean"] == pytest.approx(1 / 3)  # mean and median read p unclipped
    assert got["llm·median"] == 0.0


def test_shrinkage_is_fitted_across_the_forecasters_questions():
    questions = [repeats("m1", [0.7, 0.8]), repeats("m2", [0.1, 0.4]), repeats("m3", [0.5, 0.6])]
    logits = [np.array([logit(p) for p in q]) for q in ([0.7, 0.8], [0.1, 0.4], [0.5, 0.6])]
    sigma2 = sum(((x - x.mean()) ** 2).sum() for x in logits) / 3  # Σ(K_q − 1) = 3
    tau2 = max(0.0, float(np.mean([x.mean() ** 2 - sigma2 / 2 for x in logits])))
    fitted = fit_shrinkage(questions)
    assert fitted.sigma2 == pytest.approx(sigma2) and fitted.tau2 == pytest.approx(tau2)
    got = by_name(aggregate([r for q in questions for r in q]))
    for q, x in zip(questions, logits):
        assert got[("llm·logit-shrunk", q[0].market_id, T)].probability == pytest.approx(
            expit(x.mean() * tau2 / (tau2 + sigma2 / 2))
        )


def test_shrinkage_factor_bounds():
    assert Shrinkage(0.0, 0.0).factor(3) == 1.0  # repeats always agree: no shrinkage
    assert Shrinkage(1.0, 0.0).factor(3) == 0.0  # no spread between questions: all the way to 0.5
    assert Shrinkage(1.0, 1.0).factor(1) == 0.5
    agreeing = combine([0.9, 0.9], Shrinkage(0.0, 5.0))
    assert agreeing["logit-shrunk"] == pytest.approx(0.9) == agreeing["logit-mean"]


def test_all_failed_stays_failed_and_partial_failures_aggregate_valid_ones_only():
    rows = repeats("m1", [None, None, None]) + repeats("m2", [0.2, None, 0.6])
    result = aggregate(rows)
    got = by_name(result)
    for kind in KINDS:
        failed = got[(f"llm·{kind}", "m1", T)]
        assert failed.probability is None and failed.error == "all 3 repeats failed: invalid answer"
    assert got[("llm·mean", "m2", T)].probability == pytest.approx(
        0.4
    )  # (0.2 + 0.6) / 2, no 0 or 0.5 filled in
    assert got[("llm·median", "m2", T)].probability == pytest.approx(0.4)
    assert got[("llm·mean", "m2", T)].error is None
    assert result.repeats == {("llm", "m1", T): (0, 3), ("llm", "m2", T): (2, 3)}
    table = [dict(zip(result.finding.columns, r)) for r in result.finding.rows]
    mean_row = next(r for r in table if r["derived"] == "llm·mean")
    assert (
        mean_row["n_questions"],
        mean_row["n_failed"],
        mean_row["n_partial"],
        mean_row["repeats"],
    ) == (1, 1, 1, 3)


def test_derived_rows_keep_the_question_and_sum_usage():
    usage = (
        ("model_name", "gpt-x"),
        ("prompt_tokens", 100),
        ("completion_tokens", 10),
        ("latency_s", 1.5),
    )
    rows = [
        row("m1", 0.3, 0, outcome=0.0, usage=usage),
        row("m1", 0.5, 1, outcome=0.0, usage=usage),
    ]
    derived = aggregate(rows).rows
    assert len(derived) == 4
    for r in derived:
        assert (
            r.market_id,
            r.t0,
            r.label,
            r.topic,
            r.outcome,
            r.market_price,
            r.regime,
            r.coverage,
            r.resolved_at,
            r.price_t,
            r.repeat,
        ) == (
            "m1",
            T,
            "f=0",
            "politics",
            0.0,
            0.4,
            "reg",
            "cov",
            RESOLVED,
            T - timedelta(hours=1),
            0,
        )
        assert dict(r.usage) == {
            "model_name": "gpt-x",
            "prompt_tokens": 200,
            "completion_tokens": 20,
            "latency_s": 3.0,
        }


def test_finding_brier_vs_single_draw():
    # m1 outcome 1: draws 0.6 and 1.0 → single-draw Brier mean((0.16, 0)) = 0.08, mean 0.8 → 0.04
    rows = repeats("m1", [0.6, 1.0]) + repeats("m2", [0.5, 0.5], outcome=0.0)
    table = [dict(zip(aggregate(rows).finding.columns, r)) for r in aggregate(rows).finding.rows]
    mean_row = next(r for r in table if r["derived"] == "llm·mean")
    assert mean_row["single_draw_brier"] == pytest.approx((0.08 + 0.25) / 2)
    assert mean_row["brier"] == pytest.approx((0.04 + 0.25) / 2)
    assert mean_row["diff_vs_single"] == pytest.approx(-0.02)
    assert mean_row["diff_ci_low"] is None and "n too small" in mean_row["ci_note"]  # 2 markets < 5


def test_forecasters_without_repeats_are_left_out_and_named():
    rows = repeats("m1", [0.2, 0.4]) + [row("m1", 0.3, 0, forecaster="market")]
    result = aggregate(rows)
    assert {r.forecaster.split("·")[0] for r in result.rows} == {"llm"}
    assert any("no repeats to aggregate: market" in n for n in result.finding.notes)


def test_a_name_colliding_with_a_derived_name_is_refused():
    rows = repeats("m1", [0.2, 0.4]) + [row("m1", 0.3, 0, forecaster="llm·mean")]
    with pytest.raises(ConfigError, match="llm·mean"):
        aggregate(rows)


def test_leaderboard_scores_derived_rows_and_output_is_deterministic():
    rng = np.random.default_rng(7)
    rows = [
        r
        for m in range(8)
        for k in range(2)
        for r in repeats(f"m{m}", list(rng.uniform(0.05, 0.95, 3)), outcome=float(m % 2), k=k)
    ]
    first, again = aggregate(rows, replicates=300), aggregate(list(reversed(rows)), replicates=300)
    assert first.rows == again.rows
    assert json.dumps(first.finding.to_json()) == json.dumps(again.finding.to_json())
    board = {b.forecaster: b for b in leaderboard(first.rows, replicates=200)}
    assert set(board) == {f"llm·{k}" for k in KINDS}
    assert board["llm·mean"].n_forecasts == 16 and board["llm·mean"].n_markets == 8
    table = [dict(zip(first.finding.columns, r)) for r in first.finding.rows]
    assert all(
        r["diff_ci_low"] is not None
        and r["diff_ci_low"] <= r["diff_vs_single"] <= r["diff_ci_high"]
        for r in table
    )
    # mean of draws is never worse than a single draw in Brier (Jensen), question by question
    assert next(r for r in table if r["aggregate"] == "mean")["diff_vs_single"] <= 0
