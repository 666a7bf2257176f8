"""The benchmark's Pushshift-shaped dump generator: the real ingest path reads its output
with no reject but the deliberately malformed lines, threads point at real earlier rows,
and the same arguments give the same bytes."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import zstandard

from benchmarks.pushshift_dumps import Config, generate, month_starts
from tests.helpers import run_cli

CFG = Config(docs=3000, months=2, start="2024-01", seed=7, malformed=0.01)


@pytest.fixture(scope="module")
def dumps(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("dumps")
    return out, generate(CFG, out, log=lambda *_: None)


def lines(path: Path) -> list[str]:
    with path.open("rb") as handle:
        reader = zstandard.ZstdDecompressor(max_window_size=2**31).stream_reader(handle)
        return io.TextIOWrapper(reader, encoding="utf-8").read().splitlines()


def test_real_ingest_rejects_only_the_deliberately_malformed_lines(dumps, tmp_path):
    out, manifest = dumps
    files = sorted(out.glob("R[SC]_*.zst"))
    proc = run_cli(
        "archive",
        "ingest",
        *map(str, files),
        "--source",
        "reddit",
        "--format",
        "pushshift",
        "--archive",
        str(tmp_path / "a"),
        check=True,
    )
    reported = {
        Path(m[0]).name: (int(m[1]), int(m[2]))
        for m in re.findall(
            r"^(\S+\.zst): \d+ rows, (\d+) written, (\d+) rejected",
            proc.stdout + proc.stderr,
            re.MULTILINE,
        )
    }
    assert set(reported) == {f.name for f in files}
    for name, info in manifest["files"].items():
        assert reported[name] == (info["rows"] - info["malformed"], info["malformed"]), name
    assert sum(f["malformed"] for f in manifest["files"].values()) > 0  # the share is exercised
    rows = [
        r
        for p in sorted((tmp_path / "a" / "draft").rglob("*.parquet"))
        for r in pq.read_table(p).to_pylist()
    ]
    assert len(rows) == sum(f["rows"] - f["malformed"] for f in manifest["files"].values())
    check_threads_and_states(rows)


def check_threads_and_states(rows: list[dict]) -> None:
    """Comments point at submissions and comments that exist (unless the one line that held
    the parent was the malformed one) and were created no later; edits and deletions occur."""
    created = {r["id"]: r["created_us"] for r in rows}
    comments = [r for r in rows if r["kind"] == "reddit_comment"]
    found = [r for r in comments if r["thread_id"] in created and r["parent_id"] in created]
    assert len(found) >= 0.95 * len(comments) and comments
    assert all(
        created[r["thread_id"]] <= r["created_us"] and created[r["parent_id"]] <= r["created_us"]
        for r in found
    )
    assert any(r["parent_id"].startswith("t1_") for r in found) and any(
        r["parent_id"].startswith("t3_") for r in found
    )
    states = {r["edit_state"] for r in rows}
    assert {"never", "at"} <= states
    assert all(r["edit_us"] > r["created_us"] for r in rows if r["edit_state"] == "at")
    assert sum(r["deleted"] for r in rows) > 0


def test_dump_shape_sorted_keys_and_rows_and_a_long_window(dumps):
    out, _ = dumps
    for path in sorted(out.glob("R[SC]_*.zst")):
        assert zstandard.get_frame_parameters(path.read_bytes()[:18]).window_size == 2**31
        parsed = [json.loads(line) for line in lines(path) if line.endswith("}")]
        assert all(list(row) == sorted(row) for row in parsed)
        keys = [(row["created_utc"], row["id"]) for row in parsed]
        assert keys == sorted(keys)
        label, start, end = next(m for m in month_starts(CFG) if m[0] == path.stem.split("_")[1])
        assert all(start <= r["created_utc"] < end for r in parsed), label
        assert all(r["_meta"]["retrieved_2nd_on"] > r["created_utc"] for r in parsed)


def test_same_arguments_same_bytes_and_another_seed_other_bytes(dumps, tmp_path):
    out, manifest = dumps
    again = generate(CFG, tmp_path / "again", log=lambda *_: None)
    assert again["files"] == manifest["files"]
    for name in manifest["files"]:
        assert (tmp_path / "again" / name).read_bytes() == (out / name).read_bytes()
    other = generate(Config(**{**CFG.__dict__, "seed": 8}), tmp_path / "other", log=lambda *_: None)
    assert (
        other["files"]["RC_2024-01.zst"]["sha256"] != manifest["files"]["RC_2024-01.zst"]["sha256"]
    )
