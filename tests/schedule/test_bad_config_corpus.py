"""The bad-input corpus of service configs (tests/fixtures/bad_input/service_configs): every
`hindcast schedule` command exits 1 with exactly one line naming the config file, prints no
traceback, and writes nothing (no database, lock, log or store) — the whole config is
validated before any job runs."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from hindcast.cli.schedule import app
from tests.helpers import ROOT

CORPUS = ROOT / "tests" / "fixtures" / "bad_input" / "service_configs"
CONFIGS = sorted(p for p in CORPUS.iterdir() if p.name != "VALID.toml")


def tree(root):
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else "dir")
        for p in sorted(root.rglob("*"))
    }


@pytest.mark.parametrize("path", CONFIGS, ids=[p.name for p in CONFIGS])
def test_every_bad_config_is_one_line_for_every_command(tmp_path, path):
    config = tmp_path / "hindcast.toml"
    shutil.copyfile(path, config)
    before = tree(tmp_path)
    for command in (["once", "--now", "2026-03-01T00:00:00Z"], ["status"], ["run"]):
        result = CliRunner().invoke(app, [*command, "--config", str(config)])
        assert result.exit_code == 1 and result.stdout == "", (
            command,
            result.stdout,
            result.stderr,
        )
        assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr, (
            result.stderr
        )
        assert result.stderr.startswith(f"hindcast: error: config {config}"), result.stderr
        assert tree(tmp_path) == before


def test_the_valid_config_the_cases_are_made_from_loads(tmp_path):
    from hindcast.schedule.config import load

    shutil.copyfile(CORPUS / "VALID.toml", tmp_path / "hindcast.toml")
    assert load(tmp_path / "hindcast.toml").jobs == ("pull", "sweeps")
