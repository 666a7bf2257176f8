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


def test_data_and_combination_questions_export_with_their_id_date_and_direction():
    """The questions `--include data,combination` imports (tests/fixtures/
    forecastbench_datasets_2024) are exported as ForecastBench names them: a data question by
    id and resolution date, a combination by its id pair and direction pair; read back whole."""
    ids = {
        "fb:2024-07-21:fred:BAMLCC0A0CMTRIV:2024-08-20": ("BAMLCC0A0CMTRIV", "2024-08-20", None),
        "fb:2024-07-21:fred:BAMLCC0A0CMTRIV+REAINTRATREARAT10Y:+1-1:2024-08-20": (
            ["BAMLCC0A0CMTRIV", "REAINTRATREARAT10Y"],
            "2024-08-20",
            [1, -1],
        ),
        "fb:2024-07-21:manifold:8m4vfMk3QNwgsibJsX2w": ("8m4vfMk3QNwgsibJsX2w", None, None),
    }
    records = [
        {
            "market_id": market_id,
            "probability": 0.25 + n / 10,
            "forecaster": "constant",
            "label": "f=1",
            "run_id": "r-1",
            "t0": "2024-07-12T00:00:01Z",
        }
        for n, market_id in enumerate(ids)
    ]
    sets, left = forecast_sets(records)
    assert not left and len(sets) == 1
    body = next(iter(sets.values()))
    jsonschema.validate(body, SCHEMA)
    got = {(f["id"] if isinstance(f["id"], str) else tuple(f["id"])) for f in body["forecasts"]}
    for f, (qid, date, direction) in zip(body["forecasts"], ids.values()):
        assert (f["id"], f["resolution_date"], f["direction"]) == (qid, date, direction)
    assert len(got) == 3


def test_the_data_and_combination_export_reads_back(tmp_path):
    from hindcast.leaderboard.forecastbench import checked_sets, write_forecast_sets

    records = [
        {
            "market_id": m,
            "probability": p,
            "forecaster": "c",
            "label": "f=1",
            "run_id": "r",
            "t0": "2024-07-12T00:00:01Z",
        }
        for m, p in (
            ("fb:2024-07-21:fred:BAMLCC0A0CMTRIV:2024-08-20", 0.3),
            ("fb:2024-07-21:polymarket:0xa+0xb:-1+1:2024-12-31", 0.4),
            ("fb:2024-07-21:metaculus:1585", 0.5),
        )
    ]
    folder = write_forecast_sets(checked_sets(records), tmp_path)
    (path,) = folder.glob("*.json")
    assert read_forecast_set(path) == {
        ("fred", "BAMLCC0A0CMTRIV:2024-08-20"): 0.3,
        ("polymarket", "0xa+0xb:-1+1:2024-12-31"): 0.4,
        ("metaculus", "1585"): 0.5,
    }
