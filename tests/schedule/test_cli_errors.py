"""`hindcast schedule …` maps every error to one line naming the input and the documented exit
code (the constants of hindcast.cli.common), with no traceback, even when run on its own."""

from __future__ import annotations

from typer.testing import CliRunner

from hindcast.cli.common import EXIT_ERROR, EXIT_OK, EXIT_STOPPED
from hindcast.cli.schedule import app, once_exit_code
from tests.schedule.conftest import run_process, write_config


def test_a_log_path_that_cannot_be_opened_is_one_line_naming_it(tmp_path):
    path = write_config(tmp_path, "http://127.0.0.1:9")
    path.write_text(path.read_text().replace('log = "runs/schedule.log"', 'log = "runs"'))
    (tmp_path / "runs").mkdir()
    proc = run_process(path, "once", "--now", "2026-03-01T00:00:00Z")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert (
        proc.stderr.strip().splitlines()[-1]
        == f"hindcast: error: Is a directory: {tmp_path / 'runs'}"
    )


def test_a_corrupt_run_database_is_one_line_naming_it(tmp_path):
    path = write_config(tmp_path, "http://127.0.0.1:9")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "hindcast.db").write_bytes(b"this is not a database" * 100)
    before = (tmp_path / "runs" / "hindcast.db").read_bytes()
    result = CliRunner().invoke(app, ["status", "--config", str(path)])
    assert result.exit_code == EXIT_ERROR and "Traceback" not in result.stderr
    assert (
        len(result.stderr.splitlines()) == 1
        and str(tmp_path / "runs" / "hindcast.db") in result.stderr
    ), result.stderr
    assert (tmp_path / "runs" / "hindcast.db").read_bytes() == before


def test_once_exits_4_when_the_only_trouble_was_a_resumable_stop():
    assert once_exit_code(["ok", "ok"]) == EXIT_OK
    assert once_exit_code(["ok", "stopped"]) == EXIT_STOPPED
    assert once_exit_code(["stopped", "failed"]) == once_exit_code(["interrupted"]) == EXIT_ERROR
