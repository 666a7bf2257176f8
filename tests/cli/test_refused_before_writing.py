"""Bad input is refused before anything is written, and nothing is lost (issue 24):

- `trade --trades` never replaces an input (the run database, the fee file), a folder or a file
  that is not a trades CSV of ours; no `.partial` is left behind or named;
- a bad forecaster parameter is refused before the run database and responses.db exist;
  `probe recall` with bad input creates no responses.db; `probe recall -f openai:` is one line;
- `archive search --query ''` is a usage error; `-q` hides the sweep's progress bar.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.helpers import SAMPLE_MARKETS, run_cli

NO_DB_ENV = {"HINDCAST_DB": None, "HINDCAST_DEBUG": None}
BASELINES = (
    "--store",
    str(SAMPLE_MARKETS),
    "--limit",
    "2",
    "--fractions",
    "0.5",
    "-f",
    "market",
    "-f",
    "constant:p=0.3",
)


def tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        if p.is_file()
        else "dir"
        for p in sorted(folder.rglob("*"))
    }


def one_line(proc, code: int = 1) -> str:
    lines = proc.stderr.strip().splitlines()
    assert (
        proc.returncode == code and len(lines) == 1 and lines[0].startswith("hindcast: error: ")
    ), proc.stderr
    assert "unexpected" not in lines[0] and "Traceback" not in proc.stderr
    return lines[0]


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("swept")
    proc = run_cli(
        "-q",
        "sweep",
        *BASELINES,
        "--out",
        str(folder),
        "--db",
        str(folder / "hindcast.db"),
        "--json",
        cwd=folder,
        env=NO_DB_ENV,
        check=True,
    )
    return folder, json.loads(proc.stdout)["run_id"]


def test_a_forecastbench_export_of_no_forecastbench_question_writes_nothing(swept, tmp_path):
    """The sample's Polymarket markets are not ForecastBench questions: `--format
    csv,forecastbench` is refused in one line before any file (the CSVs included) is written."""
    folder, run = swept
    args = ("leaderboard", run, "--db", str(folder / "hindcast.db"), "--out", "lb")
    line = one_line(run_cli(*args, "--format", "csv,forecastbench", cwd=tmp_path, env=NO_DB_ENV))
    assert "--format forecastbench: no forecast of a question imported" in line
    assert tree(tmp_path) == {}
    run_cli(*args, "--format", "csv", cwd=tmp_path, env=NO_DB_ENV, check=True)
    assert "lb/leaderboard.csv" in tree(tmp_path)


# ---- trade --trades --------------------------------------------------------------------------
def test_trades_onto_the_run_database_is_refused_and_loses_nothing(swept, tmp_path):
    folder, run = swept
    db = tmp_path / "copy.db"
    db.write_bytes((folder / "hindcast.db").read_bytes())
    before = tree(tmp_path)
    for given in (str(db), f"{tmp_path}/./copy.db"):
        line = one_line(
            run_cli("trade", run, "--db", str(db), "--trades", given, cwd=tmp_path, env=NO_DB_ENV)
        )
        assert "--db input" in line
    assert tree(tmp_path) == before
    assert (
        run_cli("runs", "show", run, "--db", str(db), cwd=tmp_path, env=NO_DB_ENV).returncode == 0
    )


def test_trades_onto_a_fee_file_or_a_foreign_file_is_refused(swept, tmp_path):
    folder, run = swept
    fees = tmp_path / "fees.toml"
    fees.write_text("default_rate = 0.0\n[rates]\n", encoding="utf-8")
    notes = tmp_path / "notes.csv"
    notes.write_text("my,own\nfile,1\n", encoding="utf-8")
    before = tree(tmp_path)
    db = str(folder / "hindcast.db")
    assert "--fees input" in one_line(
        run_cli(
            "trade",
            run,
            "--db",
            db,
            "--fees",
            str(fees),
            "--trades",
            str(fees),
            cwd=tmp_path,
            env=NO_DB_ENV,
        )
    )
    assert "not a trades CSV" in one_line(
        run_cli("trade", run, "--db", db, "--trades", str(notes), cwd=tmp_path, env=NO_DB_ENV)
    )
    assert tree(tmp_path) == before


def test_trades_into_a_folder_names_the_folder_and_leaves_no_partial(swept, tmp_path):
    folder, run = swept
    (tmp_path / "out").mkdir()
    line = one_line(
        run_cli(
            "trade",
            run,
            "--db",
            str(folder / "hindcast.db"),
            "--trades",
            "out",
            cwd=tmp_path,
            env=NO_DB_ENV,
        )
    )
    assert "--trades out: is a folder" in line and ".partial" not in line
    assert tree(tmp_path) == {"out": "dir"}


def test_a_trades_csv_of_ours_is_rewritten_and_no_temporary_file_remains(swept, tmp_path):
    folder, run = swept
    args = ("trade", run, "--db", str(folder / "hindcast.db"), "--trades", "trades.csv")
    run_cli(*args, cwd=tmp_path, env=NO_DB_ENV, check=True)
    first = (tmp_path / "trades.csv").read_bytes()
    run_cli(*args, cwd=tmp_path, env=NO_DB_ENV, check=True)
    assert (tmp_path / "trades.csv").read_bytes() == first and [
        p.name for p in tmp_path.iterdir()
    ] == ["trades.csv"]


def test_an_unwritable_trades_path_names_the_path_given(swept, tmp_path):
    folder, run = swept
    line = one_line(
        run_cli(
            "trade",
            run,
            "--db",
            str(folder / "hindcast.db"),
            "--trades",
            "missing/trades.csv",
            cwd=tmp_path,
            env=NO_DB_ENV,
        )
    )
    assert (
        "--trades missing/trades.csv" in line
        and ".partial" not in line
        and list(tmp_path.iterdir()) == []
    )


# ---- forecaster parameters, before anything is created ------------------------------------------
@pytest.mark.parametrize(
    "spec, says",
    [
        ("retrieval-agent:policy=bogus", "policy='bogus'"),
        ("constant:p=2", "not a probability"),
        (
            "zero-shot:model=openai-compatible:ftp://127.0.0.1/v1#m",
            "expected openai-compatible:http(s)://",
        ),
        (
            "zero-shot:model=openai-compatible:http://127.0.0.1:9/v1",
            "expected openai-compatible:http(s)://",
        ),
        ("zero-shot:model=openai:", "no model name"),
    ],
)
def test_a_bad_forecaster_parameter_is_refused_before_the_run_database_exists(tmp_path, spec, says):
    proc = run_cli(
        "sweep",
        "--store",
        str(SAMPLE_MARKETS),
        "--limit",
        "1",
        "--fractions",
        "0.5",
        "-f",
        spec,
        "--out",
        "runs",
        "--db",
        "runs/hindcast.db",
        cwd=tmp_path,
        env=NO_DB_ENV,
    )
    assert says in one_line(proc)
    assert list(tmp_path.iterdir()) == []  # no runs/, no hindcast.db, no responses.db


@pytest.mark.parametrize(
    "args, says",
    [
        (("-f", "openai:"), "no model name after 'openai:'"),
        (("-f", "openai-compatible:nonsense"), "expected openai-compatible:http(s)://"),
        (("-f", "zero-shot:model=local", "--fraction", "7"), "lifetime fraction 7.0"),
        (("-f", "zero-shot:model=local", "-m", "no-such-market"), "not in store"),
        (("-f", "zero-shot:model=local", "--store", "nowhere"), "not a market store"),
        (("-f", "zero-shot:model=local", "--models", "nowhere.toml"), "nowhere.toml"),
    ],
)
def test_probe_recall_refuses_bad_input_before_creating_the_response_cache(tmp_path, args, says):
    proc = run_cli(
        "probe", "recall", *args, "--db", "runs/hindcast.db", cwd=tmp_path, env=NO_DB_ENV
    )
    assert says in one_line(proc)
    assert list(tmp_path.iterdir()) == []


# ---- archive search, -q ---------------------------------------------------------------------------
@pytest.mark.parametrize("query", ["", "   "])
def test_an_empty_search_query_is_a_usage_error(tmp_path, query):
    proc = run_cli(
        "archive",
        "search",
        "--query",
        query,
        "--t0",
        "2025-06-01T00:00:00Z",
        cwd=tmp_path,
        env=NO_DB_ENV,
    )
    assert "--query" in one_line(proc, code=2) and proc.stdout == ""


def test_quiet_hides_the_sweep_progress_bar(tmp_path):
    proc = run_cli(
        "-q",
        "sweep",
        *BASELINES,
        "--out",
        "runs",
        "--db",
        "runs/hindcast.db",
        cwd=tmp_path,
        env=NO_DB_ENV,
        check=True,
    )
    assert proc.stderr == "" and "leaderboard" in proc.stdout
    loud = run_cli(
        "sweep",
        *BASELINES,
        "--out",
        "runs2",
        "--db",
        "runs2/hindcast.db",
        cwd=tmp_path,
        env=NO_DB_ENV,
        check=True,
    )
    assert "forecasting" in loud.stderr  # the bar the -q run hid


def test_a_key_given_to_models_key_env_is_refused_without_echo(tmp_path):
    proc = run_cli("models", "--key-env", "sk-planted-models-7781", cwd=tmp_path, env=NO_DB_ENV)
    assert (
        "--key-env" in one_line(proc, code=2)
        and "sk-planted-models-7781" not in proc.stderr + proc.stdout
    )
    assert (
        run_cli(
            "models", "--key-env", "MY_KEY", "--json", cwd=tmp_path, env=NO_DB_ENV, check=True
        ).returncode
        == 0
    )
