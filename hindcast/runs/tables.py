"""The run database's tables (SQLModel): runs, forecasts, infrastructure attempts, retrieval
coverage and claims."""

from __future__ import annotations

from typing import Optional

from sqlalchemy import UniqueConstraint
from sqlmodel import Field, SQLModel


class RunRow(SQLModel, table=True):
    __tablename__ = "runs"
    id: str = Field(primary_key=True)
    created_at: str
    spec_json: str
    manifest_json: str


class ForecastRow(SQLModel, table=True):
    __tablename__ = "forecasts"
    __table_args__ = (
        UniqueConstraint(
            "run_id",
            "forecaster",
            "market_id",
            "t0",
            "repeat",
            "attempt",
            name="one_forecast_attempt",
        ),
    )
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
    attempt: int = 0  # 0, then 1, 2 … for each retry of a stored failure (the newest one counts)


class AttemptRow(SQLModel, table=True):
    """One outage: a forecast that could not be asked (never a stored forecast)."""

    __tablename__ = "attempts"
    id: Optional[int] = Field(default=None, primary_key=True)
    run_id: str = Field(index=True)
    forecaster: str
    market_id: str
    t0: str
    repeat: int = 0
    kind: str  # "infrastructure"
    reason: str
    at: str  # the sweep's `now` (ISO UTC)


class CoverageRow(SQLModel, table=True):
    """The archive-only coverage label of one (market, t0) of a run."""

    __tablename__ = "coverage"
    run_id: str = Field(primary_key=True, foreign_key="runs.id")
    market_id: str = Field(primary_key=True)
    t0: str = Field(primary_key=True)
    n_relevant: int
    stratum: str


class ClaimRow(SQLModel, table=True):
    """A lease: `owner` (one sweep process) is asking this forecast until `expires_at` (seconds
    since the epoch, by the sweep's clock); a claim past it, or of an owner known to be gone,
    may be taken by another process. Deleted once the forecast is stored or given up."""

    __tablename__ = "claims"
    run_id: str = Field(primary_key=True)
    forecaster: str = Field(primary_key=True)
    market_id: str = Field(primary_key=True)
    t0: str = Field(primary_key=True)
    repeat: int = Field(primary_key=True)
    attempt: int = Field(primary_key=True)
    owner: str
    expires_at: float


CLAIMS = ClaimRow.__table__  # type: ignore[attr-defined]  # the claims table, for plain SQL
