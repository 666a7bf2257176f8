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
