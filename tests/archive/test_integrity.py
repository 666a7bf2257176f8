"""Nothing lost, nothing half-written: inputs identified by content, truncated streams refused
naming the file and the offset, failed ingests leaving the archive byte-identical, and every
`hindcast archive` error one line naming its input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hindcast.archive.ingest import ingest
from hindcast.archive.lines import ArchiveInputError
from hindcast.archive.snapshot import build_snapshot, freeze, open_snapshot

from .conftest import FIXTURES, write_jsonl

HINDCAST = str(Path(sys.executable).parent / "hindcast")


def _news(i: str, day: int) -> dict:
    return {
        "id": i,
        "created_at": f"2025-10-{day:02d}T12:00:00Z",
        "title": f"Headline {i}",
        "source": "x",
    }


def _same_name_inputs(tmp_path) -> list[Path]:
    (tmp_path / "d1").mkdir()
    (tmp_path / "d2").mkdir()
    return [
        write_jsonl(tmp_path / "d1" / "news.jsonl", [_news("a", 1), _news("b", 2)]),
        write_jsonl(tmp_path / "d2" / "news.jsonl", [_news("c", 3)]),
    ]


def _snapshot_ids(archive: Path, snapshot_id: str) -> list[str]:
    snap = open_snapshot(archive, snapshot_id)
    return sorted(
        i
        for m in snap.months
        for f in snap.partition_files(m)
        for i in pq.read_table(f).column("id").to_pylist()
    )


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) below root."""
    if not root.exists():
        return {}
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([HINDCAST, "archive", *args], capture_output=True, text=True)


# ---- input identity --------------------------------------------------------------------------
def test_two_inputs_with_the_same_name_are_both_kept(tmp_path):
    inputs = _same_name_inputs(tmp_path)
    archive = tmp_path / "arc"
    summaries = ingest(inputs, "news", "news", archive)
    assert [s.written for s in summaries] == [2, 1]
    assert _snapshot_ids(archive, freeze(archive)) == ["a", "b", "c"]
    assert _snapshot_ids(
        tmp_path / "built", build_snapshot(inputs, "news", "news", tmp_path / "built")
    ) == ["a", "b", "c"]


def test_cli_ingest_of_two_same_name_inputs_freezes_both(tmp_path):
    inputs = _same_name_inputs(tmp_path)
    archive = tmp_path / "arc"
    done = _cli(
        "ingest",
        *map(str, inputs),
        "--source",
        "news",
        "--format",
        "news",
        "--archive",
        str(archive),
    )
    assert done.returncode == 0, done.stderr
    frozen = _cli("freeze", "--archive", str(archive))
    assert _snapshot_ids(archive, frozen.stdout.strip()) == ["a", "b", "c"]


def test_a_file_replaced_under_its_name_keeps_the_earlier_documents(tmp_path):
    path, archive = tmp_path / "news.jsonl", tmp_path / "arc"
    write_jsonl(path, [_news("a", 1)])
    ingest([path], "news", "news", archive)
    write_jsonl(path, [_news("b", 2)])
    ingest([path], "news", "news", archive)
    assert _snapshot_ids(archive, freeze(archive)) == ["a", "b"]


def test_the_same_content_again_changes_nothing(tmp_path):
    inputs = _same_name_inputs(tmp_path)
    archive = tmp_path / "arc"
    ingest(inputs, "news", "news", archive)
    before = _tree(archive)
    ingest(list(reversed(inputs)), "news", "news", archive)
    assert _tree(archive) == before


