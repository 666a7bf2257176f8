"""A package face that loads on first use: `lazy(__name__, {name: submodule})` gives the
`__getattr__` and `__dir__` of a package `__init__.py` whose names live in heavy submodules (torch,
LanceDB, httpx), so importing the package stays instant. A name is looked up in its module on
every access (never cached), so what a test patches in the module is what callers see. A name
in `modules` is a submodule offered whole, as a namespace (`leaderboard.display`)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy(
    package: str, where: Mapping[str, str], modules: tuple[str, ...] = ()
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """(`__getattr__`, `__dir__`) for `package`, resolving `name` from `package.where[name]`."""

    def __getattr__(name: str) -> object:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(f"{package}.{where[name]}")
        return module if name in modules else getattr(module, name)

    def __dir__() -> list[str]:
        return sorted(where)

    return __getattr__, __dir__
