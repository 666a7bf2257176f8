"""The run store: runs and every forecast (probability or failure) in SQL via sqlmodel.

SQLite in WAL mode by default (`sqlite:///runs/hindcast.db`); any SQLAlchemy URL works.
Each forecast is committed as it arrives, keyed by (run, forecaster, market, t0), so a
killed sweep resumes with nothing lost and nothing duplicated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from sqlalchemy import UniqueConstraint, event
from sqlalchemy.exc import IntegrityError
from sqlmodel import Field, Session, SQLModel, create_engine, select

from hindcast.errors import RunStoreError
from hindcast.records import Forecast
from hindcast.timeutil import iso, parse_utc


class RunRow(SQLModel, table=True):
    __tablename__ = "runs"
    id: str = Field(primary_key=True)
    created_at: str
    spec_json: str
    manifest_json: str


class ForecastRow(SQLModel, table=True):
    __tablename__ = "forecasts"
    __table_args__ = (UniqueConstraint("run_id", "forecaster", "market_id", "t0", "repeat", name="one_forecast"),)
    id: Optional[int] = Field(default=None, primary_key=True)
    run_id: str = Field(index=True, foreign_key="runs.id")
    forecaster: str
    market_id: str
    t0: str  # canonical ISO UTC text: sortable and byte-stable
    label: str
    repeat: int = 0
    probability: Optional[float] = None
    error: Optional[str] = None
    rationale: str = ""
    evidence_json: str = "[]"
    usage_json: str = "{}"
    retrievals_json: str = "[]"  # every archive call: op, query, ids returned
    raw: str = ""


class CoverageRow(SQLModel, table=True):
    """The archive-only coverage label of one (market, t0) of a run."""

    __tablename__ = "coverage"
    run_id: str = Field(primary_key=True, foreign_key="runs.id")
    market_id: str = Field(primary_key=True)
    t0: str = Field(primary_key=True)
    n_relevant: int
    stratum: str


@dataclass(frozen=True)
class StoredForecast:
    run_id: str
    forecaster: str
    market_id: str
    t0: object  # datetime
    label: str
    forecast: Forecast
    repeat: int = 0


class RunStore:
    def __init__(self, url: str):
        self.url = url
        self.engine = _engine(url)
        SQLModel.metadata.create_all(self.engine)
        _check_schema(self.engine, url)

    def ensure_run(self, run_id: str, spec: dict, manifest: dict, created_at) -> bool:
        """Create the run if new; return False when it already existed (a resume)."""
        with Session(self.engine) as session:
            if session.get(RunRow, run_id) is not None:
                return False
            session.add(RunRow(id=run_id, created_at=iso(created_at), spec_json=_dumps(spec), manifest_json=_dumps(manifest)))
            session.commit()
            return True

    def run(self, run_id: str) -> RunRow:
        with Session(self.engine) as session:
            row = session.get(RunRow, run_id)
        if row is None:
            raise RunStoreError(f"no run {run_id!r} in {self.url}")
        return row

    def runs(self) -> list[RunRow]:
        with Session(self.engine) as session:
            return list(session.exec(select(RunRow).order_by(RunRow.created_at, RunRow.id)))

    def done_keys(self, run_id: str) -> set[tuple[str, str, str, int]]:
        """(forecaster, market_id, t0 ISO, repeat) of every forecast already stored for a run."""
        with Session(self.engine) as session:
            rows = session.exec(select(ForecastRow.forecaster, ForecastRow.market_id, ForecastRow.t0, ForecastRow.repeat)
                                .where(ForecastRow.run_id == run_id))
            return {tuple(r) for r in rows}

    def add(self, run_id: str, forecaster: str, market_id: str, t0, label: str, forecast: Forecast,
            retrievals: tuple = (), repeat: int = 0) -> bool:
        """Store one forecast; False if that key was already stored (never a duplicate)."""
        row = ForecastRow(run_id=run_id, forecaster=forecaster, market_id=market_id, t0=iso(t0), label=label, repeat=repeat,
                          probability=forecast.probability, error=forecast.error, rationale=forecast.rationale,
                          evidence_json=_dumps(list(forecast.evidence)), usage_json=_dumps(forecast.usage),
                          retrievals_json=_dumps(list(retrievals)), raw=forecast.raw)
        with Session(self.engine) as session:
            session.add(row)
            try:
                session.commit()
            except IntegrityError:
                session.rollback()
                return False
        return True

    def add_coverage(self, run_id: str, market_id: str, t0, n_relevant: int, stratum: str) -> None:
        with Session(self.engine) as session:
            session.merge(CoverageRow(run_id=run_id, market_id=market_id, t0=iso(t0), n_relevant=n_relevant, stratum=stratum))
            session.commit()

    def coverage(self, run_id: str) -> dict[tuple[str, object], str]:
        """(market_id, t0) → stratum, for the cutoffs labelled so far."""
        with Session(self.engine) as session:
            rows = session.exec(select(CoverageRow).where(CoverageRow.run_id == run_id))
            return {(r.market_id, parse_utc(r.t0)): r.stratum for r in rows}

    def forecasts(self, run_id: str) -> list[StoredForecast]:
        self.run(run_id)
        with Session(self.engine) as session:
            rows = session.exec(select(ForecastRow).where(ForecastRow.run_id == run_id)
                                .order_by(ForecastRow.forecaster, ForecastRow.market_id, ForecastRow.t0, ForecastRow.repeat))
            return [_stored(row) for row in rows]


def default_url(runs_dir: Path) -> str:
    return f"sqlite:///{Path(runs_dir) / 'hindcast.db'}"


def _engine(url: str):
    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    try:
        engine = create_engine(url)
    except Exception as exc:  # SQLAlchemy raises several types for a bad URL
        raise RunStoreError(f"cannot open run database {url!r}: {exc}") from exc
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _check_schema(engine, url: str) -> None:
    from sqlalchemy import inspect

    columns = {c["name"] for c in inspect(engine).get_columns("forecasts")}
    missing = {c.name for c in ForecastRow.__table__.columns} - columns
    if missing:
        raise RunStoreError(f"run database {url} was written by an older hindcast (no column(s) "
                            f"{', '.join(sorted(missing))}); point --db at a new database")


def _sqlite_pragmas(connection, _record) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: every commit survives a killed process
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()


def _stored(row: ForecastRow) -> StoredForecast:
    forecast = Forecast(probability=row.probability, error=row.error, rationale=row.rationale,
                        evidence=tuple(json.loads(row.evidence_json)), usage=json.loads(row.usage_json), raw=row.raw)
    return StoredForecast(row.run_id, row.forecaster, row.market_id, parse_utc(row.t0), row.label, forecast, row.repeat)


def _dumps(value) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
