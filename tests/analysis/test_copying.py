"""Copy-the-market (issue 16, item 6): a forecaster shown the price against the price and
against its price-less twin. Crafted rows with figures worked out by hand (dyadic numbers, so
sums are exact), then a sweep of the sample through the API with the fake chat model scripted
to copy the price it was shown, every figure recomputed from the per-forecast rows."""

from __future__ import annotations

import json
import math
import re
import statistics
from fractions import Fraction

import httpx
import pytest

from hindcast import api
from hindcast.analysis.copying import COLUMNS, copying, shown_price, twins
from hindcast.llm.fake import FakeChatModel, answer
from hindcast.llm.models import Models
from hindcast.markets.store import open_version
from hindcast.replay.spec import ReplaySpec
from hindcast.runs.store import RunStore
from hindcast.scoring.aggregate import ScoredRow
from tests.helpers import SAMPLE_MARKETS, at

T0 = at("2025-06-01T00:00:00")
SHOWN = "zero-shot:model=openai:gpt-4.1-mini,price=1"
TWIN = "zero-shot:model=openai:gpt-4.1-mini"


def row(forecaster, market, p, price, outcome, repeat=0, t0=T0):
    return ScoredRow(
        forecaster,
        market,
        t0,
        "f=0.5",
        "other",
        p,
        None if p is not None else "ForecastError: bad",
        float(outcome),
        price,
        repeat=repeat,
    )


def table(finding):
    return {(r["forecaster"], r["twin"]): r for r in finding.to_json()["rows"]}


# ---- which forecasters, which twins -------------------------------------------------------


def test_shown_the_price_is_a_truthy_price_parameter_read_as_the_registry_reads_it():
    assert (
        shown_price(SHOWN)
        and shown_price("zero-shot:price=1,model=local")
        and shown_price("zero-shot:price=2")
    )
    assert not shown_price(TWIN) and not shown_price("zero-shot:model=local,price=0")
    assert not shown_price("zero-shot:model=local,price=0.0") and not shown_price("market")
    assert not shown_price("zero-shot:model=local,price")  # a spec the registry refuses


def test_the_twin_is_the_same_spec_without_price_or_with_price_0_parameters_in_any_order():
    names = [
        SHOWN,
        TWIN,
        "zero-shot:price=0,model=openai:gpt-4.1-mini",
        "zero-shot:model=openai:gpt-4.1",
        "zero-shot:model=local,temperature=0.0,price=1",
        "zero-shot:temperature=0,model=local",
        "zero-shot:model=local,temperature=0.7",
        "constant:p=0.3",
        "tool-agent:model=local,price=1",
    ]
    assert twins(names) == {
        SHOWN: sorted([TWIN, "zero-shot:price=0,model=openai:gpt-4.1-mini"]),
        "zero-shot:model=local,temperature=0.0,price=1": ["zero-shot:temperature=0,model=local"],
        "tool-agent:model=local,price=1": [],
    }


def test_names_qualified_by_run_find_their_twin_in_the_same_run():
    names = [f"{SHOWN}@run-a", f"{TWIN}@run-a", f"{SHOWN}@run-b", f"{TWIN}@run-c"]
    assert twins(names) == {f"{SHOWN}@run-a": [f"{TWIN}@run-a"], f"{SHOWN}@run-b": []}


# ---- crafted rows, figures by hand --------------------------------------------------------


def test_an_exact_copier_correlates_exactly_1_with_the_price_and_differs_by_exactly_0():
    prices = [0.1, 0.37, 0.62, 0.91, 0.55]
    rows = [row(SHOWN, f"m{i}", p, p, i % 2) for i, p in enumerate(prices)]
    (found,) = copying(rows).to_json()["rows"]
    assert (
        found["correlation"] == 1.0
        and found["mean_abs_diff"] == 0.0
        and found["share_within_0_01"] == 1.0
    )
    assert (found["n_rows"], found["n_failed"], found["n_markets"]) == (5, 0, 5)


