"""`hindcast analyze`'s options for the research figures, as a user types them: the baseline of
relative skill, the convergence threshold, the seed; a bad one is one line and an exit code."""

import json

import pytest

from tests.helpers import run_cli


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("options")
    db = folder / "hindcast.db"
    run_cli(
        "sweep",
        "-f",
        "market",
        "-f",
        "constant",
        "-f",
        "base-rate",
        "--limit",
        "12",
        "--out",
        str(folder),
        "--db",
        str(db),
        check=True,
    )
    (listed,) = json.loads(run_cli("runs", "list", "--db", str(db), "--json", check=True).stdout)
    return listed["run"], db


def analyze(run, *args):
    run_id, db = run
    document = json.loads(
        run_cli("analyze", run_id, "--db", str(db), "--json", *args, check=True).stdout
    )
    return document["settings"], {f["key"]: f for f in document["findings"]}


def test_the_baseline_scales_relative_skill_and_the_threshold_titles_convergence(run):
    settings, found = analyze(run, "--baseline", "constant", "--threshold", "0.2", "--seed", "3")
    assert settings == {"baseline": "constant", "threshold": 0.2, "seed": 3}
    skill = {r["forecaster"]: r["relative_skill"] for r in found["pairwise-skill"]["rows"]}
    assert skill["constant"] == 1.0 and skill["market"] < 1.0  # the market beats a constant 0.5
    assert "≥ 0.2" in found["convergence"]["title"]


def test_the_same_seed_gives_the_same_document_and_another_seed_other_intervals(run):
    assert analyze(run, "--seed", "1") == analyze(run, "--seed", "1")
    first, other = analyze(run, "--seed", "1")[1], analyze(run, "--seed", "2")[1]
    assert first["relative-log"]["rows"] != other["relative-log"]["rows"]


def test_an_unknown_baseline_is_one_line_and_exit_1(run):
    run_id, db = run
    proc = run_cli("analyze", run_id, "--db", str(db), "--baseline", "nobody")
    assert (
        proc.returncode == 1
        and "unknown baseline 'nobody'" in proc.stderr
        and "Traceback" not in proc.stderr
    )
    assert len(proc.stderr.strip().splitlines()) == 1
