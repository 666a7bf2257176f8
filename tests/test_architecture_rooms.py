"""The rooms and the plan on the wall (issue 38), measured from the tree, each rule with a
planted self-test like tests/test_architecture.py's:

(h) no module of the package over 500 lines (KNOWN_OVER: exceptions, empty since the splits of
    wave 8 landed; a listed module that is no longer over fails too, so the list cannot go
    stale);
(i) tests mirror the package: a folder tests/<pkg>/ for each package hindcast/<pkg>/, and no
    folder under tests/ named like a package that does not exist (TEST_ONLY: folders of tests
    that belong to no one package);
(j) the layout block of docs/DESIGN.md names exactly the packages that exist (`  name/` lines).
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODULE_LINES = 500
KNOWN_OVER: set[str] = set()
TEST_ONLY = {"bad_inputs", "benchmarks", "browser", "fixtures", "integration"}


def modules_over(repo: Path, limit: int = MODULE_LINES) -> list[str]:
    return sorted(
        p.relative_to(repo).as_posix()
        for p in (repo / "hindcast").rglob("*.py")
        if len(p.read_text(encoding="utf-8").splitlines()) > limit
    )


def size_problems(repo: Path, known: set[str]) -> list[str]:
    over = modules_over(repo)
    return [f"{m} is over {MODULE_LINES} lines" for m in over if m not in known] + [
        f"{m} is listed in KNOWN_OVER but is not over {MODULE_LINES} lines: unlist it"
        for m in sorted(known - set(over))
    ]


def packages(repo: Path) -> set[str]:
    return {p.parent.name for p in (repo / "hindcast").glob("*/__init__.py")}


def mirror_problems(repo: Path, test_only: set[str] = TEST_ONLY) -> list[str]:
    folders = {p.name for p in (repo / "tests").iterdir() if p.is_dir() and p.name[0].isalpha()}
    return [f"no tests/{p}/ for hindcast/{p}/" for p in sorted(packages(repo) - folders)] + [
        f"tests/{f}/ mirrors no package" for f in sorted(folders - packages(repo) - test_only)
    ]


def layout_packages(design: Path) -> set[str]:
    """The `  name/` entries of the code block under `## Layout`."""
    text = design.read_text(encoding="utf-8")
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    return set(re.findall(r"^  (\w+)/", block, flags=re.M))


def layout_problems(repo: Path) -> list[str]:
    drawn, real = layout_packages(repo / "docs" / "DESIGN.md"), packages(repo)
    return [f"DESIGN.md's layout lacks {p}/" for p in sorted(real - drawn)] + [
        f"DESIGN.md's layout names {p}/, which does not exist" for p in sorted(drawn - real)
    ]


def test_no_module_is_over_500_lines():
    assert size_problems(REPO, KNOWN_OVER) == []


def test_tests_mirror_the_packages():
    assert mirror_problems(REPO) == []


def test_the_design_layout_names_exactly_the_packages():
    assert layout_problems(REPO) == []


# ---- a test of the tests: a planted repository with one of each fault --------------------------

PLANTED = {
    "hindcast/__init__.py": "",
    "hindcast/big/__init__.py": "",
    "hindcast/big/room.py": "x = 1\n" * 501,
    "hindcast/big/fits.py": "x = 1\n" * 500,
    "hindcast/small/__init__.py": "",
    "tests/big/test_room.py": "",
    "tests/gone/test_x.py": "",
    "tests/fixtures/data.txt": "",
    "docs/DESIGN.md": "# d\n\n## Layout\n\nText.\n\n```\nhindcast/\n  big/  room\n  old/  gone\n```\n",
}


def _plant(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_the_checkers_find_each_planted_fault(tmp_path):
    repo = _plant(tmp_path, PLANTED)
    assert size_problems(repo, {"hindcast/big/fits.py"}) == [
        "hindcast/big/room.py is over 500 lines",
        "hindcast/big/fits.py is listed in KNOWN_OVER but is not over 500 lines: unlist it",
    ]
    assert mirror_problems(repo, {"fixtures"}) == [
        "no tests/small/ for hindcast/small/",
        "tests/gone/ mirrors no package",
    ]
    assert layout_problems(repo) == [
        "DESIGN.md's layout lacks small/",
        "DESIGN.md's layout names old/, which does not exist",
    ]


def test_the_checkers_pass_a_clean_repository(tmp_path):
    repo = _plant(tmp_path, {k: v for k, v in PLANTED.items() if k != "tests/gone/test_x.py"})
    (repo / "tests" / "small").mkdir()
    design = repo / "docs" / "DESIGN.md"
    design.write_text(design.read_text().replace("  old/  gone", "  small/  s"))
    assert size_problems(repo, {"hindcast/big/room.py"}) == []
    assert mirror_problems(repo, {"fixtures"}) == []
    assert layout_problems(repo) == []
