"""`markets import forecastbench-datasets --include data,combination` on real excerpts of the
2024-07-21 round (tests/fixtures/forecastbench_datasets_2024, CC BY-SA 4.0, see its README):
skipped with their reason unless asked for; asked for, one question per resolved row, counts
equal to an independent parse, outcomes equal to `resolved_to`, unresolved rows never an
outcome, texts with placeholders filled, opening at the freeze instant and said so."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from hindcast.markets.store import open_version
from tests.helpers import run_cli

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "forecastbench_datasets_2024"
QUESTIONS = FIXTURE / "datasets" / "question_sets" / "2024-07-21-human.json"
RESOLUTIONS = FIXTURE / "datasets" / "resolution_sets" / "2024-07-21_resolution_set.json"
DATA = {"acled", "dbnomics", "fred", "wikipedia", "yfinance"}
SAID = "have no market price and open at freeze_datetime: replay them at their freeze instants only"


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def expected() -> dict[str, dict[str, int]]:
    """Per source, straight from the files: market questions imported (a single resolved row),
    data questions (one per resolved row of its id), combinations (one per resolved list-id row
    whose two members are questions of the round)."""
    rows = load(RESOLUTIONS)["resolutions"]
    asked = {(q["source"], q["id"]) for q in load(QUESTIONS)["questions"]}
    out: dict[str, dict[str, int]] = {}
    for row in rows:
        counts = out.setdefault(row["source"], {"market": 0, "data": 0, "combination": 0})
        if not row["resolved"]:
            continue
        if isinstance(row["id"], list):
            counts["combination"] += all((row["source"], i) in asked for i in row["id"])
        elif (row["source"], row["id"]) in asked:
            counts["data" if row["source"] in DATA else "market"] += 1
    return out


def run_import(store: Path, *extra: str):
    return run_cli(
        "markets", "import", "forecastbench-datasets", str(FIXTURE), "--store", str(store), *extra
    )


@pytest.fixture(scope="module")
def included(tmp_path_factory):
    store = tmp_path_factory.mktemp("included") / "store"
    proc = run_import(store, "--include", "data,combination")
    assert proc.returncode == 0, proc.stderr
    return proc, open_version(store).bundle


def test_without_include_data_and_combination_questions_are_skipped_with_their_reason(tmp_path):
    proc = run_import(tmp_path / "store", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)["by_source"]
    assert report["fred"]["imported"] == 0
    assert report["fred"]["skipped"] == {"data question: no market price to replay against": 2}
    want = expected()
    for source in ("polymarket", "manifold"):
        assert report[source]["imported"] == want[source]["market"]
        assert report[source]["data_or_combination"] == 0
    assert SAID not in proc.stdout


def test_included_counts_per_source_equal_an_independent_parse(included):
    proc, bundle = included
    want = expected()
    kinds: dict[str, dict[str, int]] = {}
    for market in bundle.markets:
        _, due, source, rest = market.id.split(":", 3)
        assert due == "2024-07-21"
        kind = "combination" if "+" in rest else "data" if source in DATA else "market"
        counts = kinds.setdefault(source, {"market": 0, "data": 0, "combination": 0})
        counts[kind] += 1
    assert kinds == want
    assert want["fred"] == {"market": 0, "data": 9, "combination": 16}  # the excerpt's README
    assert want["manifold"]["combination"] == 2  # 2 of its 4 combination rows are unresolved
    assert f"combination and data questions (--include) {SAID}" in proc.stdout


def test_each_included_outcome_is_its_resolved_row_and_unresolved_rows_are_none(included):
    _, bundle = included
    outcomes = {r.market_id: r.outcome for r in bundle.resolutions}
    by_key = {}
    for row in load(RESOLUTIONS)["resolutions"]:
        if isinstance(row["id"], list):
            da, db = row["direction"]
            key = f"{'+'.join(row['id'])}:{da:+d}{db:+d}:{row['resolution_date']}"
        elif row["source"] in DATA:
            key = f"{row['id']}:{row['resolution_date']}"
        else:
            key = row["id"]
        by_key[f"fb:2024-07-21:{row['source']}:{key}"] = row
    for market_id, outcome in outcomes.items():
        row = by_key[market_id]
        assert row["resolved"] and outcome == row["resolved_to"]
    unresolved = {k for k, r in by_key.items() if not r["resolved"]}
    assert len(unresolved) == 3 and not unresolved & set(outcomes)


def test_included_questions_open_at_the_freeze_with_their_texts_filled(included):
    _, bundle = included
    questions = {(q["source"], q["id"]): q for q in load(QUESTIONS)["questions"]}
    freeze = datetime.fromisoformat(next(iter(questions.values()))["freeze_datetime"])
    for market in bundle.markets:
        source, rest = market.id.split(":", 3)[2:]
        if source not in DATA and "+" not in rest:
            continue  # a market question: as before
        assert market.opened_at == freeze and bundle.prices.get(market.id) is None
        assert "{resolution_date}" not in market.question
        assert "{forecast_due_date}" not in market.question
        assert bundle.meta[market.id].rules_updated_at == freeze
        if "+" in rest:
            pair, direction, date = rest.split(":")
            a, b = (questions[(source, i)]["question"] for i in pair.split("+"))
            said = {"+1": "Yes", "-1": "No"}
            ask = f"question 1 resolve {said[direction[:2]]} and question 2 resolve "
            assert ask + said[direction[2:]] in market.question
            filled = (x.replace("{resolution_date}", date) for x in (a, b))
            a, b = (x.replace("{forecast_due_date}", "2024-07-21") for x in filled)
            assert f"Question 1: {a}" in market.question and f"Question 2: {b}" in market.question


def test_a_bad_include_is_one_line_and_writes_nothing(tmp_path):
    proc = run_import(tmp_path / "store", "--include", "data,markets")
    assert proc.returncode == 2 and "--include" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "store").exists()
