"""The live log brought back in step with the run store and its recorded head after a crash
(issue 36, item 4), and the check of logged records against the stored forecasts.

A tick writes each forecast in three steps, one forecast at a time (`live.Writer`): append the
record to the log (one write of the line and its newline, fsynced), store the forecast, record
the new head. A process killed (kill -9, power loss) during a tick leaves one of exactly these
states, and `recover` (run at the start of every tick, and by `hindcast live repair`) settles
each one:

- killed while appending: the log ends with an unfinished line (no newline). Its record was
  never stored nor recorded as head: the unfinished bytes are moved to `<log>.dropped` and cut.
- killed after appending, before storing: the log holds one record past the recorded head, no
  stored forecast matches it. Its forecast cannot be rebuilt from the log (which keeps hashes of
  the rationale, not the text): the record is moved to `<log>.dropped` and cut; the market is
  due again and is asked again at the next tick (the same as an outage).
- killed after storing, before recording the head: one record past the head, and the run store
  holds exactly its forecast (probability, error, rationale). The record is proven twice — it
  links to the recorded head and matches the stored forecast — and becomes the head.

Anything else (more than one record past the head, a record that does not link to the head, a
stored forecast that differs, a bad line that ends with a newline) is not a state a crash
leaves: nothing is changed and the tick's verification refuses the log naming the record.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from hindcast.schedule import livelog
from hindcast.timeutil import iso


def recover(log: Path, head: livelog.Head, store) -> tuple[livelog.Head | None, list[str]]:
    """Settle a crashed tick's log against the recorded `head` and the run `store`: the head to
    record when a stored record is adopted (else None), and what was done (one line each)."""
    done = []
    if (cut := _unfinished_tail(log)) is not None:
        _drop(log, cut)
        done.append(f"cut an unfinished last line of {log} (kept in {_sidecar(log)})")
    verified = livelog.verify(log)
    records = verified.records
    if not verified.ok or verified.head.seq != head.seq + 1 or records[-1]["prev"] != head.sha256:
        return None, done
    number = len(records)
    if cross_check(records[-1:], store) is None:
        done.append(f"record {number} of {log} was stored before the crash: now the head")
        return verified.head, done
    if _stored_of(records[-1], store) is None:
        _drop(log, _offset_of_last_line(log))
        done.append(
            f"record {number} of {log} was never stored (kept in {_sidecar(log)}); its market "
            "is asked again"
        )
    return None, done


def cross_check(records, store) -> tuple[int, str] | None:
    """The first record (line number, why) whose stored forecast is missing or differs."""
    stored: dict[str, dict] = {}
    for number, record in enumerate(records, start=1):
        found = _stored_of(record, store, stored)
        if found is None:
            return number, f"no forecast of it in run {record.get('run_id')} of the run store"
        if (found.probability, found.error) != (record["probability"], record["error"]):
            return number, (
                f"the run store holds probability {found.probability!r} / error {found.error!r}, "
                f"the log {record['probability']!r} / {record['error']!r}"
            )
        if sha(found.rationale) != record["rationale_sha256"]:
            return number, "the run store's rationale is not the one logged"
    return None


def _stored_of(record: dict, store, stored: dict[str, dict] | None = None):
    """The stored forecast of a record's (run, forecaster, market, t0), or None (`stored`: the
    runs' forecasts read so far, by run id)."""
    stored = {} if stored is None else stored
    rid = record.get("run_id")
    if rid not in stored:
        rows = store.forecasts(rid) if any(r.id == rid for r in store.runs()) else []
        stored[rid] = {(s.forecaster, s.market_id, iso(s.t0)): s.forecast for s in rows}
    return stored[rid].get((record["forecaster"], record["market_id"], record["t0"]))


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _unfinished_tail(log: Path) -> int | None:
    """The offset where an unfinished last line (bytes after the last newline) starts."""
    if not log.is_file() or log.stat().st_size == 0:
        return None
    data = log.read_bytes()
    return None if data.endswith(b"\n") else data.rfind(b"\n") + 1


def _offset_of_last_line(log: Path) -> int:
    data = log.read_bytes()
    return data.rfind(b"\n", 0, len(data) - 1) + 1


def _sidecar(log: Path) -> Path:
    return log.with_name(log.name + ".dropped")


def _drop(log: Path, offset: int) -> None:
    """Keep the bytes from `offset` on in the sidecar (fsynced), then cut the log there."""
    with open(log, "rb") as f:
        f.seek(offset)
        tail = f.read()
    with open(_sidecar(log), "ab") as side:
        side.write(tail if tail.endswith(b"\n") else tail + b"\n")
        side.flush()
        os.fsync(side.fileno())
    os.truncate(log, offset)
