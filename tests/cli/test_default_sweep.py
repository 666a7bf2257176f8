"""README command 1: `hindcast sweep` with no arguments (slow: embeds the archive once,
runs the local model)."""

import csv

import pytest

from tests.helpers import run_cli


@pytest.mark.slow
@pytest.mark.llm_server
def test_the_default_sweep_runs_baselines_and_the_local_model(tmp_path):
    proc = run_cli(
        "sweep", "--out", str(tmp_path), "--db", str(tmp_path / "hindcast.db"), check=True
    )
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    board = {r["forecaster"]: r for r in csv.DictReader((folder / "leaderboard.csv").open())}
    assert int(board["market"]["n_markets"]) >= 50 and int(
        board["market"]["n_forecasts"]
    ) == 4 * int(board["market"]["n_markets"])
    local = [name for name in board if "model=local" in name]
    assert len(local) == 2
    for name in local:  # valid forecasts or recorded failures, never missing rows
        assert (
            int(board[name]["n_forecasts"]) + int(board[name]["n_failed"])
            == 4 * {"zero-shot": 3, "retrieval-agent": 1}[name.split(":")[0]]
        )
    assert (folder / "report.html").exists() and "leaderboard" in proc.stdout
