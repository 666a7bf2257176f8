"""Where audits are kept: `audits.db` (SQLite) beside the run database; when the run database
is PostgreSQL, two tables of that database (`audit_verdicts`, `audit_documents`), so every
machine auditing its runs shares every verdict (`runs/audits.db` for any other database).
Two tables:

- `verdicts`: one detector verdict per (detector, SHA-256 of the text, SHA-256 of the
  question as it stood at t0): a second audit of the same run, or of another run that read
  the same document for the same question, calls no detector again;
- `audits`: the newest finished audit of each (run, detectors) as its JSON document, which
  the HTML report renders (`findings`) without calling any detector.

The run store's own tables are never written (on PostgreSQL only the two audit tables are,
created under an advisory lock by the first opener). An outage is never stored as a verdict.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import closing, nullcontext
from dataclasses import replace
from pathlib import Path

from hindcast import llm
from hindcast.audit.claims import CLAIM_COLUMNS
from hindcast.errors import RunStoreError
from hindcast.http import redact
from hindcast.leaks import Verdict
from hindcast.records import Question
from hindcast.scoring import Finding
from hindcast.timeutil import iso

FILE = "audits.db"
# (a trailing backslash continues a line: the SQL is byte for byte what earlier releases wrote)
SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (detector TEXT NOT NULL, text_sha TEXT NOT NULL, \
question_sha TEXT NOT NULL,
    label TEXT NOT NULL, score REAL NOT NULL, judged_by TEXT NOT NULL, reason TEXT NOT NULL,
    PRIMARY KEY (detector, text_sha, question_sha));
CREATE TABLE IF NOT EXISTS audits (run_id TEXT NOT NULL, detectors TEXT NOT NULL, \
document TEXT NOT NULL,
    PRIMARY KEY (run_id, detectors));
"""


def audit_path(db_url: str, fallback: Path = Path("runs")) -> Path | str:
    """audits.db beside the run database when it is a SQLite file; the run database itself
    (its URL) when it is PostgreSQL; else audits.db in `fallback`."""
    if is_postgresql(db_url):
        return db_url
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


PG_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS audit_verdicts (detector TEXT NOT NULL, text_sha TEXT NOT NULL, "
    "question_sha TEXT NOT NULL, label TEXT NOT NULL, score DOUBLE PRECISION NOT NULL, "
    "judged_by TEXT NOT NULL, reason TEXT NOT NULL, "
    "PRIMARY KEY (detector, text_sha, question_sha))",
    "CREATE TABLE IF NOT EXISTS audit_documents (run_id TEXT NOT NULL, detectors TEXT NOT NULL, "
    "document TEXT NOT NULL, PRIMARY KEY (run_id, detectors))",
)
_PG_LOCK = 0x6869616E61756474  # pg_advisory_xact_lock key of the audit tables
_SQL = {  # the same statements on each backend (SQLite file; PostgreSQL tables of the run database)
    "sqlite": {
        "verdict": "SELECT label, score, judged_by, reason FROM verdicts WHERE detector=? "
        "AND text_sha=? AND question_sha=?",
        "keep": "INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?, ?, ?, ?)",
        "count": "SELECT COUNT(*) FROM verdicts",
        "save": "INSERT OR REPLACE INTO audits VALUES (?, ?, ?)",
        "audits": "SELECT document FROM audits WHERE run_id=? ORDER BY detectors",
    },
    "postgresql": {
        "verdict": "SELECT label, score, judged_by, reason FROM audit_verdicts WHERE detector=%s "
        "AND text_sha=%s AND question_sha=%s",
        "keep": "INSERT INTO audit_verdicts VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT "
        "(detector, text_sha, question_sha) DO UPDATE SET label=EXCLUDED.label, "
        "score=EXCLUDED.score, judged_by=EXCLUDED.judged_by, reason=EXCLUDED.reason",
        "count": "SELECT COUNT(*) FROM audit_verdicts",
        "save": "INSERT INTO audit_documents VALUES (%s, %s, %s) ON CONFLICT (run_id, detectors) "
        "DO UPDATE SET document=EXCLUDED.document",
        "audits": "SELECT document FROM audit_documents WHERE run_id=%s "
        'ORDER BY detectors COLLATE "C"',
    },
}


def is_postgresql(location: str) -> bool:
    return llm.is_postgresql(str(location))


class AuditStore:
    """The verdict cache and the finished audits: one SQLite file (created on first open), or,
    `path` a PostgreSQL URL, two tables of that database (created by the first opener)."""

    def __init__(self, path: Path | str):
        self.pg = is_postgresql(str(path))
        self.path = str(path) if self.pg else Path(path)
        self._sql = _SQL["postgresql" if self.pg else "sqlite"]
        self.db = _open_pg(self.path) if self.pg else _open_sqlite(self.path)

    def close(self) -> None:
        self.db.close()

    def verdict(self, detector: str, text_hash: str, question_hash: str) -> Verdict | None:
        row = self.db.execute(self._sql["verdict"], (detector, text_hash, question_hash)).fetchone()
        return None if row is None else Verdict(row[0], row[1], row[2], row[3])

    def keep(self, detector: str, text_hash: str, question_hash: str, verdict: Verdict) -> None:
        with self._writing():
            self.db.execute(
                self._sql["keep"],
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
        return self.db.execute(self._sql["count"]).fetchone()[0]

    def save(self, run_id: str, detectors: Sequence[str], document: dict) -> None:
        with self._writing():
            self.db.execute(
                self._sql["save"],
                (run_id, json.dumps(list(detectors)), json.dumps(document, sort_keys=True)),
            )

    def audits(self, run_id: str) -> list[dict]:
        rows = self.db.execute(self._sql["audits"], (run_id,))
        return [json.loads(text) for (text,) in rows]

    def _writing(self):
        """One write: a transaction of the SQLite file (committed on success); on PostgreSQL the
        connection is in autocommit, each statement its own transaction."""
        return nullcontext() if self.pg else self.db


def _open_sqlite(path: Path) -> sqlite3.Connection:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=30)
        db.executescript("PRAGMA journal_mode=WAL;" + SCHEMA)
    except (OSError, sqlite3.Error) as exc:
        raise RunStoreError(f"audit store {path}: {exc}") from None
    return db


