"""The structure of the package, measured from its source (issue 15), and a test of the test.

Every module under hindcast/ is parsed with `ast`; every import counts, including those inside
functions (a lazy import is still a dependency). The rules:

(a) layers: an import points to the same or a lower layer, never up —
    0 records, errors, timeutil, frozen, filelock, http, specs, faces, registry · 1 archive,
    markets, llm · 2 leaks · 3 forecasters · 4 replay, runs, scoring · 5 leaderboard, audit,
    analysis · 6 api, adapters and the package root · 7 cli, schedule · 8 __main__; a new
    top-level module must be given a layer here;
(b) no import circle between modules, and the package graph (package → package, every import
    of one by another) is acyclic; a string naming a package module exactly (an
    `importlib.import_module` target, a `python -m` argument) counts as an import;
(c) every exception class is defined in hindcast/errors.py;
(d) no `global` statement;
(e) hindcast/api.py (the facade) has at most 150 lines;
(f) from outside a package, only its face is imported: `from hindcast.<package> import name`
    (the names its `__init__.py` declares in `__all__`), never `hindcast.<package>.<module>`;
    a top-level module (records, errors, api …) is its own face;
(g) the clock (`datetime.now`, `datetime.utcnow`, `date.today`, `time.time`) is read only in
    cli/ and schedule/; monotonic timers (`time.monotonic`, `time.perf_counter`) are fine;
(h) the process environment (`os.environ`, `os.getenv`) is read only in cli/ (the front ends)
    and hindcast/environment.py (the one documented place below them, issue 38).

The checkers take the package's folder, so `test_the_checkers_find_each_planted_violation` runs
them on a small fake package written into a temporary folder with one of each violation.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "hindcast"
LAYERS = {
    **dict.fromkeys(
        (
            "records",
            "errors",
            "timeutil",
            "frozen",
            "filelock",
            "http",
            "specs",
            "faces",
            "registry",
            "environment",
        ),
        0,
    ),
    **dict.fromkeys(("archive", "markets", "llm"), 1),
    "leaks": 2,
    "forecasters": 3,
    **dict.fromkeys(("replay", "runs", "scoring"), 4),
    **dict.fromkeys(("leaderboard", "audit", "analysis"), 5),
    "api": 6,
    "": 6,
    "adapters": 6,
    **dict.fromkeys(("cli", "schedule"), 7),
    "__main__": 8,
}
CLOCK_ALLOWED = ("cli", "schedule")
ENVIRONMENT_ALLOWED = ("cli", "environment")
ENVIRONMENT_NAMES = ("environ", "environb", "getenv", "getenvb")
FACADE_LINES = 150
BUILTIN_EXCEPTIONS = frozenset(
    n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)
)


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    typing: bool = False  # under `if TYPE_CHECKING:` (read by type checkers, never executed)

    def __str__(self) -> str:
        return f"{self.source}:{self.line} imports {self.target}"


def modules(root: Path) -> dict[str, Path]:
    """Dotted module name → file, for every .py file under the package folder `root`."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = (root.name, *path.relative_to(root).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def trees(root: Path) -> dict[str, ast.Module]:
    return {
        name: ast.parse(path.read_text(encoding="utf-8"), str(path))
        for name, path in modules(root).items()
    }


def area(module: str) -> str:
    """The top-level part of the package a module belongs to ('' for the package root)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _nearest(name: str, known: dict) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _from_base(module: str, node: ast.ImportFrom, known: dict) -> str:
    if not node.level:
        return node.module or ""
    package = module if known[module].name == "__init__.py" else module.rpartition(".")[0]
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(module: str, node: ast.AST, known: dict) -> list[str]:
    if isinstance(node, ast.Import):
        return [_nearest(a.name, known) for a in node.names]
    base = _from_base(module, node, known)
    return [
        f"{base}.{a.name}" if f"{base}.{a.name}" in known else _nearest(base, known)
        for a in node.names
    ]


def imports(root: Path) -> list[Import]:
    """Every import of one package module by another (anywhere in the file), resolved to modules."""
    known, found = modules(root), []
    for module, tree in trees(root).items():
        typed = _type_only(tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found += [
                    Import(module, t, node.lineno, id(node) in typed)
                    for t in dict.fromkeys(_targets(module, node, known))
                    if t and t != module
                ]
            elif _names_a_module(node, known, module):
                found.append(Import(module, node.value, node.lineno))
    return found


def _type_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes inside `if TYPE_CHECKING:` blocks."""
    return {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING")
        for stmt in node.body
        for inner in ast.walk(stmt)
        if isinstance(inner, (ast.Import, ast.ImportFrom))
    }


