"""Design invariants that hold for the whole package (DESIGN.md)."""

import ast
import subprocess
import sys
from pathlib import Path

from tests.helpers import ROOT, run_cli

PACKAGE = ROOT / "hindcast"
CLOCK_ALLOWED = ("cli", "schedule.py", "schedule")
CLOCK_CALLS = {
    ("datetime", "now"),
    ("datetime", "utcnow"),
    ("datetime", "today"),
    ("date", "today"),
    ("time", "time"),
}


def clock_reads(path: Path) -> list[int]:
    """Line numbers of datetime.now()-style calls in a file."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and (node.func.value.id, node.func.attr) in CLOCK_CALLS
    ]


def test_no_wall_clock_below_cli_and_schedule():
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] not in CLOCK_ALLOWED:
            offenders += [f"{path.relative_to(ROOT)}:{line}" for line in clock_reads(path)]
    assert offenders == []


def test_the_clock_check_itself_finds_a_clock_read(tmp_path):
    sample = tmp_path / "x.py"
    sample.write_text("from datetime import datetime\nnow = datetime.now()\n")
    assert clock_reads(sample) == [2]


def test_help_and_version_do_not_import_heavy_libraries():
    code = (
        "import sys; from hindcast.cli.main import app; heavy = [m for m in ('torch', "
        "'sentence_transformers', 'lancedb', 'pyarrow', 'polars', 'sqlmodel', 'httpx') if m in "
        "sys.modules]; print(','.join(heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == ""


def test_version_flag():
    proc = run_cli("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("hindcast 0.")


def test_forecasters_receive_no_resolution():
    """The runner hands a forecaster exactly a Question and a Context; neither holds an outcome."""
    from hindcast.forecasters.base import Context
    from hindcast.records import Question

    assert not {"outcome", "status", "resolved_at", "known_at"} & set(Question.__dataclass_fields__)
    public = {name for name in dir(Context) if not name.startswith("_")}
    assert public == {
        "t0",
        "repeat",
        "price_history",
        "resolved_before",
        "resolved_counts",  # resolved_before's length and Yes total (no id, no outcome)
        "search",
        "read",
        "thread",
        "retrievals",
        "withhold",
        "note",
    }  # withhold and note only log (a filtered document, a tool call); they return nothing
