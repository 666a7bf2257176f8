"""The HindcastError tree: every failure the library reports on purpose.

    HindcastError                      exit 1 unless a subclass says otherwise
    ├── LeakageError                   something from at/after t0 was about to reach a forecaster
    ├── CutoffError                    a t0 that cannot be replayed
    ├── ConfigError                    a spec, service config or flag value that cannot be used
    ├── MarketDataError                market, resolution or price input that cannot be read
    │   └── InputFormatError           malformed rows, each 'file:line: reason'
    ├── ArchiveIntegrityError          a snapshot/store whose files do not match its manifest
    ├── FrozenError                    a write into a frozen snapshot or store version
    ├── ForecastError                  a FORECAST failure: the model answered, no valid probability
    ├── InfrastructureError            an OUTAGE: the model could not be reached (never a forecast)
    ├── RunStoreError                  the run database cannot be opened / lacks what was asked
    ├── LockHeldError                  exit 3: another instance holds the lock
    └── StoppedError                   exit 4: stopped by a circuit breaker or a budget; resumable

Exit codes of every command (`hindcast.cli.common`): 0 ok · 1 error in the input, the
config or the run · 2 usage · 3 another instance holds the lock · 4 stopped, resumable.
"""

from __future__ import annotations


class HindcastError(Exception):
    """Base of every error hindcast raises deliberately (the CLI maps it to `exit_code`)."""

    exit_code = 1


class LeakageError(HindcastError):
    """Something from at or after t0 was about to reach a forecaster."""


class CutoffError(HindcastError):
    """A cutoff t0 that cannot be replayed (at/after resolution, before the market opened)."""


class ConfigError(HindcastError):
    """A sweep spec, service config or setting that cannot be used (named in the message)."""


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
    """A forecaster could not produce a valid probability (final: stored and counted)."""


class InfrastructureError(HindcastError):
    """A model endpoint could not be reached (connection, timeout, 429/5xx after retries,
    401/403, a missing key, a dead local server). Logged as an attempt, never stored as a
    forecast: the next run asks again. `endpoint` names where (never with a credential)."""

    def __init__(self, message: str, endpoint: str = ""):
        super().__init__(message)
        self.endpoint = endpoint


class RunStoreError(HindcastError):
    """The run database cannot be opened or does not hold what was asked for."""


class LockHeldError(HindcastError):
    """Another instance holds the lock (of a store, or of the service)."""

    exit_code = 3


class StoppedError(HindcastError):
    """A run stopped on purpose before its plan was done (circuit breaker, cost or token
    budget): everything answered is kept; re-running the same command resumes."""

    exit_code = 4
