"""The recipes of docs/recipes run as written (each a subprocess in an empty folder), and
every README ```python block marked `# recipe: docs/recipes/NAME.py` is that file, byte for byte."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RECIPES = REPO / "docs" / "recipes"
MARKER = re.compile(r"^# recipe: (docs/recipes/[\w.-]+\.py)$")
ENDPOINT_VARS = ("ENDPOINT", "MODEL", "MY_ENDPOINT_KEY")


def run_recipe(name: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """`python docs/recipes/NAME` from `cwd`, with the checkout importable and `env` over a
    copy of ours (without the endpoint variables a user may have set)."""
    base = {k: v for k, v in os.environ.items() if k not in ENDPOINT_VARS}
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, str(RECIPES / name)],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**base, "PYTHONPATH": path, **env},
        timeout=600,
    )
    assert done.returncode == 0, f"{name} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


def test_sweep_from_python(tmp_path):
    out = run_recipe("sweep_from_python.py", tmp_path).stdout
    assert re.search(r"^run r-[0-9a-f]{12}: \d+ markets, \d+ forecasts", out, re.M)
    for name in ("market", "constant", "base-rate"):
        assert re.search(rf"^{name} +Brier 0\.\d{{4}} over \d+ markets$", out, re.M)
    assert "forecaster" in out and "brier_diff_vs_market" in out  # the polars frame was printed
    assert "exports: csv, html, md" in out
    assert (tmp_path / "runs" / "hindcast.db").is_file()


def test_own_forecaster(tmp_path):
    out = run_recipe("own_forecaster.py", tmp_path).stdout
    market = re.search(
        r"^market +Brier (0\.\d{4}) +vs market \+0\.0000 \((\d+) forecasts, 0 failed\)$", out, re.M
    )
    mine = re.search(
        r"^shrunk:weight=0\.3 +Brier (0\.\d{4}) +vs market [+-]0\.\d{4} \((\d+) forecasts, 0 failed\)$",
        out,
        re.M,
    )
    assert market and mine, out
    assert mine.group(2) == market.group(
        2
    )  # the registered class answered every question the market did


def test_own_embedder(tmp_path):
    from hindcast.archive import embed

    if not hasattr(embed, "register"):
        pytest.skip(
            "hindcast.archive.embed.register (the embedder registry) is not in this tree yet"
        )
    out = run_recipe("own_embedder.py", tmp_path).stdout
    assert re.search(r"^indexed \d+ documents of a-[0-9a-f]+ with trigrams-256$", out, re.M), out
    hits = re.findall(r"^(\d\.\d{3})  (\d{4}-\d{2}-\d{2})  ", out, re.M)
    assert len(hits) == 5
    assert all(day < "2025-12-01" for _, day in hits)  # only documents created before t0
    assert [float(s) for s, _ in hits] == sorted((float(s) for s, _ in hits), reverse=True)
    assert (
        tmp_path / "my-archive" / "index"
    ).is_dir()  # the copy was indexed, not the shipped sample


def test_openai_endpoint_offline_as_written(tmp_path):
    out = run_recipe("openai_endpoint.py", tmp_path).stdout
    assert "$ hindcast sweep --spec endpoint.toml --out runs" in out
    assert re.search(
        r"^run r-[0-9a-f]{12} \(new\): 5 markets, 10 forecasts planned, 10 made now", out, re.M
    ), out
    assert "key_env=MY_ENDPOINT_KEY" in (tmp_path / "endpoint.toml").read_text(encoding="utf-8")


def test_openai_endpoint_against_a_served_endpoint_sends_the_key_and_stores_none(tmp_path):
    from hindcast.llm.fake import FakeChatModel

    key = "sk-recipe-test-0f1e2d"
    fake = FakeChatModel(default='{"probability": 0.3}', model="served-model", require_key=key)
    with fake.serve() as url:
        out = run_recipe(
            "openai_endpoint.py", tmp_path, ENDPOINT=url, MODEL="served-model", MY_ENDPOINT_KEY=key
        ).stdout
    assert re.search(r"5 markets, 10 forecasts planned, 10 made now", out), out
    assert len(fake.requests) == 5 and {r["model"] for r in fake.requests} == {"served-model"}
    assert {h["authorization"] for h in fake.headers} == {f"Bearer {key}"}
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written and not any(key.encode() in p.read_bytes() for p in written)
    assert key not in out


@pytest.mark.skipif(
    importlib.util.find_spec("inspect_ai") is None, reason="needs the inspect extra"
)
def test_judge_from_inspect(tmp_path):
    from tests.adapters.inspect_support import entry_point_path

    shim = entry_point_path(
        tmp_path / "entry-points"
    )  # an install made before the entry point existed
    path = os.pathsep.join(
        filter(None, [str(REPO), shim and str(shim), os.environ.get("PYTHONPATH")])
    )
    out = run_recipe("judge_from_inspect.py", tmp_path, PYTHONPATH=path).stdout
    assert re.search(
        r"^\$ inspect eval hindcast/replay --model hindcast/openai-compatible:http://127\.0\.0\.1:\d+/v1#",
        out,
        re.M,
    ), out
    assert re.search(
        r"^run r-[0-9a-f]{12}: 5 forecasts stored, 0 failures, 0 outages$", out, re.M
    ), out
    (brier,) = re.findall(
        r"^inspect:model=\S+: Brier (0\.\d{4}) over 5 forecasts, market Brier 0\.\d{4}$", out, re.M
    )
    from inspect_ai.log import read_eval_log

    (log,) = (tmp_path / "logs").glob("*.eval")
    metrics = read_eval_log(str(log)).results.scores[0].metrics
    assert (
        f"{metrics['brier'].value:.4f}" == brier
    )  # the leaderboard of the imported run = Inspect's metric


def test_pull_from_the_shipped_polymarket_fake(tmp_path):
    out = run_recipe("pull_polymarket_fake.py", tmp_path).stdout
    assert '"listed": 150, "stored": 150' in out and '"failed": 0' in out
    assert "data-api /v2/prices-history" in out and "clob /prices-history windows" in out
    assert (tmp_path / "markets" / "store" / "LATEST").is_file()


# ---- README.md ⇄ docs/recipes ---------------------------------------------------------------
def python_blocks(markdown: str) -> list[str]:
    """The text of every ```python fenced block, each ending in a newline."""
    blocks, current = [], None
    for line in markdown.splitlines(keepends=True):
        if current is None and line.rstrip("\n") == "```python":
            current = []
        elif current is not None and line.rstrip("\n") == "```":
            blocks.append("".join(current))
            current = None
        elif current is not None:
            current.append(line)
    return blocks


