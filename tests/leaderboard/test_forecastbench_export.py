"""`hindcast leaderboard RUN --format forecastbench`: a sweep of questions imported from real
ForecastBench question sets, exported as ForecastBench forecast sets that validate against the
schema of forecastbench commit 05f612e (tests/fixtures/forecastbench_forecast_set/schema.json)
and read back to the same probabilities."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import jsonschema
import pytest

from hindcast.leaderboard.forecastbench import forecast_sets, read_forecast_set
from tests.helpers import run_cli
from tests.markets.sweep_support import sweep_and_export

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCHEMA = json.loads((FIXTURES / "forecastbench_forecast_set" / "schema.json").read_text())


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fbexport")
    store = tmp / "store"
    imported = run_cli(
        "markets",
        "import",
        "forecastbench-datasets",
        str(FIXTURES / "forecastbench_datasets"),
        "--store",
        str(store),
    )
    assert imported.returncode == 0, imported.stderr
    return sweep_and_export(store, tmp, ("market", "constant"), "--format", "csv,forecastbench")


def test_every_forecast_set_validates_against_forecastbenchs_schema(exported):
    files = sorted((exported / "forecastbench").glob("*.json"))
    assert len(files) >= 2
    for path in files:
        body = json.loads(path.read_text(encoding="utf-8"))
        jsonschema.validate(body, SCHEMA)
        assert path.name.startswith(body["forecast_due_date"] + ".hindcast.")
        assert body["question_set"] == "2025-10-26-llm.json"


def test_a_forecast_set_read_back_gives_the_runs_probabilities(exported):
    rows = list(csv.DictReader(open(exported / "forecasts.csv", encoding="utf-8")))
    read = {}
    for path in (exported / "forecastbench").glob("*.json"):
        body = json.loads(path.read_text(encoding="utf-8"))
        read[body["model"]] = read_forecast_set(path)
    checked = 0
    for row in rows:
        if not row["probability"]:
            continue
        _, _, source, qid = row["market_id"].split(":", 3)
        got = read[f"{row['forecaster']} [{row['label']}]"][(source, qid)]
        assert got == float(row["probability"])
        checked += 1
    assert checked == sum(len(v) for v in read.values()) > 0


def test_the_schema_refuses_what_forecastbench_would_drop():
    good = {
        "organization": "o",
        "model": "m",
        "model_organization": "o",
        "question_set": "2025-10-26-llm.json",
        "forecasts": [{"id": "1", "source": "metaculus", "forecast": 0.3}],
    }
    jsonschema.validate(good, SCHEMA)
    for bad in (
        {**good, "forecasts": []},
        {**good, "question_set": "latest-llm.json"},
        {**good, "forecasts": [{"id": "1", "source": "kalshi", "forecast": 0.3}]},
        {**good, "forecasts": [{"id": "1", "source": "metaculus", "forecast": 1.3}]},
        {**good, "forecasts": [{"id": "KEY", "source": "yfinance", "forecast": 0.3}]},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, SCHEMA)


def test_markets_from_elsewhere_and_failures_are_left_out_and_counted():
    record = {"run_id": "r", "forecaster": "f", "label": "f=0.5", "t0": "x", "repeat": 0}
    sets, left = forecast_sets(
        [
            {**record, "market_id": "fb:2025-10-26:polymarket:0xab", "probability": 0.4},
            {**record, "market_id": "kalshi:KX-1", "probability": 0.4},
            {**record, "market_id": "fb:2025-10-26:manifold:abc", "probability": None},
        ]
    )
    assert list(sets) == ["2025-10-26.hindcast.f.f-0-5.json"]
    assert left == {
        "not a ForecastBench question (no round)": 1,
        "no forecast (a failure: counted, never imputed)": 1,
    }
