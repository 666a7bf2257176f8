"""The public Python surface (`hindcast.__all__`): instant to import, every name resolves,
and the `hindcast.sweep` convenience builds the same run as the explicit `hindcast.api.sweep`."""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

import hindcast
from hindcast import errors

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "markets" / "sample"
HEAVY = (
    "torch",
    "lancedb",
    "sentence_transformers",
    "polars",
    "numpy",
    "pyarrow",
    "sqlmodel",
    "httpx",
    "transformers",
)
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
BASELINES = ["market", "constant", "base-rate"]


@pytest.fixture(autouse=True)
def _in_empty_folder(tmp_path, monkeypatch):
    """Every test runs in its own empty folder (the default run database is runs/hindcast.db
    there), with no HINDCAST_DB from the environment."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HINDCAST_DB", raising=False)


def _loaded_after(code: str, cwd: Path) -> list[str]:
    """Heavy modules present in a fresh interpreter after running `code`."""
    probe = (
        f"{code}\nimport json, sys\nprint(json.dumps([m for m in {list(HEAVY)!r} if m in "
        "sys.modules]))"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_hindcast_loads_no_heavy_module(tmp_path):
    assert (
        _loaded_after("import hindcast; hindcast.__all__; hindcast.HindcastError", tmp_path) == []
    )


def test_cli_help_loads_no_heavy_module(tmp_path):
    code = (
        "import sys\nfrom hindcast.cli.main import run\nsys.argv = ['hindcast', '--help']\n"
        "try:\n    run()\nexcept SystemExit:\n    pass"
    )
    assert _loaded_after(code, tmp_path) == []


def _embedder_registry_missing() -> bool:
    from hindcast.archive import embed

    return not hasattr(embed, "register")


@pytest.mark.parametrize("name", hindcast.__all__)
def test_every_public_name_resolves(name):
    if name == "register_embedder" and _embedder_registry_missing():
        pytest.skip(
            "hindcast.archive.embed.register (the embedder registry) is not in this tree yet"
        )
    assert getattr(hindcast, name) is not None
    assert name in dir(hindcast)


def test_public_names_are_the_library_objects():
    from hindcast.forecasters.base import Context
    from hindcast.forecasters.registry import register
    from hindcast.records import Forecast
    from hindcast.replay import SweepResult
    from hindcast.replay.spec import ReplaySpec

    assert (
        hindcast.ReplaySpec,
        hindcast.SweepResult,
        hindcast.Forecast,
        hindcast.Context,
        hindcast.register_forecaster,
    ) == (ReplaySpec, SweepResult, Forecast, Context, register)


def test_every_error_class_is_public():
    tree = {
        n
        for n, obj in vars(errors).items()
        if inspect.isclass(obj) and issubclass(obj, errors.HindcastError)
    }
    assert tree <= set(hindcast.__all__)
    assert all(getattr(hindcast, n) is getattr(errors, n) for n in tree)


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        hindcast.nope  # noqa: B018


# ---- hindcast.sweep: keyword settings → spec, run database, now ----------------------------------
def test_sweep_settings_make_the_same_run_as_the_explicit_api(tmp_path):
    from hindcast import api
    from hindcast.replay.spec import spec_from_mapping
    from hindcast.runs.store import RunStore

    easy = hindcast.sweep(
        store=SAMPLE, forecasters=BASELINES, fractions=[1.0], limit=3, out=tmp_path / "a", now=NOW
    )
    spec = spec_from_mapping(
        {"store": SAMPLE, "forecasters": BASELINES, "fractions": [1.0], "limit": 3}
    )
    explicit = api.sweep(
        spec, runs=RunStore(f"sqlite:///{tmp_path / 'b.db'}"), out=tmp_path / "b", now=NOW
    )
    assert (easy.run_id, easy.planned, easy.markets) == (explicit.run_id, 9, 3)
    assert (tmp_path / "runs" / "hindcast.db").is_file()  # default run database, as the CLI's
    assert (tmp_path / "a" / easy.run_id / "leaderboard.csv").is_file()  # exports in OUT/<run id>/
    assert [(r.forecaster, r.brier) for r in easy.board] == [
        (r.forecaster, r.brier) for r in explicit.board
    ]


def test_sweep_db_path_and_resume(tmp_path):
    first = hindcast.sweep(
        store=SAMPLE,
        forecasters=["market"],
        fractions=[1.0],
        limit=2,
        out=tmp_path / "out",
        db=tmp_path / "my.db",
        now=NOW,
    )
    again = hindcast.sweep(
        store=SAMPLE,
        forecasters=["market"],
        fractions=[1.0],
        limit=2,
        out=tmp_path / "out",
        db=f"sqlite:///{tmp_path / 'my.db'}",
        now=NOW,
    )
    assert (tmp_path / "my.db").is_file() and not (tmp_path / "runs").exists()
    assert (first.resumed, again.resumed, again.executed) == (False, True, 0)


def test_sweep_database_from_hindcast_db(tmp_path, monkeypatch):
    monkeypatch.setenv("HINDCAST_DB", str(tmp_path / "env.db"))
    hindcast.sweep(
        store=SAMPLE,
        forecasters=["market"],
        fractions=[1.0],
        limit=1,
        out=tmp_path / "out",
        now=NOW,
    )
    assert (tmp_path / "env.db").is_file() and not (tmp_path / "runs").exists()


def test_sweep_from_a_toml_file_with_settings_over_it(tmp_path):
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(
        f'[markets]\nstore = "{SAMPLE.as_posix()}"\nlimit = 2\n[cutoffs]\nfractions = [0.5]\n'
        '[[forecasters]]\nspec = "market"\n',
        encoding="utf-8",
    )
    assert hindcast.load_spec(spec_file).limit == 2
    result = hindcast.sweep(spec_file, limit=1, out=tmp_path / "runs", now=NOW)
    assert (result.markets, result.planned) == (1, 1)


def test_sweep_async_inside_a_running_loop(tmp_path):
    async def main():
        return await hindcast.sweep_async(
            store=SAMPLE, forecasters=["constant"], fractions=[1.0], limit=1, out=tmp_path, now=NOW
        )

    assert asyncio.run(main()).planned == 1


def test_sweep_refuses_settings_over_a_spec_object_and_a_missing_store(tmp_path):
    spec = hindcast.spec_from_mapping({"store": SAMPLE, "forecasters": ["market"]})
    with pytest.raises(hindcast.ConfigError, match="limit given with a ReplaySpec"):
        hindcast.sweep(spec, limit=2, out=tmp_path, now=NOW)
    with pytest.raises(hindcast.ConfigError, match="needs a market store"):
        hindcast.sweep(forecasters=["market"], out=tmp_path, now=NOW)
    with pytest.raises(hindcast.ConfigError, match="not both"):
        hindcast.sweep(store=SAMPLE, out=tmp_path, db=tmp_path / "a.db", runs=object(), now=NOW)
    assert not any(tmp_path.iterdir())  # refused before a run database was made


def test_sample_is_found_from_any_working_directory(tmp_path):
    assert (
        hindcast.sample("markets") == SAMPLE
        and hindcast.sample("archive") == REPO / "archive" / "sample"
    )
    with pytest.raises(hindcast.ConfigError, match="use 'markets' or 'archive'"):
        hindcast.sample("runs")
