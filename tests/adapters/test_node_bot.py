"""A bot in another language (issue 27, acceptance): tests/fixtures/node_bot/bot.mjs, a Node script
using the official TypeScript MCP SDK (`@modelcontextprotocol/sdk`, pinned in its package.json and
package-lock.json, installed here with `npm ci`), swept through `command:` by a real `hindcast
sweep` on 5 shipped sample markets × 2 cutoffs with the shipped archive (indexed here with the hash
embedder; the bot searches in text mode): it searches, reads and answers; every forecast is
stored with its tool calls as its retrievals; it appears on the leaderboard; `hindcast audit`
reads its retrievals. Needs Node.js and npm (`apt-get install -y nodejs npm`; without them,
add `-m 'not node'`)."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess

import pytest

from hindcast import api
from tests.helpers import ROOT, SAMPLE_ARCHIVE, SAMPLE_MARKETS, run_cli

pytestmark = pytest.mark.node
BOT = ROOT / "tests" / "fixtures" / "node_bot"
INSTALL = (
    "Node.js and npm are needed: apt-get install -y nodejs npm (or deselect with -m 'not node')"
)


@pytest.fixture(scope="module")
def node_bot(tmp_path_factory) -> str:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail(INSTALL)
    folder = tmp_path_factory.mktemp("node-bot")
    for name in ("package.json", "package-lock.json", "bot.mjs"):
        shutil.copy(BOT / name, folder / name)
    done = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return f"{node} {folder / 'bot.mjs'}"


@pytest.fixture(scope="module")
def sample_archive(tmp_path_factory):
    archive = tmp_path_factory.mktemp("archive") / "sample"
    shutil.copytree(SAMPLE_ARCHIVE, archive)
    api.embed(archive, None, "hash")
    return archive


def test_a_node_bot_swept_through_command_is_judged_like_a_builtin(
    node_bot, sample_archive, tmp_path
):
    db, spec = tmp_path / "h.db", f"command:cmd={node_bot},timeout=120"
    swept = run_cli(
        "sweep",
        "--store",
        str(SAMPLE_MARKETS),
        "--archive",
        str(sample_archive),
        "--limit",
        "5",
        "--fractions",
        "0.5,1.0",
        "-f",
        spec,
        "-f",
        "market",
        "--concurrency",
        "2",
        "--out",
        str(tmp_path),
        "--db",
        str(db),
        timeout=900,
    )
    assert swept.returncode == 0, swept.stderr
    with sqlite3.connect(db) as conn:
        (run_id,) = conn.execute("SELECT id FROM runs").fetchone()
        stored = conn.execute(
            "SELECT market_id, t0, probability, error, retrievals_json, evidence_json FROM "
            "forecasts WHERE forecaster = ?",
            (spec,),
        ).fetchall()
    assert len(stored) == 10 and len({(m, t) for m, t, *_ in stored}) == 10
    for market, t0, probability, error, retrievals, evidence in stored:
        assert error is None and 0.02 <= probability <= 0.98, (market, error)
        calls = json.loads(retrievals)
        assert [c["op"] for c in calls] == ["search", "read", "price_history"], calls
        assert (
            calls[0]["mode"] == "text"
            and calls[0]["ids"]
            and calls[1]["ids"] == [calls[0]["ids"][0]]
        )
        assert json.loads(evidence) == calls[1]["ids"]

    board = run_cli(
        "leaderboard", run_id, "--db", str(db), "--out", str(tmp_path / "board"), "--format", "json"
    )
    assert board.returncode == 0, board.stderr
    rows = {
        r["forecaster"]: r
        for r in json.loads((tmp_path / "board" / "leaderboard.json").read_text())["rows"]
    }
    assert (
        rows[spec]["n_forecasts"] == 10
        and rows[spec]["n_failed"] == 0
        and rows[spec]["brier"] is not None
    )
    audited = run_cli("audit", run_id, "--db", str(db), "--json")
    assert audited.returncode == 0, audited.stderr
    assert spec in audited.stdout
