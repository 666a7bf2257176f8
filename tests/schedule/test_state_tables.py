"""The service's tables (sqlmodel, the run store's idiom) keep the exact shape the previous
release wrote, so a run database stays readable by either, and stay out of the run store's
own tables."""

from __future__ import annotations

import sqlite3

from sqlmodel import create_engine

from hindcast.runs.store import RunStore
from hindcast.schedule.state import State
from tests.helpers import ROOT, at

RELEASE = ROOT / "tests" / "fixtures" / "runs" / "release_1d68a1e.db"  # written by release 1d68a1e


def service_tables(path) -> list[tuple[str, str, str | None]]:
    with sqlite3.connect(path) as db:
        rows = sorted(
            db.execute("SELECT type, name, sql FROM sqlite_master WHERE tbl_name LIKE 'schedule_%'")
        )
    db.close()
    return rows


def test_the_service_tables_are_created_exactly_as_the_previous_release_wrote_them(tmp_path):
    engine = create_engine(f"sqlite:///{tmp_path / 'new.db'}")
    State(engine)
    engine.dispose()
    assert service_tables(tmp_path / "new.db") == service_tables(RELEASE) != []


def test_a_run_database_the_service_never_opened_has_none_of_its_tables(tmp_path):
    RunStore(f"sqlite:///{tmp_path / 'h.db'}").close()
    assert service_tables(tmp_path / "h.db") == []


def test_rows_written_through_state_read_back_as_records(tmp_path):
    engine = create_engine(f"sqlite:///{tmp_path / 'h.db'}")
    state = State(engine)
    first = state.job_started("pull", at("2026-01-01T00:00:00"), at("2026-01-01T00:00:01"))
    second = state.job_started("sweeps", at("2026-01-01T00:00:00"), at("2026-01-01T00:00:02"))
    state.job_finished(first, "ok", at("2026-01-01T00:00:05"), {"markets": 2})
    assert state.interrupt_running(at("2026-01-01T00:01:00")) == 1
    assert [(r.id, r.job, r.status, r.detail) for r in state.job_runs()] == [
        (second, "sweeps", "interrupted", {}),
        (first, "pull", "ok", {"markets": 2}),
    ]
    state.set("a:x", {"n": 1})
    state.set_many({"a:x": 2, "a:y": [1]})
    assert state.values("a:") == {"a:x": 2, "a:y": [1]} and state.get("missing", "d") == "d"
    state.record_ingest([("f.zst", "00" * 32, "reddit")], "snap", at("2026-01-01T00:00:00"))
    assert state.ingested() == {("f.zst", "00" * 32)} and state.get("archive:indexed") == "snap"
    batch = state.open_batch(
        "daily", {"market_ids": ["m1"], "forecasters": ["a", "b"]}, at("2026-01-01T00:00:00")
    )
    assert (batch.status, batch.markets, batch.forecasters) == ("pending", 1, ("a", "b"))
    state.close_batch(batch.id, "r-1", at("2026-01-01T00:00:09"))
    assert [(b.status, b.run_id, b.finished) for b in state.batches("daily")] == [
        ("done", "r-1", "2026-01-01T00:00:09Z")
    ]
    engine.dispose()
