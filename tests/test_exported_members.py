"""Each package face says what it offers in a literal `__all__` (issue 38; the model is httpx's
tests/test_exported_members.py): a list of string literals a reader, an IDE and a type checker
can read without running it; exactly the names the face binds (no name offered that the face
does not import, none imported and left out); at most 40 lines; and covering every name code
outside the package takes from it — `from hindcast.<pkg> import name` anywhere in hindcast/,
tests/, benchmarks/ and scripts/, or `<pkg>.name` where `<pkg>` is bound by
`from hindcast import <pkg>`. A submodule taken with `from hindcast.<pkg> import module` is not
a face name (Python imports it whatever the face says). The checkers take the repository's
folder, so the last tests run them on a small planted repository with one of each fault."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FACE_LINES = 40
CODE = ("hindcast", "tests", "benchmarks", "scripts")


def faces(repo: Path) -> dict[str, Path]:
    return {p.parent.name: p for p in sorted((repo / "hindcast").glob("*/__init__.py"))}


def literal_all(path: Path) -> list[str] | None:
    """The names of `__all__ = [...]` when it is a list of string literals, else None."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == [
            "__all__"
        ]:
            items = node.value.elts if isinstance(node.value, ast.List) else None
            if items is None or not all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in items
            ):
                return None
            return [e.value for e in items]
    return None


def bound(path: Path) -> set[str]:
    """The public names a face binds: its imports (TYPE_CHECKING ones too), defs and classes."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        inner = node.body if isinstance(node, ast.If) else [node]
        for stmt in inner:
            if isinstance(stmt, ast.ImportFrom) and stmt.module != "__future__":
                names |= {a.asname or a.name for a in stmt.names}
            elif isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
                names.add(stmt.name)
    return {n for n in names if not n.startswith("_") and n not in ("TYPE_CHECKING", "lazy")}


def taken(repo: Path) -> list[tuple[str, str, str]]:
    """(face, name, where) of each name code outside the package takes from a face: every
    `from hindcast.<pkg> import name` that is not a submodule, every `<pkg>.name`."""
    packages, out = faces(repo), []
    for folder in CODE:
        for path in sorted((repo / folder).rglob("*.py")):
            rel = path.relative_to(repo).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"))
            aliases = _face_aliases(tree, packages)
            for node in ast.walk(tree):
                for face, name, submodule_ok in _taken(node, aliases, packages):
                    own = rel.startswith(f"hindcast/{face}/")
                    submodule = (repo / "hindcast" / face / f"{name}.py").exists()
                    if not own and not (submodule and submodule_ok):
                        out.append((face, name, f"{rel}:{node.lineno}"))
    return out


def _face_aliases(tree: ast.Module, packages: dict) -> dict[str, str]:
    """Local names bound only by `from hindcast import <pkg>` (never rebound otherwise)."""
    bound_by: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                face = a.name if node.module == "hindcast" and a.name in packages else ""
                bound_by.setdefault(a.asname or a.name, set()).add(face)
        elif isinstance(node, ast.Import):
            for a in node.names:
                bound_by.setdefault(a.asname or a.name.split(".")[0], set()).add("")
    return {k: next(iter(v)) for k, v in bound_by.items() if len(v) == 1 and "" not in v}


def _taken(node: ast.AST, aliases: dict, packages: dict) -> list[tuple[str, str, bool]]:
    """(face, name, whether a submodule of that name is fine) taken by one node."""
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        parts = node.module.split(".")
        if len(parts) == 2 and parts[0] == "hindcast" and parts[1] in packages:
            return [(parts[1], a.name, True) for a in node.names]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        if node.value.id in aliases:
            return [(aliases[node.value.id], node.attr, False)]
    return []


def problems(repo: Path) -> list[str]:
    found = []
    declared = {face: literal_all(path) for face, path in faces(repo).items()}
    for face, path in faces(repo).items():
        names = declared[face]
        if names is None:
            found.append(f"hindcast/{face}: __all__ is not a list of string literals")
            continue
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > FACE_LINES:
            found.append(f"hindcast/{face}: {lines} lines (at most {FACE_LINES})")
        if sorted(set(names)) != sorted(bound(path)):
            extra, missing = set(names) - bound(path), bound(path) - set(names)
            found.append(
                f"hindcast/{face}: __all__ offers {sorted(extra)}, leaves out {sorted(missing)}"
            )
    for face, name, where in sorted(taken(repo), key=_place):
        if name not in (declared[face] or ()):
            found.append(f"{where} takes {face}.{name}, not in its __all__")
    return found


def _place(use: tuple[str, str, str]) -> tuple[str, int]:
    path, _, line = use[2].rpartition(":")
    return path, int(line)


def test_every_face_all_is_literal_complete_and_short():
    assert problems(REPO) == []


def test_every_name_in_a_face_all_resolves():
    missing = [
        f"{face}.{name}"
        for face in faces(REPO)
        for name in literal_all(faces(REPO)[face]) or ()
        if getattr(importlib.import_module(f"hindcast.{face}"), name, None) is None
    ]
    assert missing == []


# ---- a test of the test: a planted repository with one of each fault ---------------------------

PLANTED = {
    "hindcast/good/__init__.py": 'from hindcast.good.core import run\n\n__all__ = ["run"]\n',
    "hindcast/good/core.py": "def run():\n    pass\n\n\ndef hidden():\n    pass\n",
    "hindcast/good/extra.py": "",
    "hindcast/computed/__init__.py": '_WHERE = {"x": "m"}\n__all__ = sorted(_WHERE)\n',
    "hindcast/long/__init__.py": '__all__ = ["a"]\n'
    + "\n" * 40
    + "from hindcast.long.m import a\n",
    "hindcast/long/m.py": "a = 1\n",
    "hindcast/loose/__init__.py": 'from hindcast.loose.m import a, b\n\n__all__ = ["a", "c"]\n',
    "hindcast/loose/m.py": "a = b = 1\n",
    "tests/test_x.py": (
        "from hindcast import good\nfrom hindcast.good import extra, hidden, run\n\n"
        "good.run()\ngood.hidden()\ngood.extra\n"
    ),
    "benchmarks/b.py": "",
    "scripts/s.py": "",
}


def _plant(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_the_checker_finds_each_planted_fault(tmp_path):
    assert problems(_plant(tmp_path, PLANTED)) == [
        "hindcast/computed: __all__ is not a list of string literals",
        "hindcast/long: 42 lines (at most 40)",
        "hindcast/loose: __all__ offers ['c'], leaves out ['b']",
        "tests/test_x.py:2 takes good.hidden, not in its __all__",
        "tests/test_x.py:5 takes good.hidden, not in its __all__",
        "tests/test_x.py:6 takes good.extra, not in its __all__",
    ]


def test_the_checker_passes_a_clean_repository(tmp_path):
    clean = {
        name: text
        for name, text in PLANTED.items()
        if not name.startswith(("hindcast/computed", "hindcast/long", "hindcast/loose", "tests/"))
    }
    clean["tests/test_x.py"] = (
        "from hindcast import good\nfrom hindcast.good import extra, run\n\ngood.run()\n"
    )
    assert problems(_plant(tmp_path, clean)) == []
