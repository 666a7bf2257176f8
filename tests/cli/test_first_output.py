"""A newcomer's first minutes: the baselines print a leaderboard without loading torch (or any
other heavy engine, or pandas and scipy), and a long job says what it does, also when stderr is
not a terminal."""

from __future__ import annotations

import io
import json
import subprocess
import sys

from hindcast.cli import console
from tests.helpers import ROOT

# and pandas (pyarrow imports it to read a table through pyarrow.dataset or turn UTC instants or a
# column into Python or numpy values) and scipy (CORP's isotonic fits of a few hundred values):
# ~0.8 s of each baseline sweep's CPU before
HEAVY = (
    "torch",
    "transformers",
    "sentence_transformers",
    "lancedb",
    "accelerate",
    "gguf",
    "pandas",
    "scipy",
)
SWEEP = """
import json, sys
out, heavy = sys.argv[1], set(json.loads(sys.argv[2]))
sys.argv = ["hindcast", "sweep", "-f", "market", "-f", "constant", "-f", "base-rate", "--out", out,
            "--db", out + "/hindcast.db"]
from hindcast.cli.main import run
try:
    run()
finally:
    loaded = sorted({m.split(".")[0] for m in sys.modules} & heavy)
    print("LOADED " + json.dumps(loaded), file=sys.stderr)
"""


def test_the_baseline_sweep_prints_a_leaderboard_without_importing_torch(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", SWEEP, str(tmp_path), json.dumps(HEAVY)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    assert "base-rate" in proc.stdout and "Brier" in proc.stdout and "report.html" in proc.stdout
    loaded = json.loads(proc.stderr.split("LOADED ")[1].splitlines()[0])
    assert loaded == [], loaded
    # stderr is a pipe here, not a terminal: the plan is said first and the progress ends with a plain line
    lines = proc.stderr.splitlines()
    assert lines[0] == "hindcast: 684 forecasts to make now", lines[:3]
    assert any(line.startswith("forecasting: 684/684 forecasts") for line in lines), lines


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_off_a_terminal_is_a_line_every_few_seconds(monkeypatch):
    err = io.StringIO()  # not a terminal
    monkeypatch.setattr(sys, "stderr", err)
    clock = Clock()
    ticker = console.Ticker("embedding", "headlines", every=5.0, clock=clock)
    ticker.update(0, 1000)
    for _ in range(4):  # 4 s: nothing yet
        clock.now += 1
        ticker.update(ticker.done + 50, 1000)
    assert err.getvalue() == ""
    clock.now += 1  # 5 s since the start: one line, with the rate and what is left
    ticker.update(250, 1000)
    assert (
        err.getvalue()
        == "embedding: 250/1,000 headlines, 50.0 headlines/s, about 15 s left (5 s so far)\n"
    )
    clock.now += 70
    ticker.update(1000, 1000)
    ticker.stop()  # the end is always said
    assert err.getvalue().splitlines()[1:] == [
        "embedding: 1,000/1,000 headlines, 13.3 headlines/s (1 min 15 s so far)",
        "embedding: 1,000/1,000 headlines, 13.3 headlines/s (1 min 15 s so far)",
    ]


def test_what_is_left_is_timed_from_the_first_unit_done_not_from_the_start_up(monkeypatch):
    """A slow start (a model loading for 15 s before the first forecast) is not a pace: the
    first line says no time left (it said "about 174 min 45 s left" here), the next one says
    what is left at the pace since the first unit, the one after at the pace since the line
    before (a quick batch done, slow units follow)."""
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    clock = Clock()
    ticker = console.Ticker("forecasting", "forecasts", every=5.0, clock=clock)
    ticker.update(0, 700)
    clock.now += 15
    ticker.update(1, 700)
    clock.now += 5  # 5 s after the first: 350 more done, 349 left at 70 a second
    ticker.update(351, 700)
    clock.now += 5  # then slow units: 2 in 5 s, 347 left at that pace
    ticker.update(353, 700)
    assert err.getvalue().splitlines() == [
        "forecasting: 1/700 forecasts, 0.1 forecasts/s (15 s so far)",
        "forecasting: 351/700 forecasts, 17.6 forecasts/s, about 5 s left (20 s so far)",
        "forecasting: 353/700 forecasts, 14.1 forecasts/s, about 14 min 28 s left (25 s so far)",
    ]


def test_a_ticker_never_started_prints_nothing(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    console.Ticker("forecasting", "forecasts").stop()
    assert err.getvalue() == ""
