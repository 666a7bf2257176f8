"""Where audits are kept: `audits.db` (SQLite) beside the run database (`runs/audits.db` for a
database that is not a SQLite file). Two tables:

- `verdicts`: one detector verdict per (detector, SHA-256 of the text, SHA-256 of the
  question as it stood at t0): a second audit of the same run, or of another run that read
  the same document for the same question, calls no detector again;
- `audits`: the newest finished audit of each (run, detectors) as its JSON document, which
  the HTML report renders (`findings`) without calling any detector.

The run database itself is never written. An outage is never stored as a verdict.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import closing
from dataclasses import replace
from pathlib import Path

from hindcast.errors import RunStoreError
from hindcast.leaks import Verdict
from hindcast.records import Question
from hindcast.scoring import Finding
from hindcast.timeutil import iso

FILE = "audits.db"
SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (detector TEXT NOT NULL, text_sha TEXT NOT NULL, question_sha TEXT NOT NULL,
    label TEXT NOT NULL, score REAL NOT NULL, judged_by TEXT NOT NULL, reason TEXT NOT NULL,
    PRIMARY KEY (detector, text_sha, question_sha));
CREATE TABLE IF NOT EXISTS audits (run_id TEXT NOT NULL, detectors TEXT NOT NULL, document TEXT NOT NULL,
    PRIMARY KEY (run_id, detectors));
"""


def audit_path(db_url: str, fallback: Path = Path("runs")) -> Path:
    """audits.db beside the run database when it is a SQLite file, else in `fallback`."""
    if db_url.startswith("sqlite:///"):
        path = db_url.removeprefix("sqlite:///").partition("?")[0]
        if path not in ("", ":memory:"):
            return Path(path).parent / FILE
    return Path(fallback) / FILE


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def question_sha(question: Question) -> str:
    """The question as the detector sees it (every field, t0 included; never the outcome)."""
    fields = [
        question.market_id,
        question.question,
        question.description,
        iso(question.t0),
        question.url,
        question.topic,
        iso(question.scheduled_close) if question.scheduled_close else None,
    ]
    return text_sha(json.dumps(fields, ensure_ascii=False))


class AuditStore:
    """The verdict cache and the finished audits (one SQLite file, created on first open)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path, timeout=30)
            self.db.executescript("PRAGMA journal_mode=WAL;" + SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise RunStoreError(f"audit store {self.path}: {exc}") from None

    def close(self) -> None:
        self.db.close()

    def verdict(self, detector: str, text_hash: str, question_hash: str) -> Verdict | None:
        row = self.db.execute(
            "SELECT label, score, judged_by, reason FROM verdicts WHERE detector=? AND text_sha=? "
            "AND question_sha=?",
            (detector, text_hash, question_hash),
        ).fetchone()
        return None if row is None else Verdict(row[0], row[1], row[2], row[3])

    def keep(self, detector: str, text_hash: str, question_hash: str, verdict: Verdict) -> None:
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    detector,
                    text_hash,
                    question_hash,
                    verdict.label,
                    float(verdict.score),
                    verdict.detector,
                    verdict.reason,
                ),
            )

    def n_verdicts(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0]

    def save(self, run_id: str, detectors: Sequence[str], document: dict) -> None:
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO audits VALUES (?, ?, ?)",
                (run_id, json.dumps(list(detectors)), json.dumps(document, sort_keys=True)),
            )

    def audits(self, run_id: str) -> list[dict]:
        rows = self.db.execute(
            "SELECT document FROM audits WHERE run_id=? ORDER BY detectors", (run_id,)
        )
        return [json.loads(text) for (text,) in rows]


def rows_fingerprint(rows) -> str:
    """What an audit scored, in one hash: each scored row's key and probability (ScoredRows). A
    stored audit whose fingerprint differs from the run's rows now is stale."""
    keys = sorted((r.forecaster, r.market_id, iso(r.t0), r.repeat, r.probability) for r in rows)
    return text_sha(json.dumps(keys))


def stored_findings(
    db_url: str, run_ids: Sequence[str], rows: Mapping[str, Sequence] | None = None
) -> list[Finding]:
    """The stored audits of `run_ids` as Findings, for the report (read only; no audits.db: none).
    `rows`: run id → its scored rows now; an audit made on other rows is titled STALE."""
    path = audit_path(db_url)
    if not path.is_file() or not run_ids:
        return []
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)) as db:
        found = db.execute(
            "SELECT document FROM audits WHERE run_id IN (%s) ORDER BY run_id, detectors"
            % ",".join("?" * len(run_ids)),
            tuple(run_ids),
        ).fetchall()
    documents = [json.loads(text) for (text,) in found]
    findings = [_marked(finding_of(d), d, rows) for d in documents]
    return [
        f if i == 0 else replace(f, key=f"audit-{i + 1}") for i, f in enumerate(findings)
    ]  # one section id each


def _marked(finding: Finding, document: dict, rows: Mapping[str, Sequence] | None) -> Finding:
    if (
        rows is None
        or document["run"] not in rows
        or document.get("rows_sha") == rows_fingerprint(rows[document["run"]])
    ):
        return finding
    return replace(
        finding,
        title=f"{finding.title} — STALE: the run changed since this audit; run hindcast audit again",
    )


def finding_of(document: dict) -> Finding:
    """An audit's JSON document back as its Finding (the report renders it like any analysis)."""
    stored = document["finding"]
    columns = tuple(document["columns"])
    rows = tuple(tuple(row.get(c) for c in columns) for row in stored["rows"])
    return Finding(stored["key"], stored["title"], columns, rows, tuple(stored["notes"]))