def _connect_pg(url: str, what: str = "audit store", **options):
    """A psycopg connection to the database of `url` (SQLAlchemy or libpq spelling); a failure
    is one RunStoreError naming `what` and the database without its password."""
    import psycopg

    try:
        return psycopg.connect("postgresql://" + url.split("://", 1)[1], **options)
    except psycopg.Error as exc:
        raise RunStoreError(f"{what} {redact(url)}: {redact(str(exc))}") from None


def _open_pg(url: str):
    """An autocommit connection; the two tables made once, under an advisory lock (many
    processes may open them at once)."""
    db = _connect_pg(url, autocommit=True)
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_LOCK,))
        for statement in PG_SCHEMA:
            db.execute(statement)
    return db


def rows_fingerprint(rows) -> str:
    """What an audit scored, in one hash: each scored row's key and probability (ScoredRows). A
    stored audit whose fingerprint differs from the run's rows now is stale."""
    keys = sorted((r.forecaster, r.market_id, iso(r.t0), r.repeat, r.probability) for r in rows)
    return text_sha(json.dumps(keys))


def stored_findings(
    db_url: str, run_ids: Sequence[str], rows: Mapping[str, Sequence] | None = None
) -> list[Finding]:
    """The stored audits of `run_ids` as Findings, for the report (read only; no audits.db, or
    no audit table in a PostgreSQL run database: none). `rows`: run id → its scored rows now;
    an audit made on other rows is titled STALE."""
    if not run_ids:
        return []
    found = (
        _pg_documents(db_url, run_ids)
        if is_postgresql(db_url)
        else _file_documents(db_url, run_ids)
    )
    documents = [json.loads(text) for (text,) in found]
    findings = [
        _marked(f, d, rows)
        for d in documents
        for f in (finding_of(d), *((claims_finding(d),) if d.get("claims") else ()))
    ]  # an audit made with --claims: its claim summary follows it
    return [
        f if i == 0 else replace(f, key=f"audit-{i + 1}") for i, f in enumerate(findings)
    ]  # one section id each


def _file_documents(db_url: str, run_ids: Sequence[str]) -> list[tuple[str]]:
    path = audit_path(db_url)
    if not Path(path).is_file():
        return []
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)) as db:
        return db.execute(
            "SELECT document FROM audits WHERE run_id IN (%s) ORDER BY run_id, detectors"
            % ",".join("?" * len(run_ids)),
            tuple(run_ids),
        ).fetchall()


def _pg_documents(db_url: str, run_ids: Sequence[str]) -> list[tuple[str]]:
    """In a read-only transaction: nothing is created or changed (no table yet: no audit)."""
    with closing(_connect_pg(db_url)) as db:
        db.execute("SET TRANSACTION READ ONLY")
        if db.execute("SELECT to_regclass('audit_documents')").fetchone()[0] is None:
            return []
        return db.execute(
            "SELECT document FROM audit_documents WHERE run_id = ANY(%s) "
            'ORDER BY run_id COLLATE "C", detectors COLLATE "C"',
            (list(run_ids),),
        ).fetchall()


def _marked(finding: Finding, document: dict, rows: Mapping[str, Sequence] | None) -> Finding:
    if (
        rows is None
        or document["run"] not in rows
        or document.get("rows_sha") == rows_fingerprint(rows[document["run"]])
    ):
        return finding
    return replace(
        finding,
        title=f"{finding.title} — STALE: the run changed since this audit; "
        "run hindcast audit again",
    )


def claims_finding(document: dict) -> Finding:
    """An audit's claim-level section (`hindcast audit --claims`) as a Finding: the summary per
    forecaster, its notes and the detectors."""
    said = document["claims"]
    return Finding(
        "audit-claims",
        f"Rationale claims stating a fact after t0, run {document['run']}",
        CLAIM_COLUMNS,
        tuple(tuple(row.get(c) for c in CLAIM_COLUMNS) for row in said["summary"]),
        (f"Detectors: {', '.join(said['detectors'])}.", *said["notes"]),
    )


def finding_of(document: dict) -> Finding:
    """An audit's JSON document back as its Finding (the report renders it like any analysis)."""
    stored = document["finding"]
    columns = tuple(document["columns"])
    rows = tuple(tuple(row.get(c) for c in columns) for row in stored["rows"])
    return Finding(stored["key"], stored["title"], columns, rows, tuple(stored["notes"]))
