"""The command line: typer sub-apps. The face: `run`, the console entry point."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # what mypy sees; at run time each name loads on first use (`lazy`)
    from hindcast.cli.main import run

_WHERE = {
    "run": "main",
}
__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy(__name__, _WHERE)
