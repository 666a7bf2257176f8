"""Frozen, content-addressed directories: write once into a temp dir, hash, rename; verify on read.

Shared by archive snapshots and market store versions. A manifest lists every file with
its sha256; `verify` reports any changed, missing or extra file.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
from pathlib import Path

from hindcast.errors import ArchiveIntegrityError

MANIFEST = "manifest.json"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file below root except the manifest, keyed by POSIX relative path."""
    return {
        p.relative_to(root).as_posix(): sha256_file(p)
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }


def write_manifest(root: Path, fields: dict) -> dict:
    manifest = {**fields, "files": file_hashes(root)}
    (root / MANIFEST).write_text(
        json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    return manifest


def read_manifest(root: Path) -> dict:
    path = root / MANIFEST
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ArchiveIntegrityError(f"{root}: no {MANIFEST}; not a frozen directory") from exc
    except json.JSONDecodeError as exc:
        raise ArchiveIntegrityError(f"{path}: unreadable manifest ({exc.msg})") from exc


def verify(root: Path) -> list[str]:
    """Every difference between the files and the manifest, as readable lines (empty: intact)."""
    expected = read_manifest(root).get("files", {})
    actual = file_hashes(root)
    problems = [f"missing: {name}" for name in sorted(set(expected) - set(actual))]
    problems += [f"extra: {name}" for name in sorted(set(actual) - set(expected))]
    problems += [
        f"changed: {name}"
        for name in sorted(set(expected) & set(actual))
        if expected[name] != actual[name]
    ]
    return problems


def require_intact(root: Path) -> dict:
    problems = verify(root)
    if problems:
        raise ArchiveIntegrityError(f"{root} does not match its manifest: " + "; ".join(problems))
    return read_manifest(root)


def staging_dir(parent: Path) -> Path:
    """A private folder to write a version into; leftovers of killed writers are removed first."""
    parent.mkdir(parents=True, exist_ok=True)
    remove_dead_staging(parent)
    return Path(tempfile.mkdtemp(prefix=f".staging-{os.getpid()}-", dir=parent))


def remove_dead_staging(parent: Path) -> None:
    """Delete `.staging-<pid>-*` folders whose writer process no longer exists."""
    for folder in parent.glob(".staging-*-*"):
        pid = folder.name.split("-")[1]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def publish(staging: Path, final: Path) -> Path:
    """Move a finished staging dir into place atomically; an existing equal version wins."""
    if final.exists():
        shutil.rmtree(staging)
        return final
    os.chmod(staging, 0o755)  # mkdtemp makes it private
    os.replace(staging, final)
    return final


def tmp_beside(path: Path) -> Path:
    """A temporary name beside `path`, private to this process and thread: two writers of
    one file (two sweeps of one run exporting together) never share a temporary file."""
    return path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")


def write_text_atomic(path: Path, text: str) -> None:
    tmp = tmp_beside(path)
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
