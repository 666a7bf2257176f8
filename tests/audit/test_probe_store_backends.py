"""The memorisation probe's results on each backend: recall.json beside a SQLite run database,
and the table `probe_answers` of the run database when it is PostgreSQL (a real server,
tests/pg.py): merged the same way, several machines probing at once lose no answer, reading
creates nothing, and no message or --json output names the database with its password.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import psycopg
import pytest

from hindcast.audit.probe_store import (
    RecallTable,
    default_recall_path,
    exclude_recalled_runs,
    load_recall,
    store_answers,
)
from hindcast.errors import ConfigError, RunStoreError
from hindcast.llm.fake import FakeChatModel, error
from tests.audit.test_audit_store_backends import tables
from tests.audit.test_probe import A, B, run_probe, scripted
from tests.cli.test_probe_cli import knows_first
from tests.helpers import SAMPLE_MARKETS, run_cli

PASSWORD = "planted-probe-pass-9753"


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path) -> str:
    """Where the probe results live: a file, or a new database on the session's server."""
    if request.param == "sqlite":
        return str(tmp_path / "recall.json")
    return request.getfixturevalue("pg_server").create_database()


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    """The scripted probe of tests/audit/test_probe.py: 20 answers of two models."""
    return run_probe(FakeChatModel(default=scripted), tmp_path_factory.mktemp("probe")).answers


def test_answers_merge_by_model_market_kind_and_t0_on_each_backend(location, answers):
    assert load_recall(location) == RecallTable()  # nothing stored yet: an empty table
    store_answers(location, answers[:12])
    changed = [replace(a, raw=a.raw + " (asked again)") for a in answers[8:]]
    assert str(store_answers(location, changed)) == location
    expected = RecallTable(answers[:8]).merged(changed)
    stored = load_recall(location)
    assert stored == expected and len(stored.answers) == 20
    assert stored.recalled() == {(A, "m1"), (A, "m2"), (B, "m1")}


def test_probes_from_several_machines_at_once_lose_no_answer(pg_server, answers):
    """Eight probers (own connections, the table created by whichever comes first) each store
    their own markets' answers and all re-store one shared answer: every answer is kept."""
    url = pg_server.create_database()

    def prober(i: int):
        mine = [replace(a, market_id=f"{a.market_id}-{i}") for a in answers]
        return store_answers(url, [*mine, replace(answers[0], raw=f"prober {i}")])

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(prober, range(8))) == [url] * 8
    stored = load_recall(url)
    assert len(stored.answers) == 8 * 20 + 1
    assert {a.market_id for a in stored.answers} == {
        f"m{k}-{i}" for k in range(1, 6) for i in range(8)
    } | {"m1"}
    assert next(a for a in stored.answers if a.market_id == "m1").raw.startswith("prober ")


def test_a_postgresql_run_database_is_the_default_and_reading_it_creates_nothing(pg_server):
    url = pg_server.create_database(password=PASSWORD)
    assert default_recall_path(url) == url
    before = tables(url)
    assert load_recall(url) == RecallTable() and tables(url) == before
    with pytest.raises(ConfigError, match="no probe results in") as caught:
        exclude_recalled_runs([], url)
    assert PASSWORD not in str(caught.value) and "***@127.0.0.1" in str(caught.value)
    assert tables(url) == before and "probe_answers" not in before
    wrong = url.replace(PASSWORD, "wrong-probe-pass-1357")
    for attempt in (lambda: load_recall(wrong), lambda: store_answers(wrong, [])):
        with pytest.raises(RunStoreError, match="probe results") as failed:
            attempt()
        assert "wrong-probe-pass-1357" not in str(failed.value)
        assert "***@127.0.0.1" in str(failed.value)


def _rows(url: str) -> int:
    with psycopg.connect(url.replace("+psycopg", "")) as db:
        return db.execute("SELECT COUNT(*) FROM probe_answers").fetchone()[0]


def test_probe_leaderboard_and_rescore_on_a_postgresql_database_name_it_without_its_password(
    pg_server, tmp_path
):
    """The commands as a user types them: a sweep and a probe into one PostgreSQL database, then
    `runs rescore` and `leaderboard` with --exclude-recalled reading the probe's table; an
    unreachable model (exit 4) names where its answers are. The planted password is checked by
    the server and appears in nothing printed or written."""
    url = pg_server.create_database(password=PASSWORD)
    printed: list[str] = []
    fake = FakeChatModel(default=knows_first)
    with fake.serve() as served:
        model = f"openai-compatible:{served}#fake-a"
        sweep = ["sweep", "--store", str(SAMPLE_MARKETS), "--limit", "4", "--fractions", "0.5"]
        swept = run_cli(
            *sweep,
            "-f",
            f"zero-shot:model={model}",
            "-f",
            "market",
            "--db",
            url,
            "--json",
            cwd=tmp_path,  # its report goes to runs/ here, not into the checkout
        )
        assert swept.returncode == 0, swept.stderr
        run_id = json.loads(swept.stdout)["run_id"]
        board = ["leaderboard", run_id, "--db", url, "--exclude-recalled", "--json"]
        never = run_cli(*board, "--out", str(tmp_path / "never"))
        assert never.returncode != 0 and "no probe results in" in never.stderr
        probe = ["probe", "recall", "-f", model, "--store", str(SAMPLE_MARKETS), "--limit", "4"]
        probed = run_cli(*probe, "--db", url, "--json")
        assert probed.returncode == 0, probed.stderr
        shown = run_cli(*probe, "--db", url)  # the table's last line names the results
        printed += [swept.stdout, swept.stderr, never.stdout, never.stderr, probed.stdout]
        printed += [probed.stderr, shown.stdout, shown.stderr]
    document = json.loads(probed.stdout)
    assert document["results"] == "postgresql+psycopg://***@" + url.split("@")[1]
    assert "results: postgresql+psycopg://" in shown.stdout and "***@127.0.0.1" in shown.stdout
    assert _rows(url) == 8 and not (tmp_path / "recall.json").exists()
    rescored = run_cli("rescore", run_id, "--db", url, "--exclude-recalled", "--json")
    assert rescored.returncode == 0, rescored.stderr
    (note,) = json.loads(rescored.stdout)["excluded"]
    assert f"zero-shot:model={model}: 1 row(s), 1 market(s)" in note
    published = run_cli(*board, "--out", str(tmp_path / "board"))
    assert published.returncode == 0, published.stderr
    written = [p.read_text() for p in (tmp_path / "board").rglob("*.md")]
    assert any(note in text for text in written)  # the report says what was left out
    printed += [rescored.stdout, rescored.stderr, published.stdout, published.stderr]
    down = FakeChatModel(default=error(503, retry_after=0))
    with down.serve() as served:
        stopped = run_cli(
            "probe", "recall", "-f", f"openai-compatible:{served}#down", "--limit", "1",
            "--store", str(SAMPLE_MARKETS), "--db", url,
        )  # fmt: skip
    assert stopped.returncode == 4 and "are stored in postgresql+psycopg://" in stopped.stderr
    printed += [stopped.stdout, stopped.stderr]
    assert _rows(url) == 8  # an outage stores nothing
    for text in printed:
        assert PASSWORD not in text
    for path in tmp_path.rglob("*"):
        assert not path.is_file() or PASSWORD.encode() not in path.read_bytes(), path