def marked_blocks(markdown: str) -> list[tuple[str, str]]:
    """(recipe path, block text) of every python block whose first line is a recipe marker."""
    found = []
    for block in python_blocks(markdown):
        match = MARKER.match(block.split("\n", 1)[0])
        if match:
            found.append((match.group(1), block))
    return found


def test_python_blocks_parse_fences():
    text = "x\n```python\n# recipe: docs/recipes/a.py\nprint(1)\n```\n```python\nprint(2)\n```\n"
    assert marked_blocks(text) == [("docs/recipes/a.py", "# recipe: docs/recipes/a.py\nprint(1)\n")]


def test_each_recipe_file_names_itself_on_its_first_line():
    files = sorted(RECIPES.glob("*.py"))
    assert files
    for path in files:
        first = path.read_text(encoding="utf-8").split("\n", 1)[0]
        assert first == f"# recipe: docs/recipes/{path.name}", path


def test_readme_recipe_blocks_are_the_recipe_files():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for rel, block in marked_blocks(readme):
        assert (REPO / rel).is_file(), f"README names {rel}, which does not exist"
        assert block == (REPO / rel).read_text(encoding="utf-8"), (
            f"README's block of {rel} differs from the file"
        )
    named = [rel for rel, _ in marked_blocks(readme)]
    for path in sorted(RECIPES.glob("*.py")):
        assert named.count(f"docs/recipes/{path.name}") == 1, (
            f"README should show {path.name} exactly once"
        )


def test_mcp_bot(tmp_path):
    out = run_recipe("mcp_bot.py", tmp_path).stdout
    assert "Will 2 Fed rate cuts happen in 2025?  (t0 2025-11-07T00:00:00Z)" in out, out
    days = re.findall(r"^  (\d{4}-\d{2}-\d{2})  ", out, re.M)
    assert len(days) == 3 and all(day < "2025-11-07" for day in days)
    assert re.search(r"^last price before t0: 0\.\d+ \(2025-11-0[0-6]T", out, re.M), out
    assert "served: ['search', 'price_history', 'search']" in out


def test_command_bot(tmp_path):
    import json
    import sqlite3

    out = run_recipe("command_bot.py", tmp_path).stdout
    assert re.search(
        r"^run r-[0-9a-f]{12} \(new\): 5 markets, 20 forecasts planned, 20 made now", out, re.M
    ), out
    with sqlite3.connect(tmp_path / "runs" / "hindcast.db") as db:
        stored = db.execute(
            "SELECT probability, error, retrievals_json FROM forecasts "
            "WHERE forecaster LIKE 'command:%'"
        ).fetchall()
    assert len(stored) == 10 and all(p is not None and e is None for p, e, _ in stored)
    assert all([c["op"] for c in json.loads(r)] == ["price_history"] for *_, r in stored)
