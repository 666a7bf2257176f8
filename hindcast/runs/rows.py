"""Stored forecasts as records and back: `forecast_row` (a Forecast → its table row),
`stored_forecast` (a row → the StoredForecast readers get) and `stored_details` (what each
forecast of a run read and wrote)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlmodel import Session, select

from hindcast.records import Forecast, Retrieval, Usage
from hindcast.runs.forms import retrievals_form, retrievals_of
from hindcast.runs.tables import ForecastRow
from hindcast.timeutil import iso, parse_utc

if TYPE_CHECKING:
    from hindcast.runs.store import RunStore


@dataclass(frozen=True)
class StoredForecast:
    run_id: str
    forecaster: str
    market_id: str
    t0: datetime
    label: str
    forecast: Forecast
    repeat: int = 0


def forecast_row(
    run_id: str,
    forecaster: str,
    market_id: str,
    t0: datetime,
    label: str,
    forecast: Forecast,
    retrievals: tuple[Retrieval, ...] = (),
    repeat: int = 0,
    attempt: int = 0,
) -> dict[str, Any]:
    """The stored form of one forecast, column by column (`RunStore.add`; `runs.batch.add_many`
    inserts these without building a row object each)."""
    return {
        "run_id": run_id,
        "forecaster": forecaster,
        "market_id": market_id,
        "t0": iso(t0),
        "label": label,
        "repeat": repeat,
        "probability": forecast.probability,
        "error": forecast.error,
        "rationale": forecast.rationale,
        "evidence_json": dumps(list(forecast.evidence)),
        "usage_json": dumps(forecast.usage.to_dict()),
        "retrievals_json": dumps(retrievals_form(retrievals)),
        "raw": forecast.raw,
        "attempt": attempt,
    }


def stored_forecast(row: ForecastRow) -> StoredForecast:
    forecast = Forecast(
        probability=row.probability,
        error=row.error,
        rationale=row.rationale,
        evidence=tuple(json.loads(row.evidence_json)),
        usage=Usage.of(json.loads(row.usage_json)),
        raw=row.raw,
    )
    return StoredForecast(
        row.run_id,
        row.forecaster,
        row.market_id,
        parse_utc(row.t0),
        row.label,
        forecast,
        row.repeat,
    )


def dumps(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class Detail:
    """What the run store kept of one forecast beyond its score."""

    rationale: str = ""
    raw: str = ""
    retrievals: tuple[Retrieval, ...] = ()  # every call of the retrieval log


def stored_details(store: RunStore, run_id: str) -> dict[tuple, Detail]:
    """(run, forecaster, market, t0 ISO, repeat) → Detail of the newest attempt of each key."""
    f = ForecastRow
    query = (
        # SQLModel's select() is typed for up to 4 columns (a stubs gap, not a type error)
        select(  # type: ignore[call-overload]
            f.forecaster, f.market_id, f.t0, f.repeat, f.rationale, f.raw, f.retrievals_json
        )
        .where(f.run_id == run_id)
        .order_by(f.forecaster, f.market_id, f.t0, f.repeat, f.attempt)
    )
    with Session(store.engine) as session:
        rows = list(session.exec(query))
    return {
        (run_id, name, market, t0, repeat): Detail(
            rationale, raw, retrievals_of(json.loads(calls or "[]"))
        )
        for name, market, t0, repeat, rationale, raw, calls in rows
    }  # the newest attempt comes last
