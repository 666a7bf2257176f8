"""One registry of names → factories, used for forecasters, embedders and leak detectors: a
factory is registered in code (the built-ins exactly as a plugin would) or, given an
entry-point `group`, by an installed plugin, loaded when a name is looked up. Each name keeps
where it came from (`origin`). The messages for an unknown name stay with each kind's caller."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(MutableMapping[str, T], Generic[T]):
    def __init__(self, group: str | None = None) -> None:
        self.group = group  # the entry-point group plugins register under (None: none)
        self._made: dict[str, T] = {}
        self._origins: dict[str, str] = {}

    def register(self, name: str, factory: T, origin: str = "registered") -> None:
        self._made[name] = factory
        self._origins[name] = origin

    def find(self, name: str) -> T | None:
        """The factory registered under `name`, plugins included; None when there is none."""
        self.load_plugins()
        return self._made.get(name)

    def names(self) -> list[str]:
        """Every registered name, plugins included, sorted."""
        self.load_plugins()
        return sorted(self._made)

    def origin(self, name: str) -> str:
        return self._origins.get(name, "registered")

    def load_plugins(self) -> None:
        """Register each installed plugin of the group whose name is not registered yet."""
        if self.group is None:
            return
        from importlib.metadata import entry_points

        for point in entry_points(group=self.group):
            if point.name not in self._made:
                self.register(point.name, point.load(), origin=f"plugin {point.value}")

    def copy(self) -> Registry[T]:
        other: Registry[T] = Registry(self.group)
        other._made, other._origins = dict(self._made), dict(self._origins)
        return other

    def __getitem__(self, name: str) -> T:
        return self._made[name]

    def __setitem__(self, name: str, factory: T) -> None:
        self.register(name, factory)

    def __delitem__(self, name: str) -> None:
        del self._made[name]
        self._origins.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._made)

    def __len__(self) -> int:
        return len(self._made)
