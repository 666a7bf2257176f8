"""Old keyword spellings kept for one release: `@renamed(store="run_store")` lets a function
still take `store=` as `run_store=`, with a DeprecationWarning naming the new keyword (both
given: a TypeError). The function itself sees only the new name."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def renamed(**names: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A decorator taking each old keyword (a key of `names`) as its new one (the value)."""

    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            for old, new in names.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{fn.__name__}() got both {old}= and {new}=")
                    warnings.warn(
                        f"{fn.__name__}(): {old}= is deprecated; use {new}=",
                        DeprecationWarning,
                        stacklevel=2,
                    )
                    kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        return call

    return wrap
