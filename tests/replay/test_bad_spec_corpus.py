"""The bad-input corpus of sweep specs (tests/fixtures/bad_input/sweep_specs): `hindcast sweep
--spec` exits 1 with exactly one line naming the spec file, no traceback, and writes nothing
(no run folder, no database)."""

from __future__ import annotations

import sys

import pytest

from hindcast.cli.main import app, guarded
from tests.helpers import ROOT

SPECS = sorted((ROOT / "tests" / "fixtures" / "bad_input" / "sweep_specs").iterdir())


@pytest.mark.parametrize("path", SPECS, ids=[p.name for p in SPECS])
def test_every_bad_spec_is_one_line_naming_it_and_nothing_is_written(
    tmp_path, monkeypatch, capsys, path
):
    # --forecaster constant: a case that slipped through would run a quick baseline sweep (and fail
    # the test) rather than embed the sample archive for the default local-model forecasters
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "hindcast",
            "sweep",
            "--spec",
            str(path),
            "--out",
            str(tmp_path / "runs"),
            "--forecaster",
            "constant",
        ],
    )
    code = guarded(app)
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith(f"hindcast: error: spec file {path}: "), err
    assert list(tmp_path.iterdir()) == []
