"""Issue 26: no physical line of the package is over 100 characters. ruff's E501 (line-length
100) lets a line through when it has no whitespace to break at (a long regex alternation
inside a verbose pattern, a URL); this counts characters on every line."""

from __future__ import annotations

from pathlib import Path

LIMIT = 100
PACKAGE = Path(__file__).resolve().parents[1] / "hindcast"


def long_lines(root: Path, limit: int = LIMIT) -> list[str]:
    return [
        f"{path.relative_to(root.parent)}:{number} has {len(line)} characters"
        for path in sorted(root.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if len(line) > limit
    ]


def test_no_line_of_the_package_is_over_100_characters():
    assert long_lines(PACKAGE) == []


def test_a_planted_long_line_is_found(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "ok.py").write_text("x = 1\n" + "y = '" + "é" * 94 + "'\n", encoding="utf-8")
    (package / "long.py").write_text("pattern = r'''" + "a|" * 44 + "b'''\n", encoding="utf-8")
    assert long_lines(package) == ["pkg/long.py:1 has 106 characters"]
