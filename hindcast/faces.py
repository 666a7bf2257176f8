"""The one lazy helper of the package faces: `__getattr__, __dir__ = lazy(__name__, __file__)`
loads each name a face imports under `if TYPE_CHECKING:` from its module on first use, so that
importing the face stays instant when those modules are heavy (numpy, httpx, torch, LanceDB,
Ray). The imports are what mypy and editors read; `__all__` beside them is a literal list. A
name is looked up in its module on every access (never cached), so what a test patches in the
module is what callers see; a name imported from the face's own package is that submodule."""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path


def deferred(package: str, path: str) -> dict[str, tuple[str, str]]:
    """name → (module, attribute) of the `from M import N` statements under `if TYPE_CHECKING:`
    at the top level of the face of `package` at `path` (attribute "" for a submodule)."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    where: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.module:
                    for alias in stmt.names:
                        own = stmt.module == package
                        module = f"{package}.{alias.name}" if own else stmt.module
                        where[alias.asname or alias.name] = (module, "" if own else alias.name)
    return where


def lazy(package: str, path: str) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """(`__getattr__`, `__dir__`) for the face `package` whose source is `path`."""
    table: dict[str, tuple[str, str]] = {}

    def __getattr__(name: str) -> object:
        table.update(table or deferred(package, path))
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = table[name]
        loaded = importlib.import_module(module)
        return getattr(loaded, attribute) if attribute else loaded

    def __dir__() -> list[str]:
        table.update(table or deferred(package, path))
        return sorted({*vars(sys.modules[package]), *table})

    return __getattr__, __dir__
