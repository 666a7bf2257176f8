"""Structured logs: one JSON object a line (`ts`, `level`, `event`, then the event's fields),
on stderr and, when configured, appended to a file."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from pathlib import Path

from hindcast.http import redact

LOGGER = "hindcast.schedule"


class JsonLines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "event": record.getMessage(),
            **getattr(record, "fields", {}),
        }
        if record.exc_info:
            line["traceback"] = self.formatException(record.exc_info)
        return json.dumps(_redacted(line), ensure_ascii=False, default=lambda v: redact(str(v)))


def _redacted(value):
    """Every text in a log line without credentials (`redact`), before it is encoded."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    return [_redacted(v) for v in value] if isinstance(value, (list, tuple)) else value


def setup(path: Path | None, stream=None) -> logging.Logger:
    """The service logger, writing JSON lines to `stream` (stderr) and `path`; idempotent."""
    logger = logging.getLogger(LOGGER)
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()
    handlers = [logging.StreamHandler(stream or sys.stderr)]
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(path, encoding="utf-8"))
    for handler in handlers:
        handler.setFormatter(JsonLines())
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return logger


def event(name: str, level: int = logging.INFO, exc_info=None, **fields) -> None:
    logging.getLogger(LOGGER).log(level, name, extra={"fields": fields}, exc_info=exc_info)
