"""The shipped hand labels of evidence strata (data/evidence_labels) and the recorded figures of
the procedure against them (benchmarks/evidence_strata.py): the labels' shape, the figures
recomputed from the labels and the recorded predictions, and — where the shipped archive's
index is built — the predictions recomputed by the procedure itself."""

from __future__ import annotations

import json

import pytest

from benchmarks.evidence_strata import HAND, MEASURED, default_plan, figures, load_hand, predict
from hindcast.audit import evidence
from tests.integration.archive_support import shipped_snapshot


@pytest.fixture(scope="module")
def hand():
    return load_hand(HAND)


@pytest.fixture(scope="module")
def measured():
    return json.loads(MEASURED.read_text("utf-8"))


def test_at_least_100_distinct_pairs_each_labelled_present_or_absent(hand):
    assert len(hand) >= 100
    assert len({(h["market_id"], h["t0"]) for h in hand}) == len(hand)
    assert {h["label"] for h in hand} <= {"present", "absent"}
    assert all(h["question"] and h["cutoff"] and "why" in h for h in hand)


def test_the_recorded_figures_follow_from_the_labels_and_the_recorded_predictions(hand, measured):
    predicted = {tuple(k.split("@")): v for k, v in measured["predicted"].items()}
    assert set(predicted) == {(h["market_id"], h["t0"]) for h in hand}
    assert figures(hand, predicted) == measured["figures"]
    assert measured["labelled_pairs"] == len(hand)
    assert measured["procedure"] == evidence.PROCEDURE


@pytest.mark.skipif(shipped_snapshot() is None, reason="the shipped archive is not embedded")
def test_the_procedure_computes_the_recorded_predictions(hand, measured):
    pairs = {(h["market_id"], h["t0"]) for h in hand}
    computed, _ = predict(default_plan(), pairs)
    assert {f"{m}@{t0}": label.stratum for (m, t0), label in computed.items()} == measured[
        "predicted"
    ]
