"""The command line: typer sub-apps. The face: `run`, the console entry point."""

from __future__ import annotations

from hindcast.faces import lazy

_WHERE = {
    "run": "main",
}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy(__name__, _WHERE)