def test_copy_figures_mean_abs_diff_and_share_are_the_hand_computed_values():
    # |p − price| = 0, 0, 0.125, 0.0078125 (< 0.01), 0.25 → mean 0.3828125 / 5 = 0.0765625; 3 of 5 within 0.01
    prices = [0.25, 0.5, 0.75, 0.5, 0.25]
    ps = [0.25, 0.5, 0.625, 0.5078125, 0.5]
    found = table(
        copying([row(SHOWN, f"m{i}", p, q, 0) for i, (p, q) in enumerate(zip(ps, prices))])
    )[(SHOWN, None)]
    assert found["mean_abs_diff"] == 0.0765625 and found["share_within_0_01"] == 0.6
    assert found["correlation"] == pytest.approx(statistics.correlation(ps, prices), abs=1e-12)


def test_the_paired_brier_difference_is_the_hand_computed_one_matched_on_market_t0_and_repeat():
    # outcomes 1, 0, 1, 0; shown copies the price, the twin says 0.5 (repeat 0) and 0.25 (repeat 1)
    prices, outcomes = [0.75, 0.25, 0.5, 0.5], [1, 0, 1, 0]
    rows = []
    for i, (q, o) in enumerate(zip(prices, outcomes)):
        for rep, twin_p in ((0, 0.5), (1, 0.25)):
            rows += [row(SHOWN, f"m{i}", q, q, o, rep), row(TWIN, f"m{i}", twin_p, q, o, rep)]
    found = table(copying(rows))[(SHOWN, TWIN)]
    shown = [(q - o) ** 2 for q, o in zip(prices, outcomes)] * 2  # 1/16, 1/16, 1/4, 1/4 per repeat
    twin = [(0.5 - o) ** 2 for o in outcomes] + [(0.25 - o) ** 2 for o in outcomes]
    assert (found["n_paired"], found["n_markets_paired"]) == (8, 4)
    assert found["brier_paired"] == 0.15625 == sum(shown) / 8
    assert (
        found["twin_brier_paired"] == sum(twin) / 8 == 0.28125
    )  # (4 · 1/4 + 2 · 9/16 + 2 · 1/16) / 8
    assert found["brier_diff"] == -0.125  # by hand: (1.25 − 2.25) / 8
    assert found["correlation_paired"] == 1.0
    assert (
        found["twin_correlation_paired"] == 0.0
    )  # the twin varies with the repeat only, not with the price
    assert found["diff_ci_low"] is None and any(
        "n too small: 4 markets" in n for n in copying(rows).notes
    )


def test_twin_correlation_and_interval_from_five_markets():
    prices, outcomes, twin_ps = (
        [0.1, 0.3, 0.5, 0.7, 0.9],
        [0, 0, 1, 1, 1],
        [0.2, 0.2, 0.4, 0.6, 0.5],
    )
    rows = [
        r
        for i, (q, o, t) in enumerate(zip(prices, outcomes, twin_ps))
        for r in (row(SHOWN, f"m{i}", q, q, o), row(TWIN, f"m{i}", t, q, o))
    ]
    found = table(copying(rows))[(SHOWN, TWIN)]
    assert found["twin_correlation_paired"] == pytest.approx(
        statistics.correlation(twin_ps, prices), abs=1e-12
    )
    diff = sum((q - o) ** 2 - (t - o) ** 2 for q, o, t in zip(prices, outcomes, twin_ps)) / 5
    assert found["brier_diff"] == pytest.approx(diff, abs=1e-15)
    assert found["diff_ci_low"] <= found["brier_diff"] <= found["diff_ci_high"]
    assert (
        copying(rows).to_json() == copying(list(reversed(rows))).to_json()
    )  # seeded: the same rows, the same bytes


