"""A real swept run with one forecast re-stored (a newer attempt, as `--retry-failed` writes it)
carrying hostile text where models put text: rationale, raw answer, a retrieval query, a
document id; its retrievals name real documents of the shipped archive sample."""

from __future__ import annotations

from pathlib import Path

from hindcast.records import Forecast
from hindcast.runs import retrievals_of
from tests.helpers import ROOT

SAMPLE_ARCHIVE = ROOT / "archive" / "sample"
RATIONALE = '</script><img src=x onerror=alert(3)> rationale with "quotes" & <b>tags</b>'
RAW = '{"probability": 0.5, "note": "</pre><script>alert(4)</script>"}'
QUERY = "<svg onload=alert(5)> query"
BAD_ID = '"><img src=y onerror=alert(6)>'
USAGE = {"model_name": "gpt-4o-mini", "prompt_tokens": 1200, "completion_tokens": 80, "requests": 1}


def sample_documents(n: int = 2) -> list[str]:
    """The ids of the first `n` documents of the sample archive's first month."""
    import pyarrow.parquet as pq

    from hindcast.archive.snapshot import open_snapshot

    snapshot = open_snapshot(SAMPLE_ARCHIVE)
    table = pq.read_table(snapshot.partition_files(snapshot.months[0])[0], columns=["id"])
    return sorted(table.column("id").to_pylist())[:n]


def plant(store, run_id: str, forecaster: str = "constant") -> tuple[str, object, list[str]]:
    """Store a newer attempt of `forecaster`'s first forecast with hostile text;
    (market, t0, doc ids)."""
    first = next(s for s in store.forecasts(run_id) if s.forecaster == forecaster)
    ids = sample_documents()
    calls = (
        {"op": "search", "query": QUERY, "k": 3, "mode": "text", "ids": [*ids, BAD_ID]},
        {"op": "read", "doc_id": ids[0], "ids": [ids[0]]},
    )
    forecast = Forecast(0.5, rationale=RATIONALE, raw=RAW, usage=USAGE, evidence=tuple(ids))
    assert store.add(
        run_id,
        forecaster,
        first.market_id,
        first.t0,
        first.label,
        forecast,
        retrievals_of(calls),
        first.repeat,
        attempt=1,
    )
    return first.market_id, first.t0, ids


def snapshot():
    from hindcast.archive.snapshot import open_snapshot

    return open_snapshot(Path(SAMPLE_ARCHIVE))
