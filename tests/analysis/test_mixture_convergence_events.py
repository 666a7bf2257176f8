"""The mixture test recovers w ≈ 0 for noise and w near 1 for the truth; a planted price
convergence is found and a planted no-effect is not; events are resampled whole and the
coherence sum of a neg-risk event is reported."""

import numpy as np
import pytest

from hindcast.analysis import MarketFacts, Settings, convergence, events, facts_of, mixture
from hindcast.analysis.units import cluster_interval
from hindcast.markets.bundle import MarketBundle, MarketMeta
from hindcast.records import Market, Resolution
from tests.analysis.rows import day, path, row

S = Settings(replicates=400)


def world(n=600, seed=5):
    """Markets with a true probability q, an outcome drawn from it and a noisy market price."""
    rng = np.random.default_rng(seed)
    q = rng.uniform(0.05, 0.95, n)
    y = (rng.random(n) < q).astype(float)
    market = 1 / (1 + np.exp(-(np.log(q / (1 - q)) + rng.normal(0, 1.5, n))))
    return rng, q, y, market


def mixture_rows(model, y, market):
    # market i's resolution is known on day 10 + i: the first half fits, the second is judged
    return [
        row(
            "f", f"m{i:04d}", 0, float(model[i]), float(y[i]), float(market[i]), resolved_day=10 + i
        )
        for i in range(len(y))
    ]


def test_w_is_near_one_when_the_model_is_the_truth_and_the_mixture_gains():
    _, q, y, market = world()
    (found,) = mixture.mixtures(mixture_rows(q, y, market), MarketFacts(), S)
    assert found.w > 0.8 and found.n_fit_markets == found.n_test_markets == 300
    assert found.mixed_gain > 0 and found.mixed_low > 0  # the interval excludes no gain


def test_w_is_about_zero_when_the_model_is_noise_and_no_gain_is_claimed():
    rng, q, y, _ = world()  # here the market is the truth (calibrated): noise has nothing to add
    (found,) = mixture.mixtures(mixture_rows(rng.random(len(y)), y, q), MarketFacts(), S)
    assert found.w < 0.05
    assert found.mixed_low <= 0.0 or found.mixed_gain < 0.002
    assert found.model_gain < 0 and found.model_high < 0  # alone, noise loses to the market


def test_the_split_is_by_when_resolutions_were_known_not_by_id():
    rows = [
        row("f", "z", 0, 0.5, 1.0, 0.5, resolved_day=1),
        row("f", "a", 0, 0.5, 1.0, 0.5, resolved_day=9),
    ]
    early, late = mixture.split_units(rows, MarketFacts())
    assert early == {"market:z"} and late == {"market:a"}
    facts = MarketFacts(known_at={"z": day(20)})  # a later known_at moves z to the judged half
    assert mixture.split_units(rows, facts) == ({"market:a"}, {"market:z"})


def convergence_world(effect: float, seed=1):
    """60 markets priced 0.5 until t0 = day 10. The forecaster disagrees (0.8 or 0.2) on the first
    30, agrees (0.52) on the rest; after t0 disagreeing markets move `effect` toward
    it, all move by noise."""
    rng = np.random.default_rng(seed)
    rows, prices = [], {}
    for i in range(60):
        market, disagree = f"m{i:02d}", i < 30
        p = (0.8 if i % 2 else 0.2) if disagree else 0.52
        toward = np.sign(p - 0.5) * effect if disagree else 0.0
        noise = rng.normal(0, 0.03, 3)
        prices[market] = path(
            (0, 0.5),
            (9.5, 0.5),
            (10, 0.9),  # a point exactly at t0 is not "after" it
            (10.5, 0.5 + toward + noise[0]),
            (12, 0.5 + toward + noise[1]),
            (16, 0.5 + toward + noise[2]),
            (30, 1.0),
        )  # at resolution: never read
        rows.append(row("f", market, 10, p, 1.0, 0.5, resolved_day=30))
    return rows, MarketFacts(prices=prices)


def test_a_planted_convergence_is_found_at_every_horizon():
    rows, facts = convergence_world(effect=0.1)
    found = convergence.convergence(rows, facts, S)
    assert [c.horizon_days for c in found] == [1, 3, 7]
    for c in found:
        assert c.n_disagree == 30 and c.n_control == 30
        assert c.effect == pytest.approx(0.1, abs=0.02) and c.low > 0