def test_failures_are_counted_and_never_imputed_on_either_side():
    rows = [
        row(SHOWN, "m0", 0.5, 0.5, 1),
        row(TWIN, "m0", 0.25, 0.5, 1),
        row(SHOWN, "m1", None, 0.75, 0),
        row(TWIN, "m1", 0.5, 0.75, 0),  # the shown one failed
        row(SHOWN, "m2", 0.25, 0.25, 0),
        row(TWIN, "m2", None, 0.25, 0),  # the twin failed
        row(SHOWN, "m3", 0.75, 0.75, 1),
        row(TWIN, "m3", 0.5, 0.75, 1),
    ]
    found = table(copying(rows))[(SHOWN, TWIN)]
    assert (found["n_rows"], found["n_failed"], found["n_markets"]) == (4, 1, 3)
    assert found["n_paired"] == 2 and found["brier_paired"] == (0.25 + 0.0625) / 2
    assert found["twin_brier_paired"] == (0.5625 + 0.25) / 2 and found["brier_diff"] == -0.25


def test_rows_without_a_price_are_left_out_and_counted_in_a_note():
    rows = [
        row(SHOWN, "m0", 0.5, 0.5, 1),
        row(SHOWN, "m1", 0.25, 0.25, 0),
        row(SHOWN, "m2", None, None, 0),
    ]
    finding = copying(rows)
    found = table(finding)[(SHOWN, None)]
    assert found["n_rows"] == 2 and found["n_failed"] == 0 and found["correlation"] == 1.0
    assert f"{SHOWN}: 1 row without a market price at t0 left out" in finding.notes


def test_a_forecaster_without_a_twin_keeps_its_copy_figures_and_a_note_says_no_paired_comparison():
    finding = copying(
        [
            row(SHOWN, "m0", 0.5, 0.5, 1),
            row(SHOWN, "m1", 0.25, 0.25, 0),
            row("market", "m0", 0.5, 0.5, 1),
        ]
    )
    (found,) = finding.to_json()["rows"]
    assert found["forecaster"] == SHOWN and found["twin"] is None and found["correlation"] == 1.0
    assert all(found[c] is None for c in COLUMNS[8:])
    assert any(
        n.startswith(f"{SHOWN}: no price-less twin") and "no paired comparison" in n
        for n in finding.notes
    )


def test_no_forecaster_shown_the_price_is_an_empty_finding_that_says_so():
    finding = copying([row(TWIN, "m0", 0.5, 0.5, 1), row("market", "m0", 0.5, 0.5, 1)])
    assert (
        finding.key == "copying"
        and finding.rows == ()
        and "no forecaster shown the market price" in finding.notes[-1]
    )


# ---- end to end: a sweep of the sample with the fake model copying the price ----------------

ROUNDED = "openai-compatible:http://fake.invalid/v1#copies-the-shown-price"
EXACT = "openai-compatible:http://fake.invalid/v1#copies-the-exact-price"
FIXED = 0.3  # what every forecaster answers when it is shown no price
PROMPT_PRICE = re.compile(r"last traded YES at ([0-9.]+) \(on (\S+)\)")
PROMPT_QUESTION = re.compile(r"^Question: (.*)$", re.MULTILINE)


def scripted(exact_prices):
    """The fake's answer to a request: the price shown (as the prompt wrote it, 2 decimals) for
    the rounding copier; the exact stored price at the shown instant for the
    exact copier; else FIXED."""

    def reply(body):
        text = body["messages"][-1]["content"]
        shown = PROMPT_PRICE.search(text)
        if shown is None:
            return answer(json.dumps({"probability": FIXED}))
        if body["model"] == "copies-the-shown-price":
            return answer(json.dumps({"probability": float(shown.group(1))}))
        return answer(
            json.dumps(
                {
                    "probability": exact_prices[
                        (PROMPT_QUESTION.search(text).group(1), shown.group(2))
                    ]
                }
            )
        )

    return reply


