"""The live arm's append-only forecast log: JSON lines, a sha256 hash chain.

Each record holds `seq` (0, 1, …), `prev` (the previous record's `sha256`; GENESIS for the
first) and its own `sha256`: the hash of its canonical JSON without that key. A record is
appended (flushed and fsynced) before its forecast goes into the run store, and the head
(`seq`, `sha256` of the last record) is kept in the service state, so a reader can tell
that no record was edited, removed, reordered, inserted or cut off the end after it was
written. `verify` reads a log and names the first bad record.

What the chain proves and does not: with the head recorded elsewhere (the service state, or
a copy a reader kept), a record cannot be changed after a later one was written without
the change showing. Someone who rewrites the whole log and the recorded head together is
not detected: the log is not signed, nor timestamped by a third party.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

GENESIS = "0" * 64


def digest(record: dict) -> str:
    """sha256 of a record's canonical JSON, its own `sha256` key left out."""
    body = {k: v for k, v in record.items() if k != "sha256"}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Head:
    seq: int  # the last record's seq (-1: an empty log)
    sha256: str

    def as_dict(self) -> dict:
        return {"seq": self.seq, "sha256": self.sha256}


EMPTY = Head(-1, GENESIS)


@dataclass(frozen=True)
class Verified:
    """A log read back: its records and head when every check passed, else the first
    problem (`bad`: the line number, 1-based, and why)."""

    records: tuple[dict, ...]
    head: Head
    bad: tuple[int, str] | None = None

    @property
    def ok(self) -> bool:
        return self.bad is None


def append(path: Path, head: Head, body: dict) -> tuple[dict, Head]:
    """Append one record after `head`: the record as written and the new head."""
    record = {**body, "seq": head.seq + 1, "prev": head.sha256}
    record["sha256"] = digest(record)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n"
    with open(path, "a", encoding="utf-8") as f:
        f.write(line)
        f.flush()
        os.fsync(f.fileno())
    return record, Head(record["seq"], record["sha256"])


def verify(path: Path, expected: Head | None = None) -> Verified:
    """Check every record's hash and link; with `expected` (the recorded head) also that the
    log ends exactly there (nothing cut off, nothing appended outside the service)."""
    if not Path(path).is_file():
        return Verified((), EMPTY, None if expected in (None, EMPTY) else (0, "no such log"))
    records: list[dict] = []
    head = EMPTY
    with open(path, "rb") as f:
        for number, line in enumerate(f, start=1):
            record, why = _checked(line, head)
            if why:
                return Verified(tuple(records), head, (number, why))
            records.append(record)
            head = Head(record["seq"], record["sha256"])
    if expected is not None and head != expected:
        return Verified(tuple(records), head, (len(records), _mismatch(head, expected)))
    return Verified(tuple(records), head)


def _checked(line: bytes, head: Head) -> tuple[dict, str | None]:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return {}, f"not UTF-8 text (byte {exc.start} of the line)"
    try:
        record = json.loads(text)
    except ValueError as exc:
        return {}, f"not a JSON record ({exc})"
    if not isinstance(record, dict):
        return {}, "not a JSON object"
    if record.get("seq") != head.seq + 1:
        return record, f"seq {record.get('seq')!r} where {head.seq + 1} was due"
    if record.get("prev") != head.sha256:
        return (
            record,
            "prev does not name the previous record's sha256 (a record removed or reordered)",
        )
    if record.get("sha256") != digest(record):
        return record, "its sha256 does not match its content (edited after it was written)"
    return record, None


def _mismatch(head: Head, expected: Head) -> str:
    if head.seq < expected.seq:
        return f"the log ends at seq {head.seq}; the recorded head is seq {expected.seq} (cut off)"
    if head.seq > expected.seq:
        return f"the log runs to seq {head.seq}; the recorded head is seq {expected.seq}"
    return f"the last record's sha256 {head.sha256[:12]}… is not the recorded head's"
