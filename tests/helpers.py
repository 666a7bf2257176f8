"""Shared test helpers: where the shipped real data lives, how to run the real CLI.

Tests use only what the repository ships: `markets/sample`, `archive/sample` (every one
of the 46,809 real headlines, as the Parquet partitions of a frozen snapshot) and
`tests/fixtures`, or data they generate. Nothing is read from beside the checkout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_MARKETS = ROOT / "markets" / "sample"
SAMPLE_ARCHIVE = ROOT / "archive" / "sample"
UTC = timezone.utc


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def run_cli(
    *args: str,
    cwd: Path | None = None,
    check: bool = False,
    timeout: float = 600,
    env: dict | None = None,
) -> subprocess.CompletedProcess:
    """The real `hindcast` command, as a user types it, in a subprocess (`env`: variables
    set on top of this process's environment; a value None removes one)."""
    full_env = {**os.environ, **(env or {})}
    full_env = {k: v for k, v in full_env.items() if v is not None}
    proc = subprocess.run(
        [sys.executable, "-m", "hindcast", *args],
        cwd=cwd or ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"hindcast {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}"
        )
    return proc


def sample_headlines(months: list[str] | None = None) -> dict[str, list[dict]]:
    """The shipped real headlines in their input format (`id`, `created_utc`, `title`,
    `source`, `kind`), by creation month `YYYY-MM`, read from `archive/sample`'s snapshot
    (rows in the snapshot's order: creation instant, then id)."""
    import pyarrow.parquet as pq

    snapshot = SAMPLE_ARCHIVE / "snapshots" / (SAMPLE_ARCHIVE / "LATEST").read_text().strip()
    out = {}
    for part in sorted(snapshot.glob("source=*/month=*/*.parquet")):
        month = part.parent.name.removeprefix("month=")
        if months is None or month in months:
            columns = ["id", "created_us", "title", "source", "kind"]
            out.setdefault(month, []).extend(
                _headline(r) for r in pq.read_table(part, columns=columns).to_pylist()
            )
    return out


def _headline(row: dict) -> dict:
    return {
        "id": row["id"],
        "created_utc": row["created_us"] // 1_000_000,
        "title": row["title"],
        "source": row["source"],
        "kind": row["kind"],
    }


def write_sample_headlines(folder: Path, months: list[str] | None = None) -> list[Path]:
    """The shipped headlines as `headlines`-format inputs, one `news_YYYY-MM.jsonl` a month."""
    import json

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for month, rows in sorted(sample_headlines(months).items()):
        paths.append(folder / f"news_{month}.jsonl")
        paths[-1].write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
    return paths


def days(n: float) -> timedelta:
    return timedelta(days=n)


class BlockingServer:
    """A ThreadingHTTPServer on 127.0.0.1 whose handler can hold chosen requests.

    `block(predicate)` makes matching requests wait until `release()` (a test kills its
    client meanwhile). Subclasses give `handler_for(self)` → a BaseHTTPRequestHandler class.
    """

    never = staticmethod(lambda *args: False)

    def __init__(self, handler_factory):
        import threading

        from hindcast.llm.fake import QuietServer

        self.blocking = self.never
        self.blocked, self.released = threading.Event(), threading.Event()
        self.httpd = QuietServer(("127.0.0.1", 0), handler_factory(self))
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def block(self, predicate) -> None:
        self.blocked.clear()
        self.released.clear()
        self.blocking = predicate

    def release(self) -> None:
        self.blocking = self.never
        self.released.set()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
        self.httpd.shutdown()
        self.httpd.server_close()
