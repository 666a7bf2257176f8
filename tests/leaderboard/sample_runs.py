"""Real runs for leaderboard tests: baselines swept over the shipped real market sample."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import run_cli

SWEEPS = {  # two runs that share only part of their (market, t0) rows
    "wide": (
        "-f",
        "market",
        "-f",
        "constant",
        "-f",
        "base-rate",
        "--fractions",
        "0.25,0.5,0.75,1.0",
        "--limit",
        "30",
    ),
    "narrow": ("-f", "market", "-f", "base-rate", "--fractions", "0.5,1.0", "--limit", "20"),
}


def sweep_runs(folder: Path, names: tuple[str, ...] = tuple(SWEEPS)) -> tuple[str, dict[str, str]]:
    """Sweep each named sweep into one database under `folder`; (database URL, name → run id)."""
    from hindcast.runs.database import db_url
    from hindcast.runs.store import RunStore

    url = db_url(folder / "hindcast.db")
    ids = {}
    for name in names:
        args = SWEEPS[name]
        before = {r.id for r in RunStore(url).runs()}
        run_cli(
            "sweep", "--out", str(folder), "--db", str(folder / "hindcast.db"), *args, check=True
        )
        (ids[name],) = {r.id for r in RunStore(url).runs()} - before
    return url, ids


def load(url: str, run_id: str):
    from hindcast import replay
    from hindcast.runs.store import RunStore

    return replay.load_scored(RunStore(url), run_id)


SCRIPT = "<script>alert(1)</script>"
IMG = '<img src=x onerror="alert(2)">'
TOPIC = "<b>topic</b> & <i>co</i>"


def injected(run):
    """The run with hostile text where markets and models put text: a forecaster name, a
    topic, the manifest; and the question text to pass the report (first market of the run)."""
    from dataclasses import replace

    first = min(r.market_id for r in run.rows)
    rows = [
        replace(
            r,
            forecaster=IMG if r.forecaster == "base-rate" else r.forecaster,
            topic=TOPIC if r.market_id == first else r.topic,
        )
        for r in run.rows
    ]
    manifest = replace(run.manifest, git_revision=f"</pre>{SCRIPT}")
    return replace(run, rows=rows, manifest=manifest), {first: f"{SCRIPT} Will this run?"}
