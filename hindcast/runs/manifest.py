"""Run provenance: what produced a run, recorded once when the run is created."""

from __future__ import annotations

import platform
import subprocess
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

from hindcast.records import ArchiveRef, MarketStoreRef, RunIdentity, RunManifest

PACKAGES = (
    "hindcast-replay",
    "httpx",
    "polars",
    "pyarrow",
    "lancedb",
    "sentence-transformers",
    "sqlmodel",
    "SQLAlchemy",
    "typer",
    "numpy",
    "torch",
)


def build(
    identity: RunIdentity,
    store_root: Path,
    forecasters: Mapping[str, Mapping[str, object]] | None = None,
    archive: Path | None = None,
    scoring_policies: Mapping[str, object] | None = None,
) -> RunManifest:
    """The run's provenance; where its inputs lived (store, archive folders) so a later export
    can open them again (a moved folder is given back with --archive). The caller (the engine)
    gives each forecaster's provenance and the scoring policies in force: this package imports
    nothing above it."""
    return RunManifest(
        identity=identity,
        forecasters={name: dict(f) for name, f in (forecasters or {}).items()},
        market_store=MarketStoreRef(identity.store_version, str(Path(store_root).resolve())),
        archive=None
        if archive is None
        else ArchiveRef(identity.snapshot, str(Path(archive).resolve())),
        scoring_policies=dict(scoring_policies or {}),
        git_revision=git_revision(),
        python=platform.python_version(),
        packages=package_versions(),
    )


def package_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_revision() -> str | None:
    """The hindcast source revision (with `+dirty` for uncommitted changes), if in a checkout."""
    here = Path(__file__).resolve().parent
    try:
        rev = _git(here, "rev-parse", "HEAD")
        dirty = _git(here, "status", "--porcelain", "--untracked-files=no", "--", str(here.parent))
    except (OSError, subprocess.CalledProcessError):
        return None
    return rev + ("+dirty" if dirty else "")


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=10
    ).stdout.strip()