# ---- truncated streams -----------------------------------------------------------------------
def _truncated(tmp_path: Path, name: str = "RS_2024-01.zst") -> Path:
    data = (FIXTURES / "RS_2024-01.zst").read_bytes()
    out = tmp_path / "cut" / name
    out.parent.mkdir(exist_ok=True)
    out.write_bytes(data[: len(data) // 2])
    return out


def test_a_truncated_zst_is_an_error_naming_the_file_and_the_offset(tmp_path):
    cut = _truncated(tmp_path)
    with pytest.raises(
        ArchiveInputError,
        match=rf"{cut}: truncated zstandard stream: the file ends at byte "
        rf"{cut.stat().st_size} inside the frame starting at byte 0",
    ):
        ingest([cut], "reddit", "pushshift", tmp_path / "arc")
    assert not (tmp_path / "arc").exists()


def test_a_jsonl_cut_inside_its_last_line_is_an_error(tmp_path):
    path = tmp_path / "news.jsonl"
    text = json.dumps(_news("a", 1)) + "\n" + json.dumps(_news("b", 2))
    path.write_text(text[:-9], encoding="utf-8")
    with pytest.raises(
        ArchiveInputError,
        match=rf"{path}:2: truncated: the input ends inside this line \(byte {len(text) - 9}",
    ):
        ingest([path], "news", "news", tmp_path / "arc")
    path.write_text(text, encoding="utf-8")  # complete, only the final newline missing: fine
    assert ingest([path], "news", "news", tmp_path / "arc")[0].written == 2


# ---- failed writes leave the previous state -------------------------------------------------
def test_a_failed_ingest_keeps_the_previous_rejects_and_draft(tmp_path):
    path, archive = tmp_path / "in" / "RS_2024-01.zst", tmp_path / "arc"
    path.parent.mkdir()
    path.write_bytes((FIXTURES / "RS_2024-01.zst").read_bytes())
    first = ingest([path], "reddit", "pushshift", archive)[0]
    assert first.rejects_path is not None and first.rejects_path.exists()
    before = _tree(archive)
    path.write_bytes(_truncated(tmp_path).read_bytes())  # the same name, cut short
    good = write_jsonl(tmp_path / "good.jsonl", [_news("z", 9)])
    with pytest.raises(ArchiveInputError, match="truncated"):
        ingest([good, path], "reddit", "pushshift", archive)
    assert _tree(archive) == before


# ---- the CLI: one line naming the input, nonzero exit, stores byte-identical ------------------
def _cases(tmp_path: Path) -> list[tuple[list[str], str, int]]:
    """(arguments after `hindcast archive`, text the one error line must hold, exit code)."""
    bad = tmp_path / "bad"
    bad.mkdir()
    cut = _truncated(tmp_path)
    (bad / "garbage.zst").write_bytes(b"this is not zstandard at all")
    (bad / "empty.zst").write_bytes(b"")
    (bad / "cut.jsonl").write_text(
        json.dumps(_news("a", 1)) + '\n{"id": "b", "crea', encoding="utf-8"
    )
    (bad / "broken.parquet").write_bytes(b"PAR1 not really parquet")
    good = write_jsonl(bad / "good.jsonl", [_news("g", 5)])
    arc = ["--archive", str(tmp_path / "arc")]
    ingest_news = ["--source", "news", "--format", "news", *arc]
    return [
        (
            ["ingest", str(cut), "--source", "reddit", "--format", "pushshift", *arc],
            f"{cut}: truncated zstandard stream",
            1,
        ),
        (
            ["ingest", str(bad / "garbage.zst"), "--source", "r", "--format", "pushshift", *arc],
            "garbage.zst: corrupt zstandard stream",
            1,
        ),
        (
            ["ingest", str(bad / "empty.zst"), "--source", "r", "--format", "pushshift", *arc],
            "empty.zst: empty file",
            1,
        ),
        (["ingest", str(bad / "cut.jsonl"), *ingest_news], "cut.jsonl:2: truncated", 1),
        (["ingest", str(good), str(bad / "cut.jsonl"), *ingest_news], "cut.jsonl:2: truncated", 1),
        (
            ["ingest", str(bad / "broken.parquet"), *ingest_news],
            "broken.parquet: not a readable Parquet file",
            1,
        ),
        (
            ["ingest", str(bad / "missing.jsonl"), *ingest_news],
            "missing.jsonl: no such input file",
            1,
        ),
        (["ingest", str(bad), *ingest_news], f"{bad}: no such input file", 1),
        (
            ["ingest", str(good), "--source", "a b", "--format", "news", *arc],
            "--source: source name 'a b'",
            2,
        ),
        (["ingest", str(good), "--source", "news", "--format", "csv", *arc], "--format 'csv'", 2),
        (["search", "--query", "x", "--t0", "yesterday", *arc], "--t0 'yesterday'", 1),
        (["search", "--query", "x", "--t0", "2025-11-01T00:00:00Z", *arc], "no frozen snapshot", 1),
        (
            [
                "search",
                "--query",
                "x",
                "--t0",
                "2025-11-01T00:00:00Z",
                "--archive",
                str(tmp_path / "frozen"),
            ],
            "has no index",
            1,
        ),
        (
            [
                "search",
                "--query",
                "x",
                "--t0",
                "2024-01-10T00:00:00Z",
                "--k",
                "0",
                "--archive",
                str(tmp_path / "indexed"),
            ],
            "'--k'",
            2,
        ),  # a bad option value is a usage error (the retriever's own check is tested in test_retriever)
        (
            [
                "search",
                "--query",
                "x",
                "--t0",
                "2024-01-10T00:00:00Z",
                "--mode",
                "fuzzy",
                "--archive",
                str(tmp_path / "indexed"),
            ],
            "search mode 'fuzzy'",
            1,
        ),
        (["verify", *arc], "no frozen snapshot", 1),
        (["embed", "--embedder", "hash", *arc], "no frozen snapshot", 1),
        (
            ["embed", "--embedder", "bert", "--archive", str(tmp_path / "frozen")],
            "--embedder: unknown embedder 'bert'",
            2,
        ),
        (
            ["verify", "--snapshot", "a-nope", "--archive", str(tmp_path / "frozen")],
            "has no snapshot 'a-nope'",
            1,
        ),
        (["freeze", *arc[:0], "--archive", str(tmp_path / "nothing")], "nothing to freeze", 1),
    ]


def test_every_archive_command_error_is_one_line_naming_its_input(tmp_path):
    from hindcast.archive.index import build_index

    ingest(
        [FIXTURES / "RS_2024-01.zst"], "reddit", "pushshift", tmp_path / "arc"
    )  # a draft and a rejects file
    build_snapshot(
        [FIXTURES / "RS_2024-01.zst"], "reddit", "pushshift", tmp_path / "frozen"
    )  # frozen, no index
    indexed = tmp_path / "indexed"
    build_index(
        open_snapshot(
            indexed, build_snapshot([FIXTURES / "RS_2024-01.zst"], "reddit", "pushshift", indexed)
        ),
        "hash",
    )
    stores = [tmp_path / name for name in ("arc", "frozen", "indexed")]
    before = [_tree(root) for root in stores]
    for args, expected, code in _cases(tmp_path):
        done = _cli(*args)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == code, (args, done.stderr)
        assert (
            len(lines) == 1 and lines[0].startswith("hindcast: error: ") and expected in lines[0]
        ), (args, done.stderr)
        assert "Traceback" not in done.stderr and done.stdout == ""
        assert [_tree(root) for root in stores] == before, args
