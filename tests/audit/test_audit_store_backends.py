"""The audit store on each backend: audits.db (SQLite) beside a SQLite run database, and two
tables of the run database when it is PostgreSQL (a real server, tests/pg.py), so a second
machine auditing a run replays every verdict a first one paid for and the report of any
machine shows the audit. Reading stored audits (the report) creates nothing.
"""

from __future__ import annotations

import psycopg
import pytest

from hindcast.audit import run_audit, stored
from hindcast.errors import RunStoreError
from hindcast.leaks import Verdict
from hindcast.runs.store import RunStore
from tests.audit import planted_run

FAST = 300


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path) -> str:
    """Where the audit store lives: a SQLite file, or a new database on the session's server."""
    if request.param == "sqlite":
        return str(tmp_path / "audits.db")
    return request.getfixturevalue("pg_server").create_database()


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    return planted_run.build(tmp_path_factory.mktemp("planted"))


def tables(url: str) -> set[str]:
    with psycopg.connect(url.replace("+psycopg", "")) as db:
        return {
            r[0]
            for r in db.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            )
        }


def test_every_opener_shares_the_verdicts_and_the_audits(location):
    first, second = stored.AuditStore(location), stored.AuditStore(location)
    first.keep("d", "t1", "q1", Verdict("leak", 0.9, "judge-a", "names the outcome"))
    assert second.verdict("d", "t1", "q1") == Verdict("leak", 0.9, "judge-a", "names the outcome")
    assert second.verdict("d", "t1", "q2") is None and second.verdict("e", "t1", "q1") is None
    second.keep("d", "t1", "q1", Verdict("clean", 0.1, "judge-b", "é"))  # replaced
    assert first.verdict("d", "t1", "q1") == Verdict("clean", 0.1, "judge-b", "é")
    assert first.n_verdicts() == second.n_verdicts() == 1
    first.save("r1", ["b", "a"], {"run": "r1", "n": 1})
    first.save("r1", ["a"], {"run": "r1", "n": 2})
    second.save("r1", ["b", "a"], {"run": "r1", "n": 3})  # the newest audit of (run, detectors)
    assert (
        second.audits("r1") == first.audits("r1") == [{"run": "r1", "n": 2}, {"run": "r1", "n": 3}]
    )
    assert first.audits("r2") == []
    first.close(), second.close()


def test_a_second_audit_on_another_machine_calls_no_detector(planted, location):
    """Two audits of one run by two processes that share only the audit store."""
    scripted = planted_run.register_scripted()
    results = []
    for _ in range(2):
        store = RunStore(planted.url, read_only=True)
        try:
            results.append(
                run_audit.audit(
                    store, planted.run_id, ("scripted",), audit_file=location, replicates=FAST
                )
            )
        finally:
            store.close()
    first, second = results
    assert (first.judged, first.cached) == (6, 0) and (second.judged, second.cached) == (0, 6)
    assert len(scripted.calls) == 6 and second.finding == first.finding


def test_a_postgresql_run_database_keeps_its_audits_and_the_report_reads_them(pg_server):
    url = pg_server.create_database()
    RunStore(url).close()
    assert stored.audit_path(url) == url
    before = tables(url)
    assert stored.stored_findings(url, ["r1"]) == []  # nothing audited: none, and nothing made
    assert tables(url) == before and not before & {"audit_verdicts", "audit_documents"}
    audits = stored.AuditStore(stored.audit_path(url))
    document = {
        "run": "r1",
        "finding": {"key": "audit", "title": "Leak audit", "rows": [{"x": 1}], "notes": ["n"]},
        "columns": ["x"],
    }
    audits.save("r1", ["scripted"], document)
    audits.close()
    assert tables(url) == before | {"audit_verdicts", "audit_documents"}
    (finding,) = stored.stored_findings(url, ["r1", "other"])
    assert finding == stored.finding_of(document) and stored.stored_findings(url, ["other"]) == []


def test_a_postgresql_audit_store_that_cannot_be_opened_is_one_error_without_its_password(
    pg_server,
):
    url = pg_server.create_database(password="planted-audit-pass-2468")
    wrong = url.replace("planted-audit-pass-2468", "wrong-pass-1357")
    for attempt in (
        lambda: stored.AuditStore(wrong),
        lambda: stored.stored_findings(wrong, ["r1"]),
    ):
        with pytest.raises(RunStoreError, match="audit store") as caught:
            attempt()
        message = str(caught.value)
        assert "wrong-pass-1357" not in message and "***@127.0.0.1" in message
