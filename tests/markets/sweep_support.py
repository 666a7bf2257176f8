"""Shared by the venue tests: a sweep of a store with some forecasters, then its leaderboard
export, both as a user runs them (subprocesses)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import run_cli


def sweep_and_export(store: Path, tmp: Path, forecasters: tuple[str, ...], *board: str) -> Path:
    """`hindcast sweep` of `store` with `forecasters`, then `hindcast leaderboard RUN --out
    tmp/lb *board`; the export folder."""
    runs, out = tmp / "runs", tmp / "lb"
    picked = [a for f in forecasters for a in ("-f", f)]
    sweep = run_cli(
        "sweep",
        "--store",
        str(store),
        *picked,
        "--out",
        str(runs),
        "--db",
        str(runs / "h.db"),
        "--json",
    )
    assert sweep.returncode == 0, sweep.stderr
    run_id = json.loads(sweep.stdout)["run_id"]
    exported = run_cli("leaderboard", run_id, "--db", str(runs / "h.db"), "--out", str(out), *board)
    assert exported.returncode == 0, exported.stderr
    return out
