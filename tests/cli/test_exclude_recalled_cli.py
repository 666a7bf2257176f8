"""`--exclude-recalled` as a user types it: a sweep and a memorisation probe against the same fake
model (on a real socket, scripted to know one sample market), then `rescore` and `leaderboard`
leave out exactly that (model, market) pair — the baseline keeps every row — and say so."""

import csv
import json

from hindcast.llm.fake import FakeChatModel
from tests.cli.test_probe_cli import FIRST, knows_first
from tests.helpers import run_cli


def test_rescore_and_leaderboard_leave_out_the_recalled_pair(tmp_path):
    fake = FakeChatModel(default=knows_first)
    db = str(tmp_path / "hindcast.db")
    with fake.serve() as url:
        model = f"zero-shot:model=openai-compatible:{url}#fake-a"
        run_cli(
            "sweep",
            "-f",
            model,
            "-f",
            "market",
            "--limit",
            "4",
            "--fractions",
            "0.5",
            "--db",
            db,
            "--out",
            str(tmp_path),
            check=True,
        )
        run_cli("probe", "recall", "-f", model, "--limit", "4", "--db", db, check=True)
    (run,) = json.loads(run_cli("runs", "list", "--db", db, "--json", check=True).stdout)
    whole = json.loads(run_cli("rescore", run["run"], "--db", db, "--json", check=True).stdout)
    kept = json.loads(
        run_cli(
            "rescore", run["run"], "--db", db, "--json", "--exclude-recalled", check=True
        ).stdout
    )
    assert whole["forecasts"] == 8 and kept["forecasts"] == 7 and len(kept["excluded"]) == 1
    assert "excluded" not in whole
    run_cli(
        "leaderboard",
        run["run"],
        "--db",
        db,
        "--format",
        "csv",
        "--out",
        str(tmp_path / "board"),
        "--exclude-recalled",
        check=True,
    )
    with open(tmp_path / "board" / "forecasts.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    pairs = {(r["forecaster"], r["market_id"]) for r in rows}
    assert len(rows) == 7 and (model, FIRST) not in pairs and ("market", FIRST) in pairs


def test_excluding_without_probe_results_is_one_line_and_exit_1(tmp_path):
    db = str(tmp_path / "hindcast.db")
    run_cli("sweep", "-f", "market", "--limit", "2", "--db", db, "--out", str(tmp_path), check=True)
    (run,) = json.loads(run_cli("runs", "list", "--db", db, "--json", check=True).stdout)
    proc = run_cli("rescore", run["run"], "--db", db, "--exclude-recalled")
    assert (
        proc.returncode == 1
        and "no probe results" in proc.stderr
        and len(proc.stderr.strip().splitlines()) == 1
    )
