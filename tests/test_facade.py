"""The facade's operations (hindcast.api) do what the layers below them do, each end to end on
shipped or generated data: sweep → rescore → export, import, pull (a fake Polymarket on
127.0.0.1), ingest → freeze → embed → search. And the facade stays thin; the names front ends use resolve from the package faces."""

from __future__ import annotations

import importlib
import json
from datetime import datetime, timezone
from pathlib import Path

from hindcast import api, markets, replay, runs
from tests.helpers import ROOT, SAMPLE_MARKETS

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)


def test_the_facade_is_at_most_150_lines():
    assert len((ROOT / "hindcast" / "api.py").read_text(encoding="utf-8").splitlines()) <= 150


FACES = (
    "adapters",
    "archive",
    "markets",
    "llm",
    "leaks",
    "forecasters",
    "replay",
    "runs",
    "scoring",
    "analysis",
    "audit",
    "leaderboard",
    "schedule",
    "cli",
)


def test_the_names_the_front_ends_use_resolve_from_the_faces():
    for face, name in (
        ("replay", "select_markets"),
        ("replay", "default_models"),
        ("replay", "board_json"),
        ("replay", "cache_path"),
        ("replay", "prepare"),
        ("api", "sweep"),
        ("api", "sweep_async"),
        ("replay", "load_scored"),
        ("replay", "score_run"),
        ("replay", "leaderboard_of"),
        ("replay", "SweepResult"),
        ("replay", "RunScores"),
        ("replay", "Plan"),
        ("markets", "PullQuery"),
        ("archive", "open_snapshot"),
        ("replay", "ReplaySpec"),
        ("runs", "RunStore"),
    ):
        assert getattr(importlib.import_module(f"hindcast.{face}"), name) is not None, name


def test_every_name_a_face_declares_resolves():
    """A name moved or renamed below a face fails here, not in a front end at run time."""
    missing = [
        f"{face}.{name}"
        for face in FACES
        for name in importlib.import_module(f"hindcast.{face}").__all__
        if getattr(importlib.import_module(f"hindcast.{face}"), name, None) is None
    ]
    assert missing == []


def _swept(tmp_path):
    spec = replay.spec_from_mapping(
        {
            "store": SAMPLE_MARKETS,
            "forecasters": ["market", "constant"],
            "fractions": [1.0],
            "limit": 3,
        }
    )
    store = runs.RunStore(f"sqlite:///{tmp_path / 'h.db'}")
    return api.sweep(spec, runs=store, out=tmp_path / "out", now=NOW), store


def test_rescore_and_export_a_stored_run(tmp_path):
    result, store = _swept(tmp_path)
    scores = api.rescore(store, result.run_id)
    assert len(scores.rows) == result.planned == 6
    assert [(r.forecaster, r.brier) for r in replay.leaderboard_of(scores)] == [
        (r.forecaster, r.brier) for r in result.board
    ]
    published = api.export(store, [result.run_id], tmp_path / "board", ["csv", "md"], by="fraction")
    assert {"leaderboard.csv", "leaderboard.md", "forecasts.csv"} == {
        p.name for p in published.paths.values()
    }
    assert all(p.is_file() for p in published.paths.values())
    assert f"run {result.run_id}" in (tmp_path / "board" / "leaderboard.md").read_text(
        encoding="utf-8"
    )


def test_import_markets_writes_a_version_recording_when(tmp_path):
    source = SAMPLE_MARKETS / "forecastbench"
    version, bundle = api.import_markets(
        tmp_path / "fb", source / "markets.jsonl", source / "prices_daily.csv", now=NOW
    )
    opened = markets.open_version(tmp_path / "fb")
    assert opened.id == version and len(opened.bundle.markets) == len(bundle.markets) > 0
    manifest = json.loads(
        next((tmp_path / "fb" / "versions" / version).glob("manifest.json")).read_text()
    )
    assert "2026-11-30T12:00:00Z" in json.dumps(manifest)


def test_pull_builds_its_own_client(tmp_path):
    from tests.markets.conftest import FakePolymarket, LocalServer

    with LocalServer(FakePolymarket()) as server:
        summary = api.pull(
            tmp_path / "store",
            markets.PullQuery(page_size=5),
            now=NOW,
            gamma_url=f"{server.url}/gamma",
            clob_url=f"{server.url}/clob",
            data_url=f"{server.url}/data",
            attempts=2,
            timeout=20,
        )
    assert summary.stored > 0 and summary.version == markets.open_version(tmp_path / "store").id


def _headlines(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    lines = [
        {
            "id": i,
            "created_utc": int(datetime.fromisoformat(t).replace(tzinfo=timezone.utc).timestamp()),
            "title": title,
            "source": "test",
            "kind": "news_headline",
        }
        for i, t, title in rows
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return path


def test_ingest_freeze_embed_search(tmp_path):
    inputs = _headlines(
        tmp_path / "in.jsonl",
        [
            ("a", "2024-01-05T00:00:00", "rates cut by the central bank"),
            ("b", "2024-02-05T00:00:00", "rates cut again by the bank"),
            ("c", "2024-03-05T00:00:00", "an election is called"),
        ],
    )
    archive = tmp_path / "archive"
    (summary,) = api.ingest([inputs], "test", "headlines", archive)
    assert summary.written == 3
    snapshot = api.freeze(archive)
    info = api.embed(archive, snapshot, "hash")
    assert (info["snapshot"], info["documents"]) == (snapshot, 3)
    hits = api.search(
        archive, "rates cut", datetime(2024, 2, 5, tzinfo=timezone.utc), k=5, mode="text"
    )
    assert [h.doc.id for h in hits] == ["a"]  # b was created at t0 exactly: not before it