def _names_a_module(node: ast.AST, known: dict, module: str) -> bool:
    """A string constant that is exactly the dotted name of a package module (not the root)."""
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and "." in node.value
        and node.value in known
        and node.value != module
    )


def unplaced(root: Path) -> list[str]:
    return sorted({m for m in modules(root) if area(m) not in LAYERS})


def upward_imports(root: Path) -> list[str]:
    """(a) Imports from a lower layer into a higher one."""
    return [
        f"{i} (layer {LAYERS[area(i.source)]} -> {LAYERS[area(i.target)]})"
        for i in imports(root)
        if area(i.source) in LAYERS
        and area(i.target) in LAYERS
        and LAYERS[area(i.target)] > LAYERS[area(i.source)]
    ]


def import_cycles(root: Path) -> list[list[str]]:
    """(b) Each set of modules that import one another in a circle (strongly
    connected, > 1 module). Imports under `if TYPE_CHECKING:` never run, so they close no
    circle (a package face declares its lazily loaded names to mypy that way); every other
    rule counts them."""
    graph: dict[str, set[str]] = {m: set() for m in modules(root)}
    for i in imports(root):
        if not i.typing:
            graph[i.source].add(i.target)
    return sorted(sorted(c) for c in _components(graph) if len(c) > 1)


def package_cycles(root: Path) -> list[list[str]]:
    """(b) Each set of packages that import one another in a circle, through any import (at the
    top of a file or inside a function) or a string naming a module; '' is the package root."""
    graph: dict[str, set[str]] = {area(m): set() for m in modules(root)}
    for i in imports(root):
        if area(i.source) != area(i.target):
            graph[area(i.source)].add(area(i.target))
    return sorted(sorted(c) for c in _components(graph) if len(c) > 1)


def _components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(start: str) -> None:
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    found.append(_pop_component(stack, on_stack, node))
            elif nxt not in index:
                index[nxt] = low[nxt] = counter[0]
                counter[0] += 1
                stack.append(nxt)
                on_stack.add(nxt)
                work.append((nxt, iter(sorted(graph[nxt]))))
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _pop_component(stack: list[str], on_stack: set[str], node: str) -> list[str]:
    component = []
    while True:
        member = stack.pop()
        on_stack.discard(member)
        component.append(member)
        if member == node:
            return component


def _base_name(base: ast.expr) -> str:
    if isinstance(base, ast.Attribute):
        return base.attr
    return base.id if isinstance(base, ast.Name) else ""


def stray_exceptions(root: Path) -> list[str]:
    """(c) Exception classes defined anywhere but errors.py (a class is one when a base is a
    builtin exception, a class already known to be one, or named *Error/*Exception/*Warning)."""
    classes = [
        (m, node)
        for m, tree in trees(root).items()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
    ]
    known = set(BUILTIN_EXCEPTIONS)
    while True:
        more = {
            c.name
            for _, c in classes
            if c.name not in known and any(_is_exception(_base_name(b), known) for b in c.bases)
        }
        if not more:
            break
        known |= more
    errors = f"{root.name}.errors"
    return [f"{m}:{c.lineno} class {c.name}" for m, c in classes if c.name in known and m != errors]


def _is_exception(name: str, known: set[str]) -> bool:
    return name in known or name.endswith(("Error", "Exception", "Warning"))


def global_statements(root: Path) -> list[str]:
    """(d) Every `global` statement."""
    return [
        f"{m}:{node.lineno} global {', '.join(node.names)}"
        for m, tree in trees(root).items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Global)
    ]


def facade_too_long(root: Path, limit: int = FACADE_LINES) -> list[str]:
    """(e) The facade's length when it is over `limit` lines."""
    lines = len((root / "api.py").read_text(encoding="utf-8").splitlines())
    return [f"{root.name}/api.py has {lines} lines (at most {limit})"] if lines > limit else []


