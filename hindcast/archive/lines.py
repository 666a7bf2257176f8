"""Numbered input lines and the reject records every reader shares.

Plain files and zstandard files (Reddit dumps are compressed with a long window:
`max_window_size=2**31`) are both streamed line by line in constant memory.

A stream must end cleanly: a `.zst` file that ends inside a frame (a download cut short),
an empty `.zst` file, or a last line without its newline that is not valid JSON is an
`ArchiveInputError` naming the file and the byte offset, never a shorter input.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from hindcast.errors import ArchiveInputError

ZSTD_MAX_WINDOW = 2**31
READ_SIZE = 1 << 20
SLICE = 1 << 13  # compressed bytes fed at a time: bounds the output of one call (~ratio × 8 KiB)


@dataclass(frozen=True, slots=True)
class Reject:
    """A malformed input row: where it is and why it was refused."""

    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


@dataclass(frozen=True, slots=True)
class Line:
    """One input line: its number, raw bytes (no newline), byte offset (of the decompressed
    stream), and whether a newline ended it."""

    number: int
    raw: bytes
    offset: int
    terminated: bool


def numbered_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, raw bytes without the newline) for every line, blank ones skipped."""
    for line in input_lines(path):
        yield line.number, line.raw


def input_lines(path: Path) -> Iterator[Line]:
    """Every non-blank line of a plain or `.zst` file (a truncated `.zst` raises)."""
    offset = 0
    with _open_bytes(Path(path)) as stream:
        for number, raw in enumerate(stream, 1):
            terminated = raw.endswith(b"\n")
            text = raw.rstrip(b"\r\n")
            if text.strip():
                yield Line(number, text, offset, terminated)
            offset += len(raw)


def _open_bytes(path: Path) -> IO[bytes]:
    if not path.is_file():
        raise ArchiveInputError(f"{path}: no such input file")
    if path.suffix != ".zst":
        return path.open("rb")
    return io.BufferedReader(ZstdFrames(path), buffer_size=READ_SIZE)


class ZstdFrames(io.RawIOBase):
    """The decompressed bytes of every frame of a `.zst` file; raises `ArchiveInputError`
    when the file ends inside a frame, is empty, or is corrupt (file and byte offset named)."""

    def __init__(self, path: Path):
        import zstandard

        self.path, self.file = path, path.open("rb", buffering=READ_SIZE)
        self.dctx = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW)
        self.frame, self.frame_start, self.consumed, self.in_frame = (
            self.dctx.decompressobj(),
            0,
            0,
            False,
        )
        self.pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self.pending:
            chunk = self.file.read(SLICE)
            if not chunk:
                self._check_end()
                return 0
            self.pending = self._decompress(chunk)
        size = min(len(buffer), len(self.pending))
        buffer[:size], self.pending = self.pending[:size], self.pending[size:]
        return size

    def _decompress(self, data: bytes) -> bytes:
        import zstandard

        out = []
        while data:
            self.in_frame = True
            try:
                out.append(self.frame.decompress(data))
            except zstandard.ZstdError as exc:
                raise ArchiveInputError(
                    f"{self.path}: corrupt zstandard stream in the frame starting at byte "
                    f"{self.frame_start} ({exc})"
                ) from None
            self.consumed += len(data) - len(self.frame.unused_data)
            data = self._next_frame() if self.frame.eof else b""
        return b"".join(out)

    def _next_frame(self) -> bytes:
        rest = self.frame.unused_data
        self.frame, self.frame_start, self.in_frame = (
            self.dctx.decompressobj(),
            self.consumed,
            False,
        )
        return rest

    def _check_end(self) -> None:
        if self.consumed == 0:
            raise ArchiveInputError(f"{self.path}: empty file, not a zstandard stream (byte 0)")
        if self.in_frame:
            raise ArchiveInputError(
                f"{self.path}: truncated zstandard stream: the file ends at byte {self.consumed} "
                f"inside the frame starting at byte {self.frame_start} (a download cut short?)"
            )

    def close(self) -> None:
        self.file.close()
        super().close()


def json_objects(path: Path) -> Iterator[tuple[int, dict | Reject]]:
    """(line number, parsed object or Reject) for each line of an NDJSON file (.zst or plain)."""
    for line in input_lines(path):
        value = _parse(path, line.number, line.raw)
        if isinstance(value, Reject) and not line.terminated:
            raise ArchiveInputError(
                f"{path}:{line.number}: truncated: the input ends inside this line "
                f"(byte {line.offset + len(line.raw)}, {value.reason})"
            )
        yield line.number, value


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
