"""Issue 14 CLI conventions for `sweep`, `runs` and `rescore` (and the loose ends of issue 12/13
on these commands): `--store`/`--db`/`--out` meanings, HINDCAST_DB, read-only commands that
create and change nothing, `--json` documents, spec-file errors naming the file, nothing
written before the inputs are validated, `to_polars()`."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from tests.helpers import SAMPLE_MARKETS, run_cli

ROOT = Path(__file__).resolve().parents[2]
BASELINE = (
    "--store",
    str(SAMPLE_MARKETS),
    "-f",
    "market",
    "-f",
    "constant",
    "--limit",
    "2",
    "--fractions",
    "0.5",
)
NO_DB_ENV = {"HINDCAST_DB": None, "HINDCAST_DEBUG": None}


def tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        if p.is_file()
        else "dir"
        for p in sorted(folder.rglob("*"))
    }


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> tuple[Path, dict]:
    """A folder with one baseline sweep made with --json (database in runs/, the default)."""
    folder = tmp_path_factory.mktemp("swept")
    proc = run_cli("sweep", *BASELINE, "--json", cwd=folder, env=NO_DB_ENV, check=True)
    return folder, json.loads(proc.stdout)


# ---- read-only commands --------------------------------------------------------------------
@pytest.mark.parametrize(
    "argv, code, says",
    [
        (("runs", "list"), 0, "no runs: no run database at runs/hindcast.db"),
        (
            ("runs", "show", "r-000000000000"),
            1,
            "hindcast: error: no run database at runs/hindcast.db",
        ),
        (("rescore", "r-000000000000"), 1, "hindcast: error: no run database at runs/hindcast.db"),
    ],
)
def test_a_read_only_command_in_an_empty_folder_creates_nothing(tmp_path, argv, code, says):
    proc = run_cli(*argv, cwd=tmp_path, env=NO_DB_ENV)
    assert proc.returncode == code, proc.stderr
    assert says in proc.stdout + proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_runs_list_json_with_no_database_is_an_empty_array(tmp_path):
    proc = run_cli("runs", "list", "--json", cwd=tmp_path, env=NO_DB_ENV, check=True)
    assert json.loads(proc.stdout) == [] and list(tmp_path.iterdir()) == []


def test_a_foreign_sqlite_file_is_refused_and_left_byte_identical(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
    db.close()
    before = tree(tmp_path)
    for argv in (
        ("runs", "list"),
        ("runs", "show", "r-000000000000"),
        ("rescore", "r-000000000000"),
    ):
        proc = run_cli(*argv, "--db", str(path), cwd=tmp_path, env=NO_DB_ENV)
        assert (
            proc.returncode == 1
            and "not a hindcast run database" in proc.stderr
            and "other.db" in proc.stderr
        )
    assert tree(tmp_path) == before
    with sqlite3.connect(path) as db:
        assert [
            r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        ] == ["notes"]
    db.close()


def test_a_database_of_the_previous_schema_is_not_migrated_by_a_read(tmp_path):
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:
        db.executescript((ROOT / "tests" / "runs" / "previous_schema.sql").read_text())
    db.close()
    before = tree(tmp_path)
    proc = run_cli("runs", "list", "--db", str(path), cwd=tmp_path, env=NO_DB_ENV)
    assert proc.returncode == 1 and "run a write command" in proc.stderr
    assert tree(tmp_path) == before


def test_reads_of_a_real_database_leave_its_folder_byte_identical(swept):
    folder, result = swept
    before = tree(folder)
    run_cli("runs", "list", cwd=folder, env=NO_DB_ENV, check=True)
    run_cli("runs", "show", result["run_id"], cwd=folder, env=NO_DB_ENV, check=True)
    run_cli("rescore", result["run_id"], "--by", "fraction", cwd=folder, env=NO_DB_ENV, check=True)
    assert tree(folder) == before


# ---- --db, HINDCAST_DB, --out ---------------------------------------------------------------
def test_db_is_a_path_or_a_url_and_defaults_to_hindcast_db(tmp_path):
    env = {**NO_DB_ENV, "HINDCAST_DB": str(tmp_path / "elsewhere" / "h.db")}
    result = json.loads(
        run_cli(
            "sweep", *BASELINE, "--out", "exports", "--json", cwd=tmp_path, env=env, check=True
        ).stdout
    )
    assert (tmp_path / "elsewhere" / "h.db").is_file() and (
        tmp_path / "elsewhere" / "responses.db"
    ).is_file()
    assert not (tmp_path / "runs").exists() and (tmp_path / "exports" / result["run_id"]).is_dir()
    by_env = json.loads(run_cli("runs", "list", "--json", cwd=tmp_path, env=env, check=True).stdout)
    by_path = json.loads(
        run_cli(
            "runs",
            "list",
            "--json",
            "--db",
            "elsewhere/h.db",
            cwd=tmp_path,
            env=NO_DB_ENV,
            check=True,
        ).stdout
    )
    by_url = json.loads(
        run_cli(
            "runs",
            "list",
            "--json",
            "--db",
            f"sqlite:///{tmp_path}/elsewhere/h.db",
            cwd=tmp_path,
            env=NO_DB_ENV,
            check=True,
        ).stdout
    )
    assert (
        [r["run"] for r in by_env]
        == [r["run"] for r in by_path]
        == [r["run"] for r in by_url]
        == [result["run_id"]]
    )


# ---- --json ---------------------------------------------------------------------------------
def test_sweep_json_is_one_document_with_every_leaderboard_column(swept):
    import dataclasses

    from hindcast.scoring.aggregate import LeaderboardRow

    folder, result = swept
    assert (result["markets"], result["planned"], result["executed"], result["already_stored"]) == (
        2,
        4,
        4,
        0,
    )
    assert sorted(r["forecaster"] for r in result["leaderboard"]) == ["constant", "market"]
    columns = {f.name for f in dataclasses.fields(LeaderboardRow)}
    assert all(set(r) == columns for r in result["leaderboard"])
    assert all((folder / p).exists() for p in result["paths"].values()) and "csv" in result["paths"]


def test_rescore_json_is_one_document(swept):
    folder, result = swept
    proc = run_cli("rescore", result["run_id"], "--json", cwd=folder, env=NO_DB_ENV, check=True)
    doc = json.loads(proc.stdout)
    assert doc["run_id"] == result["run_id"] and (
        doc["forecasts"],
        doc["failed"],
        doc["markets"],
    ) == (4, 0, 2)
    assert doc["leaderboard"] == result["leaderboard"]


# ---- sweep: validated before anything is written; errors one line naming the spec ----------
def test_a_sweep_of_a_missing_store_writes_nothing_and_its_error_is_the_first_line(tmp_path):
    proc = run_cli("sweep", "--store", "nope", "-f", "market", cwd=tmp_path, env=NO_DB_ENV)
    assert proc.returncode == 1 and proc.stderr.splitlines()[0].startswith("hindcast: error: ")
    assert "nope" in proc.stderr.splitlines()[0]
    assert list(tmp_path.iterdir()) == []


SPEC = """[markets]
store = "{store}"
limit = 2
[cutoffs]
fractions = [0.5]
[[forecasters]]
spec = "market"
"""


def test_errors_of_a_sweep_given_by_a_spec_file_name_the_file(tmp_path):
    (tmp_path / "spec.toml").write_text(SPEC.format(store="nope"))
    proc = run_cli("sweep", "--spec", "spec.toml", cwd=tmp_path, env=NO_DB_ENV)
    assert (
        proc.returncode == 1
        and proc.stderr.startswith("hindcast: error: spec.toml: ")
        and "nope" in proc.stderr
    )
    (tmp_path / "spec.toml").write_text(SPEC.format(store=SAMPLE_MARKETS))
    twice = run_cli(
        "sweep", "--spec", "spec.toml", "-f", "market", "-f", "market", cwd=tmp_path, env=NO_DB_ENV
    )
    assert twice.returncode == 1 and twice.stderr.startswith("hindcast: error: spec.toml: ")
    assert "named twice" in twice.stderr and "market" in twice.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.toml"]


def test_a_read_only_out_folder_is_refused_before_the_run_database_is_touched(tmp_path):
    from tests.bad_inputs.test_bad_inputs import read_only

    (tmp_path / "ro").mkdir()
    with read_only(tmp_path / "ro"):  # mode 0555, or a read-only bind mount as root
        proc = run_cli("sweep", *BASELINE, "--out", "ro", cwd=tmp_path, env=NO_DB_ENV)
    assert (
        proc.returncode == 1
        and "ro" in proc.stderr.splitlines()[0]
        and "not writable" in proc.stderr
    )
    assert not (tmp_path / "runs").exists()


# ---- --help ---------------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [("runs", "list"), ("runs", "show"), ("rescore",)])
def test_every_option_of_the_runs_commands_shows_its_default(argv):
    text = " ".join(run_cli(*argv, "--help", check=True).stdout.split())
    assert "[default: $HINDCAST_DB, else runs/hindcast.db]" in text
    if argv != ("runs", "list"):
        assert "[default: the shipped table]" in text


@pytest.mark.parametrize("argv", [("sweep",), ("runs", "list"), ("runs", "show"), ("rescore",)])
def test_every_option_block_of_the_help_has_a_default(argv):
    blocks, text = [], run_cli(*argv, "--help", check=True).stdout
    for line in text.split("Options:", 1)[1].splitlines():
        if line.startswith("  -"):
            blocks.append(line)
        elif blocks and line.strip():
            blocks[-1] += " " + line.strip()
    missing = [
        b.split()[0] for b in blocks if "[default: " not in b and not b.strip().startswith("--help")
    ]
    assert blocks and not missing, missing


# ---- Python API -----------------------------------------------------------------------------
def test_results_as_polars_frames(tmp_path):
    import datetime as dt

    import polars as pl

    from hindcast import api, replay
    from hindcast.llm.models import Models
    from hindcast.replay.spec import ReplaySpec
    from hindcast.runs.store import RunStore

    spec = ReplaySpec(
        store=SAMPLE_MARKETS, forecasters=("market", "constant"), limit=2, fractions=(0.25, 0.5)
    )
    store = RunStore(f"sqlite:///{tmp_path / 'h.db'}")
    with Models() as models:
        result = api.sweep(
            spec,
            runs=store,
            out=tmp_path,
            now=dt.datetime(2026, 11, 30, tzinfo=dt.UTC),
            models=models,
        )
    board = result.to_polars()
    assert isinstance(board, pl.DataFrame) and board.height == 2
    assert (
        sorted(board["forecaster"].to_list()) == ["constant", "market"]
        and "brier_diff_vs_market" in board.columns
    )
    rows = replay.load_scored(store, result.run_id).to_polars()
    assert rows.height == 2 * 2 * 2 and {
        "forecaster",
        "market_id",
        "t0",
        "probability",
        "outcome",
        "prompt_tokens",
        "retries",
    } <= set(rows.columns)
    assert "usage" not in rows.columns and rows["t0"].dtype == pl.Datetime("us", "UTC")