def exact_prices():
    """(question, price instant) → the stored price: what the exact copier looks up."""
    from hindcast.timeutil import iso

    bundle = open_version(SAMPLE_MARKETS).bundle
    questions = {m.id: m.question.strip() for m in bundle.markets}
    return {
        (questions[mid], iso(p.t)): p.p for mid, points in bundle.prices.items() for p in points
    }


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    out = tmp_path_factory.mktemp("copying")
    fake = FakeChatModel(default=scripted(exact_prices()))
    specs = tuple(f"zero-shot:model={m}{p}" for m in (ROUNDED, EXACT) for p in (",price=1", ""))
    store = RunStore(f"sqlite:///{out / 'h.db'}")
    with Models(http=lambda: httpx.AsyncClient(transport=fake.transport())) as models:
        result = api.sweep(
            ReplaySpec(store=SAMPLE_MARKETS, limit=5, fractions=(0.5,), forecasters=specs),
            runs=store,
            out=out,
            now=at("2026-11-30T00:00:00"),
            models=models,
        )
    rows = api.rescore(store, result.run_id).rows
    return rows, copying(rows), fake


def per_forecaster(rows, model, shown):
    name = f"zero-shot:model={model}" + (",price=1" if shown else "")
    return {(r.market_id, r.t0, r.repeat): r for r in rows if r.forecaster == name}


def test_the_sweep_asked_every_forecaster_once_per_market_and_none_failed(swept):
    rows, _, fake = swept
    assert (
        len(rows) == 20
        and len(fake.requests) == 20
        and all(r.probability is not None for r in rows)
    )
    assert all(
        r.market_price is not None for r in rows
    )  # each of the 5 markets has a price before t0


def test_the_exact_copier_correlates_exactly_1_and_differs_by_exactly_0(swept):
    _, finding, _ = swept
    found = table(finding)[(f"zero-shot:model={EXACT},price=1", f"zero-shot:model={EXACT}")]
    assert (
        found["correlation"] == 1.0
        and found["mean_abs_diff"] == 0.0
        and found["share_within_0_01"] == 1.0
    )
    assert (found["n_rows"], found["n_failed"], found["n_markets"], found["n_paired"]) == (
        5,
        0,
        5,
        5,
    )


def test_the_copier_of_the_shown_price_matches_the_figures_recomputed_from_its_rows(swept):
    rows, finding, _ = swept
    shown, twin = per_forecaster(rows, ROUNDED, True), per_forecaster(rows, ROUNDED, False)
    assert all(
        r.probability == float(f"{r.market_price:.2f}") for r in shown.values()
    )  # what the prompt showed
    assert all(r.probability == FIXED for r in twin.values())
    found = table(finding)[(f"zero-shot:model={ROUNDED},price=1", f"zero-shot:model={ROUNDED}")]
    ps, prices = [r.probability for r in shown.values()], [r.market_price for r in shown.values()]
    assert (
        found["share_within_0_01"] == 1.0
    )  # rounding to 2 decimals moves a price by 0.005 at most
    assert found["mean_abs_diff"] == pytest.approx(
        math.fsum(abs(p - q) for p, q in zip(ps, prices)) / 5, abs=1e-15
    )
    assert found["correlation"] == pytest.approx(statistics.correlation(ps, prices), abs=1e-12)
    assert found["twin_correlation_paired"] is None  # a constant answer has no correlation


def test_the_paired_brier_difference_is_the_one_computed_from_the_per_forecast_rows(swept):
    rows, finding, _ = swept
    for model in (ROUNDED, EXACT):
        shown, twin = per_forecaster(rows, model, True), per_forecaster(rows, model, False)
        by_hand = [Fraction(shown[k].brier) - Fraction(twin[k].brier) for k in sorted(shown)]
        found = table(finding)[(f"zero-shot:model={model},price=1", f"zero-shot:model={model}")]
        assert found["brier_diff"] == pytest.approx(float(sum(by_hand) / len(by_hand)), abs=1e-15)
        assert found["twin_brier_paired"] == pytest.approx(
            math.fsum(r.brier for r in twin.values()) / 5, abs=1e-15
        )
        assert (
            found["diff_ci_low"] <= found["brier_diff"] <= found["diff_ci_high"]
        )  # 5 markets: an interval
