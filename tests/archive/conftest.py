"""Fixtures of the archive tests: the real headlines (rebuilt as the `headlines` input format
from the shipped `archive/sample` snapshot, which holds all 46,809) and small written inputs.
Nothing here reads outside the repository."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from tests.helpers import SAMPLE_ARCHIVE

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "pushshift"


@pytest.fixture(scope="session")
def headline_files(tmp_path_factory) -> list[Path]:
    """One `news_YYYY-MM.jsonl` per month of the shipped sample, in the `headlines` format."""
    folder = tmp_path_factory.mktemp("headlines")
    return [
        write_jsonl(folder / f"news_{month}.jsonl", rows)
        for month, rows in sample_headlines().items()
    ]


def sample_headlines() -> dict[str, list[dict]]:
    """The shipped sample's headlines as `headlines` input rows, by creation month."""
    from hindcast.archive.index import month_rows
    from hindcast.archive.snapshot import open_snapshot

    snap = open_snapshot(SAMPLE_ARCHIVE)
    return {month: [_headline(row) for row in month_rows(snap, month)] for month in snap.months}


def _headline(row: dict) -> dict:
    seconds, micros = divmod(row["created_us"], 1_000_000)
    return {
        "id": row["id"],
        "created_utc": seconds if not micros else row["created_us"] / 1e6,
        "title": row["title"],
        "source": row["source"],
        "kind": row["kind"],
    }


@pytest.fixture(scope="session")
def headlines_archive(tmp_path_factory, headline_files) -> tuple[Path, str]:
    from hindcast.archive.snapshot import build_snapshot

    archive = tmp_path_factory.mktemp("headlines-archive")
    return archive, build_snapshot(headline_files, "headlines", "headlines", archive)


def write_jsonl(path: Path, rows: list) -> Path:
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def fixture_module():
    """tests/fixtures/pushshift/make_fixtures.py as a module (its row builders and writer)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_fixtures", FIXTURES / "make_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def dump_files() -> list[Path]:
    return [FIXTURES / name for name in ("RS_2024-01.zst", "RC_2024-01.zst", "RC_2024-02.zst")]


@pytest.fixture(scope="session")
def reddit_archive(tmp_path_factory, dump_files):
    """The Reddit fixture dumps, frozen and indexed with the hash embedder: (archive, snapshot)."""
    from hindcast.archive.index import build_index
    from hindcast.archive.snapshot import build_snapshot, open_snapshot

    archive = tmp_path_factory.mktemp("reddit-archive")
    snap = open_snapshot(archive, build_snapshot(dump_files, "reddit", "pushshift", archive))
    build_index(snap, "hash")
    return archive, snap


@pytest.fixture(scope="session")
def cluster():
    """A real local Ray cluster (tests/archive/ray_cluster.py: head + a worker node on loopback),
    shared by the Ray tests of a session (starting one costs ~10 s) and stopped at its end."""
    with local_cluster(nodes=2) as started:
        yield started


@pytest.fixture(scope="session")
def cluster3():
    """The same with three nodes (head + two worker nodes): the search shards' cluster, one
    actor a node, so a search merges the answers of three processes."""
    with local_cluster(nodes=3) as started:
        yield started


@contextlib.contextmanager
def local_cluster(nodes: int):
    """A LocalCluster of `nodes` nodes in a short temporary folder, stopped (and checked to
    leave no Ray process behind) on exit."""
    import shutil
    import tempfile

    from tests.archive.ray_cluster import LocalCluster

    # short: Ray's socket paths below it are long (an xdist worker's basetemp adds popen-gwN/)
    temp = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))
    local = LocalCluster(temp)
    try:
        yield local.start(nodes=nodes)
    finally:
        local.stop()
        shutil.rmtree(temp, ignore_errors=True)
        assert local.processes() == [], "Ray processes left behind"
