"""The inbox job: new dump files → the archive draft → a frozen snapshot → its index; files
are taken once by content; a sweep over that archive reads the newest *indexed* snapshot."""

from __future__ import annotations

import json

from hindcast.archive.index import open_index
from hindcast.archive.snapshot import latest, open_snapshot
from tests.schedule.conftest import T0, TICKS, on_service_db, run_process, service_state, tick

# the service with one news inbox (shared with test_inbox_same_name)
SERVICE = """
[service]
db = "runs/hindcast.db"

[markets]
store = "markets/store"
gamma_url = "{url}/gamma"
clob_url = "{url}/clob"
data_url = "{url}/data"
attempts = 1

[archive]
root = "archive"
embedder = "hash"
[[archive.inbox]]
path = "inbox"
source = "news"
format = "news"
pattern = "*.jsonl"
"""

CONFIG = (
    SERVICE
    + """
[[sweeps]]
name = "with-archive"
[sweeps.archive]
root = "archive"
[sweeps.cutoffs]
fractions = [0.5]
[[sweeps.forecasters]]
spec = "constant"
"""
)


def _drop(folder, name: str, months: list[str]) -> None:
    rows = [
        {
            "id": f"{name}-{i}",
            "created_at": f"{m}-10T12:00:00Z",
            "title": f"Thing {i} may happen",
            "text": f"News about thing {i}.",
            "url": f"https://example.org/{name}/{i}",
            "source": "example",
        }
        for i, m in enumerate(months)
    ]
    (folder / "inbox").mkdir(parents=True, exist_ok=True)
    (folder / "inbox" / name).write_text("".join(json.dumps(r) + "\n" for r in rows))


def _config(tmp_path, url: str):
    path = tmp_path / "hindcast.toml"
    path.write_text(on_service_db(CONFIG.format(url=url)))
    return path


def test_new_files_become_an_indexed_snapshot_once(tmp_path, server, clock, service_db):
    config = _config(tmp_path, server.url)
    _drop(tmp_path, "a.jsonl", ["2026-01", "2026-02", "2026-02"])
    statuses, _ = tick(config, T0)
    assert statuses == {"pull": "ok", "inbox": "ok", "sweeps": "ok"}
    first = latest(tmp_path / "archive")
    assert service_state(tmp_path).get("archive:indexed") == first
    assert open_index(open_snapshot(tmp_path / "archive", first)) is not None
    batch = service_state(tmp_path).batches("with-archive")[0]
    assert batch.spec["snapshot"] == first and batch.status == "done"

    clock.now = TICKS[1]
    tick(config, TICKS[1])
    assert latest(tmp_path / "archive") == first  # nothing new in the inbox: no new snapshot
    assert service_state(tmp_path).job_runs("inbox", limit=1)[0].detail == {
        "files": 0,
        "changed": False,
    }

    _drop(tmp_path, "b.jsonl", ["2026-03"])
    clock.now = TICKS[2]
    tick(config, TICKS[2])
    second = latest(tmp_path / "archive")
    assert second != first and service_state(tmp_path).get("archive:indexed") == second
    assert open_snapshot(tmp_path / "archive", second).months == ("2026-01", "2026-02", "2026-03")
    assert {b.spec["snapshot"] for b in service_state(tmp_path).batches("with-archive")} == {
        first,
        second,
    }


def test_killed_while_embedding_the_next_run_finishes_the_same_snapshot(
    tmp_path, server, clock, service_db
):
    config = _config(tmp_path, server.url)
    _drop(tmp_path, "a.jsonl", ["2026-01", "2026-02"])
    died = run_process(
        config, "once", "--now", T0.isoformat(), die="hindcast.archive.index:_index_month:2"
    )
    assert died.returncode == 137
    frozen_unindexed = latest(tmp_path / "archive")
    assert (
        service_state(tmp_path).get("archive:indexed") is None
        and service_state(tmp_path).ingested() == set()
    )
    statuses, _ = tick(config, T0)
    assert statuses["inbox"] == "ok" and statuses["sweeps"] == "ok"
    assert (
        latest(tmp_path / "archive")
        == frozen_unindexed
        == service_state(tmp_path).get("archive:indexed")
    )
    assert [name for name, _ in service_state(tmp_path).ingested()] == ["a.jsonl"]