def past_a_face(root: Path) -> list[str]:
    """(f) Imports, from outside a package, of one of its modules rather than its face."""
    packages = {p.name for p in root.iterdir() if (p / "__init__.py").is_file()}
    found = []
    for module, tree in trees(root).items():
        for node in ast.walk(tree):
            for name in _imported_modules(node):
                parts = name.split(".")
                if len(parts) > 2 and parts[0] == root.name and parts[1] in packages:
                    if parts[1] != area(module):
                        found.append(f"{module}:{node.lineno} imports {name}")
    return found


def _imported_modules(node: ast.AST) -> list[str]:
    """The dotted modules an absolute import statement names (`from X import …` names X)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom) and not node.level and node.module:
        return [node.module]
    return []


def clock_reads(root: Path) -> list[str]:
    """(g) Reads of the wall clock outside cli/ and schedule/ (calls or references)."""
    return reads(root, CLOCK_ALLOWED, _clock)


def reads(root: Path, allowed: tuple[str, ...], found) -> list[str]:
    """`module:line what` of every node `found` names, in the modules outside `allowed`."""
    return [
        f"{m}:{node.lineno} {what}"
        for m, tree in trees(root).items()
        if area(m) not in allowed
        for node in ast.walk(tree)
        if (what := found(node))
    ]


def _clock(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        owner = _base_name(node.value)
        if (owner in ("datetime", "date") and node.attr in ("now", "utcnow", "today")) or (
            owner == "time" and node.attr in ("time", "time_ns")
        ):
            return f"{owner}.{node.attr}"
    if isinstance(node, ast.ImportFrom) and node.module == "time" and not node.level:
        hits = [a.name for a in node.names if a.name in ("time", "time_ns")]
        return f"from time import {', '.join(hits)}" if hits else None
    return None


def environment_reads(root: Path) -> list[str]:
    """(h) Reads of the process environment outside cli/ and environment.py."""
    return reads(root, ENVIRONMENT_ALLOWED, _environment)


def _environment(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute) and node.attr in ENVIRONMENT_NAMES:
        return f"{_base_name(node.value)}.{node.attr}" if _base_name(node.value) == "os" else None
    if isinstance(node, ast.ImportFrom) and node.module == "os" and not node.level:
        hits = [a.name for a in node.names if a.name in ENVIRONMENT_NAMES]
        return f"from os import {', '.join(hits)}" if hits else None
    return None


# ---- the package as it is --------------------------------------------------------------------


def test_every_module_has_a_layer():
    assert unplaced(ROOT) == []


def test_no_import_runs_back_up_a_layer():
    assert upward_imports(ROOT) == []


def test_no_import_circle():
    assert import_cycles(ROOT) == []


def test_the_package_graph_is_acyclic():
    assert package_cycles(ROOT) == []


def test_every_exception_class_is_defined_in_errors():
    assert stray_exceptions(ROOT) == []


def test_no_global_statement():
    assert global_statements(ROOT) == []


def test_the_facade_is_thin():
    assert facade_too_long(ROOT) == []


def test_from_outside_a_package_only_its_face_is_imported():
    assert past_a_face(ROOT) == []


def test_the_clock_is_read_only_in_the_cli_and_the_service():
    assert clock_reads(ROOT) == []


def test_the_environment_is_read_only_in_the_cli_and_environment_py():
    assert environment_reads(ROOT) == []


# ---- a test of the test: a planted package with one of each violation -------------------------

PLANTED = {
    "__init__.py": "from hindcast import api\n",
    "errors.py": "class HindcastError(Exception):\n    pass\n",
    "records.py": "import time\n\nfrom hindcast.replay import runner\n\n\ndef stamp():\n    return "
    "time.time()\n",
    "timeutil.py": "from datetime import datetime, timezone\n\nNOW = datetime.now\n",
    "archive/__init__.py": "",
    "archive/a.py": "from hindcast.archive import b\n",
    "archive/b.py": "def late():\n    from . import a\n    return a\n",
    # a type-only import never runs: c and d are no circle (c names d for mypy only)
    "archive/c.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from hindcast.archive import d\n",
    "archive/d.py": "from hindcast.archive import c\n",
    "markets/__init__.py": "",
    "markets/lazy.py": "def board():\n    from hindcast.leaderboard.tables import x\n    return x\n",
    "scoring/__init__.py": "",
    "scoring/state.py": (
        "from hindcast.errors import HindcastError\n_STATE = None\n\n\nclass Oops(ValueError):\n"
        "    pass\n\n\nclass Deeper(HindcastError):\n    pass\n\n\ndef set_state(v):\n"
        "    global _STATE\n    _STATE = v\n"
    ),
    "replay/__init__.py": "",
    "replay/runner.py": "from hindcast import records\nimport time\n\nSTART = time.monotonic()\n",
    "replay/plan.py": 'import importlib\n\nSTORE = importlib.import_module("hindcast.runs.store")\n',
    "runs/__init__.py": "",
    "runs/store.py": "def late():\n    from hindcast.replay import runner\n\n    return runner\n",
    "leaderboard/__init__.py": "",
    "leaderboard/tables.py": "x = 1\n",
    "api.py": "\n" * 151,
    "cli/__init__.py": "",
    "cli/main.py": (
        "from datetime import datetime\n\nfrom hindcast import api, errors, records\nfrom hindcast.cli import sub\n"
        "from hindcast.replay.runner import START\n\nNOW = datetime.now()\n"
    ),
    "cli/sub.py": "from . import main\n",
    "oddity.py": "",
    "environment.py": "import os\n\n\ndef of():\n    return os.environ\n",
    "markets/keys.py": "import os\nfrom os import getenv\n\nKEY = os.environ.get('K') or getenv('K')\n",
}


def _plant(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "hindcast"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_the_checkers_find_each_planted_violation(tmp_path):
    root = _plant(tmp_path, PLANTED)
    assert unplaced(root) == ["hindcast.oddity"]
    assert upward_imports(root) == [
        "hindcast.markets.lazy:2 imports hindcast.leaderboard.tables (layer 1 -> 5)",
        "hindcast.records:3 imports hindcast.replay.runner (layer 0 -> 4)",
    ]
    assert import_cycles(root) == [
        ["hindcast.archive.a", "hindcast.archive.b"],
        ["hindcast.cli.main", "hindcast.cli.sub"],
        ["hindcast.records", "hindcast.replay.runner"],
    ]
    assert stray_exceptions(root) == [
        "hindcast.scoring.state:5 class Oops",
        "hindcast.scoring.state:9 class Deeper",
    ]
    assert global_statements(root) == ["hindcast.scoring.state:14 global _STATE"]
    assert facade_too_long(root) == ["hindcast/api.py has 151 lines (at most 150)"]
    assert package_cycles(root) == [["records", "replay", "runs"]]
    assert past_a_face(root) == [
        "hindcast.cli.main:5 imports hindcast.replay.runner",
        "hindcast.markets.lazy:2 imports hindcast.leaderboard.tables",
    ]
    assert clock_reads(root) == ["hindcast.records:7 time.time", "hindcast.timeutil:3 datetime.now"]
    assert environment_reads(root) == [
        "hindcast.markets.keys:2 from os import getenv",
        "hindcast.markets.keys:4 os.environ",
    ]


def test_the_checkers_pass_a_clean_package(tmp_path):
    clean = {
        name: text
        for name, text in PLANTED.items()
        if name
        not in (
            "records.py",
            "timeutil.py",
            "archive/b.py",
            "markets/lazy.py",
            "scoring/state.py",
            "api.py",
            "cli/main.py",
            "cli/sub.py",
            "oddity.py",
            "replay/plan.py",
            "runs/store.py",
            "markets/keys.py",
        )
    }
    root = _plant(
        tmp_path,
        clean
        | {
            "api.py": "\n" * 150,
            "records.py": "import time\n\nSTART = time.perf_counter()\n",
            "cli/main.py": "import os\nfrom datetime import date\n\nfrom hindcast import api\n"
            "TODAY = date.today()\nDEBUG = os.environ.get('D')\n",
        },
    )
    assert (
        unplaced(root),
        upward_imports(root),
        import_cycles(root),
        stray_exceptions(root),
        global_statements(root),
        facade_too_long(root),
        package_cycles(root),
        past_a_face(root),
        clock_reads(root),
        environment_reads(root),
    ) == ([], [], [], [], [], [], [], [], [], [])
