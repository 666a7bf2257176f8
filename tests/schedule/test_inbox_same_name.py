"""The service's inbox takes a file by content: a file replaced under the same name is a new
input, and the documents of the earlier one stay in every later snapshot."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from hindcast.archive.snapshot import latest, open_snapshot
from tests.schedule.conftest import T0, TICKS, on_service_db, service_state, tick
from tests.schedule.test_inbox import SERVICE

CONFIG = SERVICE


def _drop(folder, ids: list[str]) -> None:
    rows = [
        {
            "id": i,
            "created_at": "2026-02-10T12:00:00Z",
            "title": f"Thing {i} may happen",
            "source": "x",
        }
        for i in ids
    ]
    (folder / "inbox").mkdir(parents=True, exist_ok=True)
    (folder / "inbox" / "news.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _documents(archive) -> list[str]:
    snap = open_snapshot(archive, latest(archive))
    return sorted(
        i
        for m in snap.months
        for f in snap.partition_files(m)
        for i in pq.read_table(f).column("id").to_pylist()
    )


def test_a_file_replaced_under_its_name_keeps_the_earlier_documents(
    tmp_path, server, clock, service_db
):
    config = tmp_path / "hindcast.toml"
    config.write_text(on_service_db(CONFIG.format(url=server.url)))
    _drop(tmp_path, ["a1", "a2"])
    statuses, _ = tick(config, T0)
    assert statuses["inbox"] == "ok" and _documents(tmp_path / "archive") == ["a1", "a2"]
    _drop(tmp_path, ["b1"])  # the same name, new content
    clock.now = TICKS[1]
    statuses, _ = tick(config, TICKS[1])
    assert statuses["inbox"] == "ok"
    assert _documents(tmp_path / "archive") == ["a1", "a2", "b1"]
    assert len(service_state(tmp_path).ingested()) == 2
