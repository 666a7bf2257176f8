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
        r"^shrunk:weight=0\.3 +Brier (0\.\d{4}) +vs market [+-]0\.\d{4} \((\d+) forecasts, 0 "
        r"failed\)$",
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
        r"^\$ inspect eval hindcast/replay --model "
        r"hindcast/openai-compatible:http://127\.0\.0\.1:\d+/v1#",
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


def documentation() -> list[Path]:
    """README.md and every page of docs/: the documentation whose code blocks the tests hold to."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def test_recipe_blocks_in_readme_and_docs_are_the_recipe_files():
    named = []
    for page in documentation():
        for rel, block in marked_blocks(page.read_text(encoding="utf-8")):
            assert (REPO / rel).is_file(), f"{page.name} names {rel}, which does not exist"
            assert block == (REPO / rel).read_text(encoding="utf-8"), (
                f"{page.name}'s block of {rel} differs from the file"
            )
            named.append(rel)
    for path in sorted(RECIPES.glob("*.py")):
        assert named.count(f"docs/recipes/{path.name}") == 1, (
            f"README.md and docs/*.md together should show {path.name} exactly once"
        )


def test_mcp_bot(tmp_path):
    out = run_recipe("mcp_bot.py", tmp_path).stdout
    assert "Will 2 Fed rate cuts happen in 2025?  (t0 2025-11-07T00:00:00Z)" in out, out
    days = re.findall(r"^  (\d{4}-\d{2}-\d{2})  ", out, re.M)
    assert len(days) == 3 and all(day < "2025-11-07" for day in days)
    assert re.search(r"^last price before t0: 0\.\d+ \(2025-11-0[0-6]T", out, re.M), out
    assert "served: ['question', 'search', 'price_history', 'search']" in out


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


# ---- README.md and docs/: short, linked, every command real -----------------------------------
README_MAX_LINES = 300
SHELL_FENCES = ("```", "```bash", "```sh", "```console")
RUNS_MARK = "<!-- test: runs -->"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def fenced_blocks(markdown: str) -> list[tuple[str, str, str]]:
    """(opening fence line, block text, the line before the fence) of every fenced block."""
    blocks, current, fence, before, previous = [], None, "", "", ""
    for line in markdown.splitlines(keepends=True):
        bare = line.rstrip("\n")
        if current is None and bare.startswith("```"):
            current, fence, before = [], bare, previous
        elif current is not None and bare == "```":
            blocks.append((fence, "".join(current), before))
            current = None
        elif current is not None:
            current.append(line)
        previous = bare
    return blocks


def prose(markdown: str) -> str:
    """The markdown with its fenced blocks left out (links and headings live here)."""
    kept, inside = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            inside = not inside
        elif not inside:
            kept.append(line)
    return "\n".join(kept)


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def test_fenced_blocks_and_anchors_parse():
    text = "a\n<!-- test: runs -->\n```bash\nhindcast runs list\n```\n```\nx\n```\n"
    assert fenced_blocks(text) == [
        ("```bash", "hindcast runs list\n", RUNS_MARK),
        ("```", "x\n", "```"),  # the line before it closed the first block
    ]
    assert (
        anchor("`hindcast sweep`: replaying forecasters") == "hindcast-sweep-replaying-forecasters"
    )
    assert (
        anchor("2. Your own bot: `command:`, `http:` or MCP")
        == "2-your-own-bot-command-http-or-mcp"
    )


def test_readme_is_short_and_starts_with_the_two_commands():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert readme.count("\n") <= README_MAX_LINES
    fence, block, _ = fenced_blocks(readme)[0]  # .ci/run reads lines 1 and 2 of this block
    assert fence == "```bash"
    first, second = block.splitlines()
    assert first.endswith("&& hindcast sweep") and second.endswith("&& pytest")


def test_readme_links_every_docs_page():
    linked = set(LINK.findall(prose((REPO / "README.md").read_text(encoding="utf-8"))))
    for page in sorted((REPO / "docs").glob("*.md")):
        assert f"docs/{page.name}" in linked, f"README.md does not link docs/{page.name}"


def test_every_relative_link_resolves():
    """Every relative link of README.md and docs/*.md names an existing file or folder, and an
    anchor names a heading of that page."""
    checked = 0
    for page in documentation():
        for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, fragment = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            assert resolved.exists(), f"{page.name}: link {target} names no file"
            if fragment and resolved.suffix == ".md":
                text = prose(resolved.read_text(encoding="utf-8"))
                headings = {anchor(h) for h in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}
                assert fragment in headings, f"{page.name}: no heading #{fragment} in {path}"
            checked += 1
    assert checked >= 20


def hindcast_lines(block: str) -> list[str]:
    """The `hindcast …` lines of a shell block, continuation lines joined, comments cut."""
    lines: list[str] = []
    for raw in block.splitlines():
        line = raw.removeprefix("$ ")
        if lines and (lines[-1].endswith("\\") or (raw[:1].isspace() and raw.strip())):
            lines[-1] = lines[-1].removesuffix("\\") + " " + line.strip()
        else:
            lines.append(line)
    return [re.sub(r"\s+#.*$", "", ln) for ln in lines if ln.split(" ", 1)[0] == "hindcast"]


def command_problems(line: str, root) -> list[str]:
    """What in one `hindcast …` line the real command line does not accept: an unknown command,
    an unknown option, or a hidden (deprecated) spelling."""
    tokens = [t.strip("[]'\"") for t in line.split()[1:]]
    command, path, problems = root, ["hindcast"], []
    while tokens and hasattr(command, "commands"):  # a group (typer may bring its own click)
        token = tokens.pop(0)
        if token in command.commands:
            command = command.commands[token]
            path.append(token)
        elif not token.startswith("-"):
            return [f"{' '.join(path)} has no command {token!r}"]
    params = [p for c in (root, command) for p in c.params if p.param_type_name == "option"]
    visible = {o for p in params if not p.hidden for o in (*p.opts, *p.secondary_opts)}
    hidden = {o for p in params if p.hidden for o in (*p.opts, *p.secondary_opts)}
    for token in tokens:
        option = re.match(r"^(--?[A-Za-z][\w-]*)(=.*)?$", token)
        if option and option.group(1) in hidden:
            problems.append(f"{' '.join(path)} {option.group(1)} is a deprecated spelling")
        elif option and option.group(1) not in visible:
            problems.append(f"{' '.join(path)} has no option {option.group(1)}")
    return problems


def test_command_problems_finds_what_is_wrong():
    import typer

    from hindcast.cli.main import app

    root = typer.main.get_command(app)
    assert command_problems("hindcast sweep -f market --fractions 0.5 [--json]", root) == []
    assert command_problems("hindcast sweeps --limit 5", root) == [
        "hindcast has no command 'sweeps'"
    ]
    assert command_problems("hindcast runs show RUN --jsn", root) == [
        "hindcast runs show has no option --jsn"
    ]
    assert hindcast_lines("$ hindcast sweep \\\n    --limit 5   # five\nls -l\n") == [
        "hindcast sweep  --limit 5"
    ]


def test_every_hindcast_command_in_the_documentation_is_real():
    """Each `hindcast …` line of a shell or plain block in README.md and docs/*.md names real
    commands and options of the command line as it is (hidden deprecated spellings refused)."""
    import typer

    from hindcast.cli.main import app

    root = typer.main.get_command(app)
    seen, problems = 0, []
    for page in documentation():
        for fence, block, _ in fenced_blocks(page.read_text(encoding="utf-8")):
            if fence not in SHELL_FENCES:
                continue
            for line in hindcast_lines(block):
                seen += 1
                problems += [
                    f"{page.name}: {p}  ({line.strip()[:80]})" for p in command_problems(line, root)
                ]
    assert not problems, "\n".join(problems)
    assert seen >= 60


def test_the_readme_blocks_marked_to_run_run_as_printed(tmp_path):
    """Every shell block after `<!-- test: runs -->` in README.md and docs/*.md, in page order,
    in one folder that holds the shipped `markets/` and `archive/` as a checkout does; then what
    the README says they make."""
    blocks = [
        (page.name, block)
        for page in documentation()
        for fence, block, before in fenced_blocks(page.read_text(encoding="utf-8"))
        if before == RUNS_MARK
    ]
    assert len(blocks) >= 3
    for name in ("markets", "archive"):
        (tmp_path / name).symlink_to(REPO / name, target_is_directory=True)
    base = {  # a user's environment, but the session's converted local model (tests/conftest.py)
        k: v
        for k, v in os.environ.items()
        if not k.startswith("HINDCAST_") or k == "HINDCAST_MODEL_CACHE"
    }
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    bindir = str(Path(sys.executable).parent)  # where the `hindcast` console script is
    env = {**base, "PYTHONPATH": path, "PATH": os.pathsep.join([bindir, base.get("PATH", "")])}
    output = ""
    for page, block in blocks:
        done = subprocess.run(
            ["bash", "-e", "-u", "-o", "pipefail", "-c", block],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, (
            f"{page} block exited {done.returncode}:\n{block}\n{done.stderr}"
        )
        output += done.stdout + done.stderr
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    claim = re.search(
        r"`(run r-[0-9a-f]{12} \(new\): 57 markets, \d+ forecasts planned) …`", readme
    )
    assert claim and claim.group(1) in output, output[:2000]
    import csv

    with open(tmp_path / "board" / "leaderboard.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    failed = sum(int(r["n_failed"]) for r in rows if r["forecaster"] == "market")
    assert f"`market` shows {failed}\nfailures" in readme  # the count the README states
    assert {r["slice"].split("=")[0] for r in rows} == {"fraction"}
    assert (tmp_path / "board" / "report.html").is_file()
    assert (tmp_path / "boards" / "baselines" / "leaderboard.csv").is_file()
    # docs/markets.md, docs/analysis.md and docs/runs-and-leaderboard.md: what they say it shows
    assert "at t0 2025-11-01T00:00:00Z: price 0.27 (the point at 2025-10-31T" in output
    assert (tmp_path / "trades.csv").is_file() and "complete set (control)" in output
    assert (tmp_path / "board-json" / "leaderboard.json").is_file()


def test_every_toml_block_parses():
    import tomllib

    blocks = [
        (page.name, block)
        for page in documentation()
        for fence, block, _ in fenced_blocks(page.read_text(encoding="utf-8"))
        if fence == "```toml"
    ]
    assert len(blocks) >= 3
    for name, block in blocks:
        try:
            tomllib.loads(block)
        except tomllib.TOMLDecodeError as exc:
            raise AssertionError(f"{name}: a toml block does not parse: {exc}\n{block}") from exc
