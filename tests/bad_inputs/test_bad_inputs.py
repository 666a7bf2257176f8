"""Every command that reads input, on every broken input of the corpus (make_corpus.py):
a non-zero exit, one `hindcast: error: …` line naming the input (file and line or byte
offset, or the setting) as a bad input (not as "unexpected …", our defect), no Python
traceback, and every store, snapshot and run database in the working folder
byte-identical to before (the whole folder tree is hashed)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.bad_inputs.make_corpus import build_world, cases, instantiate
from tests.helpers import run_cli

CASES = cases()


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("bad-inputs") / "world"
    return folder, build_world(folder, run_cli)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_bad_input_fails_in_one_line_naming_it_and_changes_nothing(case, world, tmp_path):
    world_dir, names = world
    case, folder = instantiate(case, names), tmp_path / "work"
    shutil.copytree(world_dir, folder, symlinks=True)
    case.write(folder)
    before = tree(folder)
    with read_only(*(folder / p for p in case.read_only)):
        proc = run(case, folder)
    after = tree(folder)
    if case.outcome == "either" and proc.returncode == 0:
        assert "Traceback" not in proc.stderr, proc.stderr
        assert case.changes_ok or after == before, f"accepted, but {changes(before, after)}"
        return
    assert proc.returncode != 0, (
        f"exit 0 on a bad input\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}"
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    first = (proc.stderr.splitlines() or [""])[0]
    assert first.startswith("hindcast: error: "), (
        f"first stderr line: {first!r}\nstderr: {proc.stderr[-2000:]}"
    )
    assert "HINDCAST_DEBUG" not in first, f"a bad input reported as a defect of ours: {first!r}"
    missing = [name for name in case.names if name not in first]
    assert not missing, f"the error line does not name {missing}: {first!r}"
    if case.where:
        assert re.search(case.where, proc.stderr), (
            f"no location /{case.where}/ in stderr: {proc.stderr[-2000:]}"
        )
    assert after == before, f"{first}\n{changes(before, after)}"


def run(case, folder: Path) -> subprocess.CompletedProcess:
    try:
        return run_cli(
            *case.argv,
            cwd=folder,
            timeout=case.timeout,
            env={"HINDCAST_DEBUG": None, "COLUMNS": "200"},
        )
    except subprocess.TimeoutExpired:
        pytest.fail(
            f"hindcast {' '.join(case.argv)} still running after {case.timeout} s on a bad input"
        )


def tree(folder: Path) -> dict[str, str]:
    """Every file, folder and link under `folder`: relative path → content hash or kind."""
    out = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        if path.is_symlink():
            out[key] = "link:" + os.readlink(path)
        elif path.is_dir():
            out[key] = "dir"
        else:
            out[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def changes(before: dict, after: dict) -> str:
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
    return (
        f"the working folder changed: added {added[:10]}, removed {removed[:10]}, modified "
        f"{changed[:10]}"
    )


@contextlib.contextmanager
def read_only(*folders: Path):
    """Folders nobody may write into while the command runs: mode 0555 for a normal user;
    as root (whom modes do not stop) a read-only bind mount, or the case is skipped."""
    done = []
    try:
        for folder in folders:
            done.append(_make_read_only(folder))
        yield
    finally:
        for undo in reversed(done):
            undo()


def _make_read_only(folder: Path):
    if os.geteuid() != 0:
        return _chmod_read_only(folder)
    mounted = subprocess.run(
        ["mount", "--bind", "-o", "ro", str(folder), str(folder)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(
            f"running as root and cannot bind-mount {folder} read-only: {mounted.stderr.strip()}"
        )
    probe = folder / ".probe"
    with contextlib.suppress(OSError):
        probe.write_bytes(b"")
        probe.unlink()
        subprocess.run(["umount", str(folder)], check=False)
        pytest.skip(f"a read-only bind mount of {folder} is still writable here")
    return lambda: subprocess.run(["umount", str(folder)], check=False)


def test_the_unbroken_inputs_are_accepted(world, tmp_path):
    """Each case breaks one thing in an input that is otherwise accepted: the base files
    import, ingest and load as they are (so a case fails for its one break)."""
    from hindcast.archive.ingest import ingest
    from hindcast.markets.importers import import_forecastbench
    from hindcast.replay.layout import load_toml
    from hindcast.replay.spec import spec_from_mapping
    from hindcast.schedule.config import load
    from tests.bad_inputs import make_corpus as corpus

    folder = tmp_path / "work"
    shutil.copytree(world[0], folder, symlinks=True)
    for name, data in (
        ("markets.jsonl", corpus.valid_markets()),
        ("prices_daily.csv", corpus.valid_prices()),
        ("news.jsonl", corpus.jsonl(corpus.headline_rows())),
        ("spec.toml", corpus.SPEC),
        ("hindcast.toml", corpus.CONFIG),
    ):
        corpus.write(name, data)(folder)
    corpus.news_parquet(folder / "news.parquet")
    bundle = import_forecastbench(folder / "markets.jsonl", folder / "prices_daily.csv")
    assert len(bundle.markets) == 3 and all(bundle.prices.get(m.id) for m in bundle.markets)
    summaries = ingest([folder / "news.jsonl"], "news", "headlines", folder / "archive")
    summaries += ingest([folder / "news.parquet"], "wire", "news", folder / "archive")
    assert [(s.written, s.rejected) for s in summaries] == [(6, 0), (6, 0)]
    assert spec_from_mapping(load_toml(folder / "spec.toml")).forecasters == ("market", "constant")
    assert [s.name for s in load(folder / "hindcast.toml").sweeps] == ["baselines"]


def _chmod_read_only(folder: Path):
    """Every folder 0555 and file 0444 under `folder`; returns the undo."""
    modes = {
        path: path.stat().st_mode for path in [folder, *folder.rglob("*")] if not path.is_symlink()
    }
    for path in sorted(modes, key=lambda p: len(p.parts), reverse=True):
        path.chmod(0o555 if path.is_dir() else 0o444)

    def undo() -> None:
        for path, mode in sorted(modes.items(), key=lambda item: len(item[0].parts)):
            path.chmod(mode)

    return undo
