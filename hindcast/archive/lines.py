"""Numbered input lines and the reject records every reader shares.

Plain files and zstandard files (Reddit dumps are compressed with a long window:
`max_window_size=2**31`) are both streamed line by line in constant memory.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hindcast.errors import HindcastError

ZSTD_MAX_WINDOW = 2**31


class ArchiveInputError(HindcastError):
    """An archive input that cannot be read at all (missing file, unknown format, …)."""


@dataclass(frozen=True, slots=True)
class Reject:
    """A malformed input row: where it is and why it was refused."""

    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


def numbered_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, raw bytes without the newline) for every line, blank ones skipped."""
    with _open_bytes(path) as stream:
        for number, raw in enumerate(stream, 1):
            raw = raw.rstrip(b"\r\n")
            if raw.strip():
                yield number, raw


def _open_bytes(path: Path):
    if not path.is_file():
        raise ArchiveInputError(f"{path}: no such input file")
    if path.suffix != ".zst":
        return path.open("rb")
    import zstandard

    decompressor = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW)
    raw = decompressor.stream_reader(path.open("rb"), closefd=True, read_size=1 << 20)
    return io.BufferedReader(raw, buffer_size=1 << 20)


def json_objects(path: Path) -> Iterator[tuple[int, dict | Reject]]:
    """(line number, parsed object or Reject) for each line of an NDJSON file (.zst or plain)."""
    import zstandard

    try:
        for number, raw in numbered_lines(path):
            yield number, _parse(path, number, raw)
    except zstandard.ZstdError as exc:
        raise ArchiveInputError(f"{path}: corrupt zstandard stream ({exc})") from exc


def _parse(path: Path, number: int, raw: bytes) -> dict | Reject:
    try:
        value = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return Reject(str(path), number, f"not valid UTF-8 at byte {exc.start}")
    except json.JSONDecodeError as exc:
        return Reject(str(path), number, f"invalid JSON: {exc.msg} at column {exc.colno}")
    if not isinstance(value, dict):
        return Reject(str(path), number, f"expected a JSON object, got {type(value).__name__}")
    return value
