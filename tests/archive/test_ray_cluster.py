"""`--ray` on a real local Ray cluster (head + a second worker process on loopback, one CPU each):
ingest and embed through the real CLI give the same snapshot id and the same index bytes as the
single-process path; a worker dying mid-embed stops the run and a re-run resumes from the chunks
kept; the cluster is stopped afterwards, also when a test fails (fixture teardown).

Load: the byte comparison embeds shipped headlines plus every row of tests/fixtures/pushshift/*.zst
twice (single process, then Ray) with the default embedder (MiniLM in this CPU's default precision,
or the one `--embedder` forces; the index folder read is that embedder's). In the default run (CI) it
takes a seeded sample of SAMPLE headlines from every month; all 46,809 of them (`-m slow`) take
about 13 min on 2 cores (5 min single process, 8 min on the two one-CPU nodes), too long for CI."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
import ray  # noqa: F401  (the `ray` extra: pip install -e '.[ray]'; this test is meant to run, not skip)

from hindcast import api
from hindcast.archive import index
from hindcast.archive import snapshot as snapshots
from hindcast.archive.embed import get_embedder
from tests.archive.ray_cluster import ray_env
from tests.helpers import ROOT, sample_headlines

SAMPLE = 2000
CHUNK_ROWS = 128
FULL_CHUNK_ROWS = 1024  # 46 chunks over 11 months: both workers embed many
PUSHSHIFT = sorted((ROOT / "tests" / "fixtures" / "pushshift").glob("*.zst"))


@pytest.fixture(scope="module")
def all_headlines(tmp_path_factory) -> Path:
    """Every shipped headline, exported from archive/sample into the `headlines` input format."""
    rows = [row for month in sample_headlines().values() for row in month]
    path = tmp_path_factory.mktemp("in") / "headlines.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def headlines(tmp_path_factory) -> Path:
    """A seeded sample of the shipped headlines, exported from archive/sample into the
    `headlines` input format."""
    rows = [row for month in sample_headlines().values() for row in month]
    picked = random.Random(18).sample(rows, SAMPLE)
    path = tmp_path_factory.mktemp("in") / "headlines.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in picked), encoding="utf-8")
    return path


def hindcast(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "hindcast", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env=ray_env(),
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def single_process(archive: Path, headlines: Path, chunk_rows: int, embedder: str) -> str:
    """Ingest and freeze in this process; the embedding through the CLI, as `--ray`'s is: each
    computes with the torch thread count of a fresh `hindcast` process (the last bits of a vector
    depend on it, and a test earlier in this worker may have changed this process's)."""
    api.ingest([headlines], "news-headlines", "headlines", archive)
    api.ingest(PUSHSHIFT, "reddit", "pushshift", archive)
    snapshot_id = api.freeze(archive)
    hindcast(
        "archive",
        "embed",
        "--archive",
        str(archive),
        "--chunk-rows",
        str(chunk_rows),
        "--embedder",
        embedder,
        cwd=archive.parent,
    )
    return snapshot_id


def on_ray(
    archive: Path, headlines: Path, address: str, chunk_rows: int, embedder: str
) -> tuple[str, list[str]]:
    """The same through the CLI with `--ray ADDRESS`; (snapshot id, stderr of every command)."""
    runs = [
        hindcast(
            "archive",
            "ingest",
            str(headlines),
            "--source",
            "news-headlines",
            "--format",
            "headlines",
            "--archive",
            str(archive),
            "--ray",
            address,
            cwd=archive.parent,
        ),
        hindcast(
            "archive",
            "ingest",
            *map(str, PUSHSHIFT),
            "--source",
            "reddit",
            "--format",
            "pushshift",
            "--archive",
            str(archive),
            "--ray",
            address,
            cwd=archive.parent,
        ),
    ]
    frozen = hindcast("archive", "freeze", "--archive", str(archive), cwd=archive.parent)
    runs.append(
        hindcast(
            "archive",
            "embed",
            "--archive",
            str(archive),
            "--ray",
            address,
            "--chunk-rows",
            str(chunk_rows),
            "--embedder",
            embedder,
            cwd=archive.parent,
        )
    )
    return frozen.stdout.strip(), [r.stderr for r in runs]


def index_files(archive: Path, snapshot_id: str, embedder: str) -> dict[str, bytes]:
    """Every vector-side file of the index of `embedder` (a recorded name: vectors, times, int8
    codes and scales, BM25 postings) and its index.json, by relative path."""
    root = archive / "index" / snapshot_id / embedder
    files = [
        p
        for p in sorted(root.rglob("*"))
        if p.is_file() and "lance" not in p.relative_to(root).parts
    ]
    return {str(p.relative_to(root)): p.read_bytes() for p in files}


@pytest.mark.cpu_default
@pytest.mark.parametrize("which", ["sample", pytest.param("all", marks=pytest.mark.slow)])
def test_ingest_and_embed_on_a_two_node_cluster_give_the_single_process_bytes(
    cluster, which, request, tmp_path, default_embedder
):
    inputs, chunk_rows = (
        (request.getfixturevalue("headlines"), CHUNK_ROWS)
        if which == "sample"
        else (request.getfixturevalue("all_headlines"), FULL_CHUNK_ROWS)
    )
    expected_id = single_process(tmp_path / "one", inputs, chunk_rows, default_embedder)
    ray_id, stderr = on_ray(tmp_path / "ray", inputs, cluster.address, chunk_rows, default_embedder)

    assert ray_id == expected_id
    name = get_embedder(default_embedder).name  # what this CPU makes of it: the index's folder
    expected, got = (
        index_files(tmp_path / "one", expected_id, name),
        index_files(tmp_path / "ray", ray_id, name),
    )
    months = snapshots.open_snapshot(tmp_path / "one", expected_id).months
    assert len(months) == 11  # 9 months of headlines + 2 of Pushshift
    assert {f"vectors/month={m}/vectors.npy" for m in months} <= set(expected)
    assert {f"vectors/month={m}/codes.npy" for m in months} <= set(expected)
    assert got.keys() == expected.keys()
    assert [name for name in expected if got[name] != expected[name]] == []
    # nothing of Ray's logging reaches the CLI's stderr (the progress bar, off a terminal, leaves one newline)
    assert [text.strip() for text in stderr] == ["", "", ""]


def dying_embed(archive: Path, snapshot_id: str, address: str, armed: Path, log: Path, marker: str):
    """tests/archive/dying_embed.py's JSON answer: the embedding driven from a process of its own."""
    args = [archive, snapshot_id, address, armed, log, marker]
    proc = subprocess.run(
        [sys.executable, "-m", "tests.archive.dying_embed", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=ray_env(),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


def test_a_worker_dying_mid_embed_stops_the_run_and_a_rerun_embeds_only_the_missing_chunks(
    cluster, headlines, tmp_path
):
    archive = tmp_path / "a"
    api.ingest([headlines], "news-headlines", "headlines", archive)
    snap = snapshots.open_snapshot(archive, api.freeze(archive))
    month = snap.months[-1]
    texts = index.month_texts(index.month_rows(snap, month))
    armed, log = tmp_path / "armed", tmp_path / "log.txt"
    armed.touch()
    marker = texts[-1]  # the last chunk of the last month

    stopped = dying_embed(archive, snap.id, cluster.address, armed, log, marker)
    assert "re-run the same command to resume" in stopped["stopped"]
    first = log.read_text().splitlines() if log.exists() else []
    root = tmp_path / "a" / "index" / snap.id / "hash-384"
    kept = sorted(root.glob("vectors/month=*/chunks/chunk-*.npy"))
    assert kept  # chunks that came back before the worker died are on disk
    assert not (root / "vectors" / f"month={month}" / "vectors.npy").exists()

    armed.unlink()
    log.unlink(missing_ok=True)
    info = dying_embed(archive, snap.id, cluster.address, armed, log, marker)
    second = log.read_text().splitlines()
    total_chunks = sum(-(-n // 64) for n in info["months"].values())
    assert (
        len(kept) + len(second) == total_chunks
    )  # every chunk kept by the first run was reused, not embedded again
    assert len(first) >= len(kept)
    fresh = tmp_path / "fresh"
    api.ingest([headlines], "news-headlines", "headlines", fresh)
    api.embed(fresh, api.freeze(fresh), "hash", chunk_rows=64)
    assert _hash_files(archive, snap.id) == _hash_files(
        fresh, snap.id
    )  # resumed: still the single-process bytes


def _hash_files(archive: Path, snapshot_id: str) -> dict[str, bytes]:
    root = archive / "index" / snapshot_id / "hash-384" / "vectors"
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.npy"))}


def test_device_cuda_on_a_cluster_without_a_gpu_is_one_line(cluster, tmp_path):
    archive = tmp_path / "a"
    api.ingest(PUSHSHIFT, "reddit", "pushshift", archive)
    api.freeze(archive)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "hindcast",
            "archive",
            "embed",
            "--archive",
            str(archive),
            "--embedder",
            "hash",
            "--ray",
            cluster.address,
            "--device",
            "cuda",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=ray_env(),
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "hindcast: error: --device cuda: the Ray cluster has no GPU"
    ]
    assert not (archive / "index").exists()


def test_an_input_that_cannot_be_read_on_ray_leaves_the_archive_as_it_was(cluster, tmp_path):
    good = PUSHSHIFT[0].read_bytes()
    truncated = tmp_path / "in" / "RS_2024-02.zst"
    truncated.parent.mkdir()
    truncated.write_bytes(good[: len(good) // 2])
    archive = tmp_path / "a"
    api.ingest(PUSHSHIFT[1:2], "reddit", "pushshift", archive)
    before = {
        str(p.relative_to(archive)): p.read_bytes()
        for p in sorted(archive.rglob("*"))
        if p.is_file()
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "hindcast",
            "archive",
            "ingest",
            *map(str, PUSHSHIFT),
            str(truncated),
            "--source",
            "reddit",
            "--format",
            "pushshift",
            "--archive",
            str(archive),
            "--ray",
            cluster.address,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=ray_env(),
    )
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(truncated) in lines[0], proc.stderr
    after = {
        str(p.relative_to(archive)): p.read_bytes()
        for p in sorted(archive.rglob("*"))
        if p.is_file()
    }
    assert after == before  # the good inputs read by other tasks were not committed either
