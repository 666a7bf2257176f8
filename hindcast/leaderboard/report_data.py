"""Where the forecast viewer's records go: inside report.html while they are small, else in
script files beside it, so the page's size is bounded whatever the run's.

- Up to INLINE_BYTES of records (the sample's default run and any run of a few thousand
  forecasts): the records are JSON in one attribute of the page, which stays one file.
- Beyond: the records go, in canonical order, into `report.data/forecasts-NNNNN.js` beside
  report.html, each file at most CHUNK_BYTES (or one record) and CHUNK_RECORDS records, written
  as one call `hindcastForecasts(N, [...])`. The page keeps only their index (file, count); its
  own script loads the file a page of the viewer needs with a <script> element, which works
  from file:// (no fetch, no CORS) and from any web server, with no network beyond the files
  beside it. The page's policy runs only its own hashed script and what that script inserts
  ('strict-dynamic'); a file missing is said in the viewer, the rest of the report unaffected.

Byte-reproducible like the page: the same records give the same files.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hindcast.frozen import write_text_atomic
from hindcast.leaderboard import viewer

FOLDER = "report.data"
INLINE_BYTES = 2_000_000
CHUNK_BYTES = 1_000_000
CHUNK_RECORDS = 2_000
CALLBACK = "hindcastForecasts"


@dataclass(frozen=True)
class Chunk:
    name: str  # file name inside FOLDER
    count: int  # records in it
    text: str  # the file's content


@dataclass(frozen=True)
class Placement:
    """The viewer's records as the page carries them: inline JSON, or an index of files."""

    total: int
    inline: str | None  # the records' JSON (for an attribute) when they stay in the page
    chunks: Sequence[Chunk] = ()

    @property
    def paged(self) -> bool:
        return self.inline is None

    def index(self) -> str:
        """The files' index for the page: [[name, count], …] as JSON."""
        return json.dumps([[c.name, c.count] for c in self.chunks], separators=(",", ":"))


def place(records: Sequence[dict], inline_bytes: float = INLINE_BYTES) -> Placement:
    """Inline when the records' JSON is at most `inline_bytes` (UTF-8), else in chunks."""
    encoded = [encode(r) for r in records]
    if sum(len(e) + 1 for e in encoded) <= inline_bytes:
        return Placement(len(records), viewer.attribute(records))
    return Placement(len(records), None, chunks(encoded))


def chunks(records: Sequence[str]) -> list[Chunk]:
    """The encoded records, in order, cut into files."""
    out: list[Chunk] = []
    batch: list[str] = []
    size = 0
    for encoded in records:
        if batch and (size + len(encoded) > CHUNK_BYTES or len(batch) >= CHUNK_RECORDS):
            out.append(_chunk(len(out), batch))
            batch, size = [], 0
        batch.append(encoded)
        size += len(encoded) + 1
    if batch:
        out.append(_chunk(len(out), batch))
    return out


def encode(record: dict) -> str:
    """One record as a JavaScript expression: JSON (sorted keys, ASCII only, so no line
    separator or other character can end a string early)."""
    return json.dumps(record, ensure_ascii=True, sort_keys=True, separators=(",", ":"))


def _chunk(number: int, encoded: Sequence[str]) -> Chunk:
    text = f"{CALLBACK}({number},[\n" + ",\n".join(encoded) + "\n]);\n"
    return Chunk(f"forecasts-{number + 1:05d}.js", len(encoded), text)


def write(folder: Path, placement: Placement) -> Path | None:
    """Write the chunk files into FOLDER/report.data (removing files of an earlier report there
    that this one does not have); inline records: remove that folder's chunk files. The folder's
    path when there are files."""
    data = folder / FOLDER
    keep = {c.name for c in placement.chunks}
    if data.is_dir():
        for stale in data.glob("forecasts-*.js"):
            if stale.name not in keep:
                stale.unlink()
    if not placement.chunks:
        if data.is_dir() and not any(data.iterdir()):
            data.rmdir()
        return None
    data.mkdir(parents=True, exist_ok=True)
    for chunk in placement.chunks:
        write_text_atomic(data / chunk.name, chunk.text)
    return data
