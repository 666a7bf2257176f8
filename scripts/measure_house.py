"""The figures of issue 38's acceptance list this branch touched, measured from a checkout:
`python scripts/measure_house.py [ROOT]` (default: this checkout) prints one `name: value` a
line, so the lead can run it before and after a merge and compare."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path


def modules(root: Path) -> list[Path]:
    return sorted((root / "hindcast").rglob("*.py"))


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def literal_all(path: Path) -> bool:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            getattr(t, "id", "") == "__all__" for t in node.targets
        ):
            return isinstance(node.value, ast.List) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.value.elts
            )
    return False


def function_imports(root: Path) -> int:
    """Imports of hindcast's own modules inside a function body."""
    count = 0
    for path in modules(root):
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    if isinstance(node, ast.ImportFrom) and (
                        node.level or (node.module or "").startswith("hindcast")
                    ):
                        count += 1
                    elif isinstance(node, ast.Import) and any(
                        a.name.startswith("hindcast") for a in node.names
                    ):
                        count += 1
    return count


def max_parameters(root: Path, package: str) -> tuple[int, str]:
    best = (0, "")
    for path in sorted((root / "hindcast" / package).glob("*.py")):
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = fn.args
                n = len(a.posonlyargs + a.args + a.kwonlyargs) - (
                    1 if a.args and a.args[0].arg in ("self", "cls") else 0
                )
                best = max(best, (n, f"{path.relative_to(root)}:{fn.name}"))
    return best


def runner_callables(root: Path) -> str:
    """Parameters of `replay.runner.run_tasks` annotated as a Callable (the runner's callbacks)."""
    tree = ast.parse((root / "hindcast" / "replay" / "runner.py").read_text(encoding="utf-8"))
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name == "run_tasks":
            a = fn.args
            named = [
                p.arg
                for p in a.posonlyargs + a.args + a.kwonlyargs
                if p.annotation is not None and "Callable" in ast.unparse(p.annotation)
            ]
            return f"{len(named)} {named}"
    return "no run_tasks"


def grep(root: Path, pattern: str, *paths: str, flags: str = "-rn") -> list[str]:
    done = subprocess.run(
        ["grep", flags, "-E", pattern, *paths], cwd=root, capture_output=True, text=True
    )
    return [line for line in done.stdout.splitlines() if line]


def strict_share(root: Path) -> float:
    """Lines of the modules mypy checks with disallow_untyped_defs, over all package lines."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    strict: set[str] = set()
    for override in config.get("overrides", []):
        if override.get("disallow_untyped_defs"):
            names = override["module"]
            strict |= set([names] if isinstance(names, str) else names)
    total = sum(lines(p) for p in modules(root))
    counted = 0
    for path in modules(root):
        name = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        if any(name == s or (s.endswith(".*") and name.startswith(s[:-2])) for s in strict):
            counted += lines(path)
    return counted / total


def main(root: Path) -> None:
    faces = sorted((root / "hindcast").glob("*/__init__.py"))
    over = [p for p in modules(root) if lines(p) > 500]
    ple = subprocess.run(
        ["ruff", "check", "--select", "PLE", "--output-format", "concise", "hindcast"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    figures = {
        "faces": len(faces),
        "face lines (total)": sum(lines(p) for p in faces),
        "face lines (largest)": max(lines(p) for p in faces),
        "faces with a literal __all__": sum(literal_all(p) for p in faces),
        "ruff --select PLE findings": len(
            [x for x in ple.stdout.splitlines() if re.match(r"^hindcast/", x)]
        ),
        "grep -rni deprecat hindcast": len(
            grep(root, "[Dd][Ee][Pp][Rr][Ee][Cc][Aa][Tt]", "hindcast")
        ),
        'grep get("op") | ["root"] | identity.get(': len(
            grep(root, r'get\("op"\)|\["root"\]|identity\.get\(', "hindcast")
        ),
        "modules over 500 lines": f"{len(over)} {[str(p.relative_to(root)) for p in over]}",
        "function-level imports of own modules": function_imports(root),
        "max parameters of a replay/ function": "%d (%s)" % max_parameters(root, "replay"),
        "callables taken by the runner (run_tasks)": runner_callables(root),
        "strict (disallow_untyped_defs) share of lines": f"{strict_share(root):.1%}",
        "hindcast/compat.py exists": (root / "hindcast" / "compat.py").exists(),
    }
    for name, value in figures.items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])
