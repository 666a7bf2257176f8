# recipe: docs/recipes/judge_from_inspect.py
"""Judge from Inspect AI: `inspect eval hindcast/replay`, then the log as a hindcast run and its leaderboard.

    pip install -e '.[inspect]'   # Inspect AI and the `hindcast/replay` task
    ENDPOINT=http://127.0.0.1:8000/v1 MODEL=my-model python judge_from_inspect.py

Without ENDPOINT, the shipped fake chat model answers on 127.0.0.1, so this file runs offline.
Any Inspect solver works (`--solver …`): each sample is one planned (market, t0) with the
t0-bound tools search, read, thread, price_history, resolved_before and question.
"""
import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path


def run(module: str, *args: str) -> str:
    """`python -m MODULE ARGS` (printed as typed: `inspect eval …`, `hindcast …`); its stdout."""
    print("$", {"inspect_ai": "inspect"}.get(module, module), " ".join(args))
    done = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(done.stderr or done.stdout)
    return done.stdout


def offline_endpoint():
    """The shipped fake chat model on 127.0.0.1, answering 0.62 to every question."""
    from hindcast.llm import FakeChatModel

    return FakeChatModel(default='{"probability": 0.62}').serve()


yours = os.environ.get("ENDPOINT")
with contextlib.nullcontext(yours) if yours else offline_endpoint() as url:
    model = f"hindcast/openai-compatible:{url}#{os.environ.get('MODEL', 'my-model')}"
    # The task: 5 markets of the shipped store at half their lifetime; hindcast's model client
    # (response cache in runs/responses.db, circuit breaker, retries) behind Inspect's generate.
    run("inspect_ai", "eval", "hindcast/replay", "--model", model, "-T", "limit=5", "-T", "fractions=0.5",
        "-M", "cache=runs/responses.db", "--log-dir", "logs", "--display", "none")

log = max(Path("logs").glob("*.eval"), key=lambda p: p.stat().st_mtime)
imported = json.loads(run("hindcast", "import-inspect", str(log), "--db", "runs/hindcast.db", "--json"))
print(f"run {imported['run_id']}: {imported['stored']} forecasts stored, {imported['failures']} failures, "
      f"{imported['outages']} outages")
board = json.loads(run("hindcast", "leaderboard", imported["run_id"], "--db", "runs/hindcast.db", "--out", "board",
                       "--format", "csv", "--json"))
for row in board["rows"]:
    print(f"{row['forecaster']}: Brier {row['brier']:.4f} over {row['n_forecasts']} forecasts, "
          f"market Brier {row['market_brier']:.4f}")
