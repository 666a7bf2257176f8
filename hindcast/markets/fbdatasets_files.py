"""The files of ForecastBench's published datasets, as they are (forecastbench-datasets.md):
a clone of forecastingresearch/forecastbench-datasets, a bare git directory of it, a folder of
its files, or one file.

From a git directory (clone or bare) the files come from its HEAD commit, named by their path
in the repository, and the commit is recorded; from a folder or a file, by their name. Each
file's sha256 is taken over the exact bytes read. What is not a question or resolution set is
set aside with its reason, never read as one: the `latest-llm.json` symlink (git mode 120000,
or a file holding just a file name), Git LFS pointers, other JSON.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from hindcast.errors import MarketDataError

__all__ = ["DataFile", "DatasetFiles", "read_files"]

SET_FOLDERS = ("datasets/question_sets", "datasets/resolution_sets")
LFS_HEADER = b"version https://git-lfs"


@dataclass(frozen=True)
class DataFile:
    """One question or resolution set: its name, sha256 and parsed JSON."""

    name: str
    sha256: str
    body: dict

    @property
    def kind(self) -> str:
        return "questions" if "questions" in self.body else "resolutions"


@dataclass
class DatasetFiles:
    """What PATH held: the sets, the git commit ("" for plain files), files set aside."""

    files: list[DataFile] = field(default_factory=list)
    commit: str = ""
    set_aside: dict[str, str] = field(default_factory=dict)  # name → reason


def read_files(path: Path) -> DatasetFiles:
    """Every question and resolution set under `path` (see the module)."""
    path = Path(path)
    if not path.exists():
        raise MarketDataError(f"{path}: no such file or directory")
    if path.is_file():
        return _classify(DatasetFiles(), [(path.name, path.read_bytes(), False)])
    if (path / "HEAD").is_file() and (path / "objects").is_dir():
        return _from_git(path, bare=True)
    if (path / ".git").exists():
        return _from_git(path, bare=False)
    raws = [
        (p.relative_to(path).as_posix(), b"" if p.is_symlink() else p.read_bytes(), p.is_symlink())
        for p in sorted(path.rglob("*.json"))
    ]
    return _classify(DatasetFiles(), raws)


def _from_git(path: Path, bare: bool) -> DatasetFiles:
    commit = _git(path, "rev-parse", "HEAD").decode().strip()
    listing = _git(path, "ls-tree", "-r", "HEAD", "--", *SET_FOLDERS).decode().splitlines()
    raws = []
    for line in listing:
        meta, name = line.split("\t", 1)
        mode = meta.split()[0]
        if name.endswith(".json"):
            link = mode == "120000"
            raws.append((name, b"" if link else _git(path, "show", f"HEAD:{name}"), link))
    if not raws:
        where = "bare repository" if bare else "clone"
        raise MarketDataError(f"{path}: a git {where} without {' or '.join(SET_FOLDERS)}")
    return _classify(DatasetFiles(commit=commit), raws)


def _git(path: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(
            [
                "git",
                "--git-dir",
                str(path) if (path / "HEAD").is_file() else str(path / ".git"),
                *args,
            ],
            capture_output=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        raise MarketDataError(
            f"{path}: git {args[0]} failed ({detail.decode(errors='replace').strip() or exc})"
        ) from None
    return done.stdout


def _classify(out: DatasetFiles, raws: list[tuple[str, bytes, bool]]) -> DatasetFiles:
    for name, data, link in raws:
        reason = _not_a_set(data, link)
        if reason:
            out.set_aside[name] = reason
            continue
        out.files.append(DataFile(name, hashlib.sha256(data).hexdigest(), json.loads(data)))
    if not out.files:
        raise MarketDataError(
            "no ForecastBench question or resolution set found"
            + (f" (set aside: {', '.join(sorted(out.set_aside))})" if out.set_aside else "")
        )
    return out


def _not_a_set(data: bytes, link: bool) -> str:
    if link:
        return "a symlink (another file of the set, read under its own name)"
    if data.startswith(LFS_HEADER):
        return "a Git LFS pointer, not the file (fetch it with git lfs)"
    try:
        body = json.loads(data)
    except (UnicodeDecodeError, ValueError):
        text = data.decode(errors="replace").strip()
        if text.endswith(".json") and "\n" not in text and len(text) < 100:
            return f"a symlink seen as its target's name ({text})"
        return "not JSON"
    if not isinstance(body, dict) or not ({"questions", "resolutions"} & set(body)):
        return "JSON, but neither a question set nor a resolution set"
    return ""
