"""The HindcastError tree: every failure the library reports on purpose."""

from __future__ import annotations


class HindcastError(Exception):
    """Base of every error hindcast raises deliberately (the CLI maps it to exit code 1)."""


class LeakageError(HindcastError):
    """Something from at or after t0 was about to reach a forecaster."""


class CutoffError(HindcastError):
    """A cutoff t0 that cannot be replayed (at/after resolution, before the market opened)."""


class MarketDataError(HindcastError):
    """Market, resolution or price input that cannot be read."""


class InputFormatError(MarketDataError):
    """Malformed rows in an input file; `problems` lists each as 'file:line: reason'."""

    def __init__(self, path: str, problems: list[str]):
        self.path = path
        self.problems = problems
        shown = "\n  ".join(problems[:20])
        more = f"\n  … and {len(problems) - 20} more" if len(problems) > 20 else ""
        super().__init__(f"{len(problems)} malformed row(s) in {path}; nothing was written:\n  {shown}{more}")


class ArchiveIntegrityError(HindcastError):
    """A frozen snapshot or store whose files do not match its manifest."""


class FrozenError(HindcastError):
    """An attempt to write into a frozen snapshot or store version."""


class ForecastError(HindcastError):
    """A forecaster could not produce a valid probability."""


class RunStoreError(HindcastError):
    """The run database cannot be opened or does not hold what was asked for."""