def test_a_planted_no_effect_is_not_found():
    rows, facts = convergence_world(effect=0.0)
    for c in convergence.convergence(rows, facts, S):
        assert c.low <= 0 <= c.high and abs(c.effect) < 0.02


def test_convergence_reads_only_prices_strictly_after_t0_and_before_resolution():
    p = path((0, 0.5), (10, 0.9), (11, 0.6))
    assert convergence.price_after(p, day(10), day(10.5)) is None  # the point at t0 is not after it
    assert convergence.price_after(p, day(10), day(11)) == 0.6
    rows = [row("f", "m", 10, 0.9, 1.0, 0.5, resolved_day=12)]
    (one, three, seven) = convergence.convergence(rows, MarketFacts(prices={"m": p}), S)
    assert (
        one.n_disagree == 1 and three.n_disagree == seven.n_disagree == 0
    )  # day 13 and 17: past resolution


def bundle():
    ids = ["a1", "a2", "a3", "b1", "c1", "d1", "e1"]
    markets = tuple(Market(m, f"question {m}", "") for m in ids)
    resolutions = tuple(Resolution(m, "yes" if m == "a2" else "no", day(30), day(30)) for m in ids)
    meta = {
        m: MarketMeta(m, neg_risk=m.startswith("a"), event="event-a" if m.startswith("a") else "")
        for m in ids
    }
    return MarketBundle(markets, resolutions, {}, meta)


def test_markets_of_one_event_are_one_resampling_unit():
    facts = facts_of([bundle()])
    assert {facts.unit(m) for m in ("a1", "a2", "a3")} == {"event:event-a"} and facts.unit(
        "b1"
    ) == "market:b1"
    values = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    ids = ["a1", "a2", "a3", "b1", "c1", "d1", "e1"]
    # 7 markets but 5 units: an interval; drop one singleton and 4 units remain — too few for one
    assert cluster_interval([facts.unit(m) for m in ids], values, "k", S) is not None
    assert cluster_interval([facts.unit(m) for m in ids[:-1]], values[:-1], "k", S) is None
    assert (
        cluster_interval(ids[:-1], values[:-1], "k", S) is not None
    )  # as markets it would have had one
    assert "7 markets in 5 resampling units" in events.units_note(
        [row("f", m, 0, 0.5, 0.0) for m in ids], facts
    )


def test_the_coherence_check_sums_a_forecasters_probabilities_over_the_exclusive_markets():
    facts = facts_of([bundle()])
    rows = [
        row("f", "a1", 0, 0.5, 0.0, 0.2),
        row("f", "a2", 0, 0.5, 1.0, 0.7),
        row("f", "a3", 0, 0.2, 0.0, 0.1),
        row("f", "b1", 0, 0.9, 0.0),
        row("g", "a1", 0, 0.3, 0.0),
        row("g", "a3", 5, 0.3, 0.0),
    ]
    found = {(c.forecaster, c.t0): c for c in events.coherence(rows, facts)}
    f = found[("f", day(0))]
    assert (
        (f.n_answered, f.n_markets) == (3, 3)
        and f.total == pytest.approx(1.2)
        and f.excess == pytest.approx(0.2)
    )
    market = found[("market price", day(0))]
    assert market.total == pytest.approx(1.0)
    assert ("g", day(0)) not in found  # one market answered at that t0: nothing to sum


def test_no_effect_is_claimed_without_a_control_row_at_a_similar_price():
    # disagreeing rows priced 0.2 (forecast 0.6), agreeing rows priced 0.8: none within 0.05 of another
    rows = [row("f", f"d{i}", 10, 0.6, 1.0, 0.2, resolved_day=30) for i in range(10)]
    rows += [row("f", f"a{i}", 10, 0.82, 1.0, 0.8, resolved_day=30) for i in range(10)]
    prices = {r.market_id: path((9, r.market_price), (10.5, r.market_price + 0.1)) for r in rows}
    (one, *_) = convergence.convergence(rows, MarketFacts(prices=prices), S)
    assert (one.n_disagree, one.n_control, one.n_matched) == (10, 10, 0)
    assert one.effect is None and one.move_toward == pytest.approx(0.1)
