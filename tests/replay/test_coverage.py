"""Coverage strata come from the archive alone, and only from documents before t0."""

import sqlite3
from datetime import timedelta

from hindcast import api, replay
from hindcast.markets.store import open_version
from hindcast.replay.spec import ReplaySpec
from hindcast.runs.store import RunStore
from tests.helpers import SAMPLE_MARKETS, at
from tests.integration.archive_support import build_archive, write_headlines


def test_coverage_counts_similar_documents_before_t0_only(tmp_path):
    bundle = open_version(SAMPLE_MARKETS).bundle
    market = bundle.markets[0]
    spec = ReplaySpec(
        store=SAMPLE_MARKETS, ids=(market.id,), forecasters=("market",), fractions=(0.5,)
    )
    (cutoff,) = replay.prepare(spec).cutoffs
    t0 = cutoff.t0
    docs = [(f"same-{i}", t0 - timedelta(days=i + 1), market.question) for i in range(3)]
    docs += [(f"late-{i}", t0 + timedelta(hours=i), market.question) for i in range(4)]
    docs += [
        ("at-t0", t0, market.question),
        ("other", t0 - timedelta(days=2), "Local bakery wins pie contest"),
    ]
    archive = tmp_path / "archive"
    snapshot = build_archive(archive, [write_headlines(tmp_path / "h.jsonl", docs)])

    store = RunStore(f"sqlite:///{tmp_path / 'h.db'}")
    result = api.sweep(
        ReplaySpec(**{**spec.__dict__, "archive": archive, "snapshot": snapshot.id}),
        runs=store,
        out=tmp_path,
        now=at("2026-11-30T00:00:00"),
    )
    with sqlite3.connect(tmp_path / "h.db") as db:
        ((n, stratum),) = db.execute("SELECT n_relevant, stratum FROM coverage").fetchall()
    assert (n, stratum) == (3, "some")
    board = replay.score_run(store, result.run_id, by="coverage")
    assert [r.slice for r in board] == ["coverage=some"]
