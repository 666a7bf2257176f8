"""Pairwise relative skill of three forecasters on partly overlapping rows, against the ratios
worked out by hand and an independent re-implementation of the definition."""

import itertools
import math

import numpy as np
import pytest

from hindcast.analysis import MarketFacts, Settings, pairwise
from hindcast.errors import ConfigError
from tests.analysis.rows import row

# every outcome NO, so a forecast's Brier score is p²
ANSWERS = {
    "A": {"m1": 0.1, "m2": 0.2, "m3": 0.3, "m4": 0.4},
    "B": {"m3": 0.5, "m4": 0.6, "m5": 0.1, "m6": 0.2},
    "C": {"m1": 0.3, "m2": 0.3, "m3": 0.3, "m5": 0.3, "m6": 0.3},
}


def rows():
    found = [
        row(name, m, 0, p, 0.0) for name, answers in ANSWERS.items() for m, p in answers.items()
    ]
    found += [
        row("A", "m5", 0, None, 0.0),
        row("B", "m3", 0, 0.5, 0.0, repeat=1),
    ]  # a failure, a repeat
    return found


def reference(answers, baseline):
    """The definition, written again: ratios of mean Brier on shared markets,
    geometric mean, scaled."""
    names = sorted(answers)
    logs = {a: [] for a in names}
    for a, b in itertools.permutations(names, 2):
        shared = sorted(answers[a].keys() & answers[b].keys())
        if shared:
            ma = sum(answers[a][m] ** 2 for m in shared) / len(shared)
            mb = sum(answers[b][m] ** 2 for m in shared) / len(shared)
            logs[a].append(math.log(ma / mb))
    skill = {a: math.exp(sum(v) / len(v)) for a, v in logs.items()}
    return {a: s / skill[baseline] for a, s in skill.items()}


def test_ratios_on_the_overlap_match_the_hand_computed_ones():
    result = pairwise.pairwise(
        rows(), MarketFacts(), Settings(baseline="C", replicates=300, permutations=300)
    )
    pairs = {(p.a, p.b): p for p in result.pairs}
    assert (
        pairs[("A", "B")].ratio == pytest.approx(25 / 61, rel=1e-12)
        and pairs[("A", "B")].n_rows == 2
    )
    assert (
        pairs[("A", "C")].ratio == pytest.approx(14 / 27, rel=1e-12)
        and pairs[("A", "C")].n_rows == 3
    )
    assert (
        pairs[("B", "C")].ratio == pytest.approx(10 / 9, rel=1e-12)
        and pairs[("B", "C")].n_rows == 3
    )
    skills = {s.forecaster: s.relative_skill for s in result.skills}
    assert skills["A"] == pytest.approx(math.sqrt(25 / 61 * 14 / 27 * 14 / 27 * 10 / 9), rel=1e-12)
    assert skills["C"] == 1.0


@pytest.mark.parametrize("baseline", ["A", "B", "C"])
def test_relative_skill_matches_an_independent_implementation(baseline):
    result = pairwise.pairwise(
        rows(), MarketFacts(), Settings(baseline=baseline, replicates=300, permutations=300)
    )
    expected = reference(ANSWERS, baseline)
    assert {s.forecaster: s.relative_skill for s in result.skills} == pytest.approx(
        expected, rel=1e-12
    )
    base = next(s for s in result.skills if s.forecaster == baseline)
    assert (base.low, base.high) == (1.0, 1.0)  # 6 markets: an interval, the baseline's exactly 1


def test_permutation_p_values_are_seeded_and_tell_a_real_difference_from_none():
    rng = np.random.default_rng(3)
    y = (rng.random(40) < 0.5).astype(float)
    truth = np.clip(y * 0.8 + 0.1 + rng.normal(0, 0.05, 40), 0.01, 0.99)
    found = [row("good", f"m{i}", 0, float(truth[i]), float(y[i])) for i in range(40)]
    found += [row("twin", f"m{i}", 0, float(truth[i]), float(y[i])) for i in range(40)]
    found += [row("coin", f"m{i}", 0, 0.5, float(y[i])) for i in range(40)]
    settings = Settings(baseline="coin", replicates=200, permutations=999, seed=7)
    first = {(p.a, p.b): p.p_value for p in pairwise.pairwise(found, MarketFacts(), settings).pairs}
    again = {(p.a, p.b): p.p_value for p in pairwise.pairwise(found, MarketFacts(), settings).pairs}
    assert first == again
    assert first[("good", "twin")] == 1.0 and first[("coin", "good")] == pytest.approx(1 / 1000)


def test_an_unknown_baseline_is_refused_with_the_names_to_choose_from():
    with pytest.raises(ConfigError, match="unknown baseline 'D'.*A, B, C"):
        pairwise.pairwise(rows(), MarketFacts(), Settings(baseline="D"))
