"""`hindcast live verify` of a log holding bytes that are not UTF-8 (issue 36, item 13): one line
naming the log and the record, not "unexpected UnicodeDecodeError"."""

from __future__ import annotations

from hindcast.schedule.livelog import EMPTY, append
from tests.helpers import run_cli


def test_a_log_that_is_not_utf8_is_one_line_naming_the_record(tmp_path):
    log = tmp_path / "live.jsonl"
    head = EMPTY
    for n in range(3):
        _, head = append(log, head, {"market_id": f"m{n}", "probability": 0.5})
    lines = log.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b"m1", b"m\xff")
    log.write_bytes(b"".join(lines))
    done = run_cli("live", "verify", str(log))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    at = lines[1].index(b"\xff")
    assert done.stderr.splitlines() == [
        f"hindcast: error: live log {log}: record 2: not UTF-8 text (byte {at} of the line)"
    ]
