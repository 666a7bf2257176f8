"""The command line: typer sub-apps. The face: `run`, the console entry point."""

from __future__ import annotations

# isort: skip_file
# fmt: off
from typing import TYPE_CHECKING

from hindcast.faces import lazy

if TYPE_CHECKING:  # each name loads from its module on first use (hindcast.faces.lazy)
    from hindcast.cli.main import run

__all__ = ["run"]
# fmt: on
__getattr__, __dir__ = lazy(__name__, __file__)
