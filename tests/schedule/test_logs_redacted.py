"""The service's log lines never hold a credential (issue 24): a database URL with a password,
an endpoint with `?api_key=`, in a field, the message or a traceback, are written redacted to
both the stream and the log file."""

from __future__ import annotations

import io
import json
import logging

from hindcast.schedule import logs

SECRET = "planted-log-secret-3141"


def test_log_lines_are_redacted_in_the_stream_and_the_file(tmp_path):
    stream, path = io.StringIO(), tmp_path / "service.log"
    logs.setup(path, stream)
    try:
        raise RuntimeError(f"cannot reach postgresql://u:{SECRET}@127.0.0.1:1/runs")
    except RuntimeError as exc:
        logs.event(
            "job.failed",
            logging.ERROR,
            exc_info=exc,
            db=f"postgresql://u:{SECRET}@h/runs",
            endpoint=f"http://h/v1?api_key={SECRET}",
        )
    logs.setup(None, io.StringIO())  # closes the file handler
    for text in (stream.getvalue(), path.read_text(encoding="utf-8")):
        line = json.loads(text.strip().splitlines()[-1])
        assert SECRET not in text and line["db"] == "postgresql://***@h/runs"
        assert (
            line["endpoint"] == "http://h/v1?api_key=***"
            and "postgresql://***@127.0.0.1:1" in line["traceback"]
        )


def test_a_service_on_a_postgresql_database_prints_logs_and_writes_no_password(
    tmp_path, server, pg_server, monkeypatch
):
    """The service config names a PostgreSQL database by a URL with a planted password (checked
    by the real server): a tick, `schedule status --json`, and a service whose password is wrong
    (one line naming the database, exit non-zero) print, log and write neither password
    (the config file, the user's own, aside)."""
    from tests.schedule.conftest import TICKS, run_process, tick, write_config

    url = pg_server.create_database(password=SECRET)
    monkeypatch.setattr("tests.schedule.conftest.SERVICE_DB", url)
    config = write_config(tmp_path / "good", server.url)
    statuses, logged = tick(config, TICKS[0])
    assert set(statuses.values()) == {"ok"}, statuses
    status = run_process(config, "status", "--json")
    assert status.returncode == 0 and json.loads(status.stdout)["watermarks"], status.stderr
    wrong = "wrong-log-secret-2718"
    monkeypatch.setattr("tests.schedule.conftest.SERVICE_DB", url.replace(SECRET, wrong))
    refused = run_process(write_config(tmp_path / "bad", server.url), "once")
    assert refused.returncode != 0 and "***@127.0.0.1" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    printed = [logged, status.stdout, status.stderr, refused.stdout, refused.stderr]
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "hindcast.toml"]
    assert any(p.name == "schedule.log" for p in files)
    for secret in (SECRET, wrong):
        assert not [text for text in printed if secret in text]
        assert not [p for p in files if secret.encode() in p.read_bytes()]
