"""Analyses kept in the run database's backend (SQLite or PostgreSQL): answers of a fixed
procedure that searches the archive (the evidence strata), computed at most once per
(procedure, archive identity, market, question SHA, t0) and read back by exports and reports.

One table, `analyses`, beside the run store's: created by the first write (`hindcast analyze`),
never by a read; not part of the run store's versioned schema (it holds nothing a run needs:
dropping it only means the answers are computed again). Reads and writes are batched: keys are
read per (procedure, archive) in chunks of `CHUNK` markets over one connection, answers written
`CHUNK` at a time, one transaction each, `INSERT … ON CONFLICT DO NOTHING` (a concurrent
`analyze` of the same run never duplicates a row nor fails). A store that cannot be written (a
read-only file, a role without CREATE/INSERT) is only read: `writable` is then False.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Column, MetaData, String, Table, Text, create_engine, event, select
from sqlalchemy.exc import SQLAlchemyError

__all__ = ["CHUNK", "TABLE", "AnalysisStore", "Key"]

TABLE = "analyses"
CHUNK = 500
Key = tuple[str, str, str, str, str]  # (procedure, archive, market_id, question_sha, t0 ISO)

_META = MetaData()
_ANALYSES = Table(
    TABLE,
    _META,
    Column("procedure", String, primary_key=True),
    Column("archive", String, primary_key=True),
    Column("market_id", String, primary_key=True),
    Column("question_sha", String, primary_key=True),
    Column("t0", String, primary_key=True),
    Column("answer", Text, nullable=False),
)


class AnalysisStore:
    """The `analyses` table of the run database at `url`: key → JSON answer. `writable=False`:
    only read (what it lacks is computed by the caller and not kept)."""

    def __init__(self, url: str, writable: bool = True) -> None:
        self.url, self.writable = url, writable
        self.engine = create_engine(url)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _busy_timeout)
        self._exists: bool | None = None

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> AnalysisStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get_many(self, keys: Iterable[Key]) -> dict[Key, dict]:
        """The answers kept for `keys` (JSON objects), read per (procedure, archive) and chunks
        of CHUNK markets over one connection; a key not kept is absent."""
        wanted = {tuple(k) for k in keys}
        if not wanted or self._missing_file() or not self._table_exists():
            return {}
        groups: dict[tuple[str, str], set[str]] = {}
        for procedure, archive, market, _, _ in wanted:
            groups.setdefault((procedure, archive), set()).add(market)
        found: dict[Key, dict] = {}
        t = _ANALYSES.c
        with self.engine.connect() as conn:
            for (procedure, archive), markets in groups.items():
                ordered = sorted(markets)
                for start in range(0, len(ordered), CHUNK):
                    query = select(t.market_id, t.question_sha, t.t0, t.answer).where(
                        t.procedure == procedure,
                        t.archive == archive,
                        t.market_id.in_(ordered[start : start + CHUNK]),
                    )
                    for market, sha, t0, answer in conn.execute(query):
                        key = (procedure, archive, market, sha, t0)
                        if key in wanted:
                            found[key] = json.loads(answer)
        return found

    def put_many(self, answers: Mapping[Key, dict] | Sequence[tuple[Key, dict]]) -> int:
        """Keep `answers` (a key already kept is left as it is), CHUNK a transaction; the number
        written now. Nothing when not writable; a refusal by the database makes it read-only."""
        items = list(answers.items() if isinstance(answers, Mapping) else answers)
        if not self.writable or not items:
            return 0
        try:
            _META.create_all(self.engine, tables=[_ANALYSES], checkfirst=True)
            self._exists = True
            written = 0
            for start in range(0, len(items), CHUNK):
                written += self._insert(items[start : start + CHUNK])
            return written
        except SQLAlchemyError:
            self.writable = False  # a read-only file or a role without the privilege
            return 0

    def _insert(self, items: list[tuple[Key, dict]]) -> int:
        from sqlalchemy.dialects import postgresql, sqlite

        dialect = postgresql if self.engine.dialect.name == "postgresql" else sqlite
        rows = [
            dict(zip(("procedure", "archive", "market_id", "question_sha", "t0"), key))
            | {"answer": json.dumps(answer, sort_keys=True)}
            for key, answer in items
        ]
        inserted = dialect.insert(_ANALYSES).on_conflict_do_nothing()
        with self.engine.begin() as conn:
            return len(conn.execute(inserted.returning(_ANALYSES.c.market_id), rows).all())

    def _missing_file(self) -> bool:
        """A SQLite run database that does not exist (read: nothing kept; never created)."""
        from hindcast.runs.database import db_file

        path = db_file(self.url)
        return path is not None and not path.is_file()

    def _table_exists(self) -> bool:
        if self._exists is None:
            from sqlalchemy import inspect

            try:
                found = TABLE in inspect(self.engine).get_table_names()
            except SQLAlchemyError:
                return False
            if not found:
                return False  # not remembered: another process may create it later
            self._exists = True
        return self._exists


def _busy_timeout(connection: Any, _record: object) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.close()
