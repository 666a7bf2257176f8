"""The whole exception tree: every exception class of hindcast is defined here.

    Exception
    └── HindcastError                      exit 1 unless a subclass says otherwise
        ├── LeakageError                   something from at/after t0 was about to reach a
        │                                  forecaster
        ├── CutoffError                    a t0 that cannot be replayed
        ├── ConfigError                    a spec, service config or flag value that cannot be used
        │   ├── UnknownEmbedderError       (also a ValueError) no registered embedder of that name
        │   └── BadModelSpec               (also a ValueError) a model spec, endpoint or key_env
        │                                  that cannot be used
        ├── MarketDataError                market, resolution or price input that cannot be read
        │   ├── InputFormatError           malformed rows, each 'file:line: reason'
        │   ├── MalformedMarket            one market whose fields cannot be read
        │   ├── PolymarketError            a Polymarket request that failed for good (names the URL)
        │   ├── KalshiError                a Kalshi request that failed for good or answered an
        │   │                              unknown shape (names the URL)
        │   └── PullBusy                   (also a LockHeldError) another pull into the same store
        ├── MarketSkipped                  internal signal: a well-formed market we do not use
        ├── ArchiveIntegrityError          a snapshot/store whose files do not match its manifest
        ├── ArchiveInputError              an archive input that cannot be read (file and offset)
        ├── BadRow                         (also a ValueError) internal signal: one row rejected
        ├── RetrievalError                 a search that cannot be run as asked
        ├── FrozenError                    a write into a frozen snapshot or store version
        ├── ForecastError                  a FORECAST failure: the model answered, no valid
        │   │                              probability
        │   └── ChatError                  a chat call without a usable reply
        ├── RejectedAnswer                 internal signal: one reply refused, the repair turn
        │                                  follows
        ├── InfrastructureError            an OUTAGE: the model could not be reached (never a
        │   │                              forecast)
        │   ├── CircuitOpen                no call made: the endpoint's breaker is open
        │   └── LocalModelError            the embedded local model server is not available
        ├── RunStoreError                  the run database (or its response cache) cannot be opened
        │   │                              / lacks what was asked
        │   └── NoRunDatabase              a read of a run database file that does not exist
        ├── LeaderboardError               a leaderboard or report that cannot be made as asked
        ├── ScheduleError                  the re-run service cannot do what it was asked
        │   ├── Interrupted                the service was asked to stop; the batch resumes later
        │   └── AlreadyRunning             exit 3: another service holds this run database
        ├── LockHeldError                  exit 3: another instance holds the lock
        │   └── Busy                       a file lock held by someone else (`holder`)
        └── StoppedError                   exit 4: stopped by a circuit breaker or a budget;
            │                              resumable
            └── HostDown                   a venue host refused connections (or failed DNS)
                                           N times in a row: the pull stopped, its cache kept

The CLI (`hindcast.cli.main.guarded`) prints any HindcastError as one line and exits with
its `exit_code`. Exit codes of every command: 0 ok · 1 error in the input, the config or
the run · 2 usage · 3 another instance holds the lock · 4 stopped, resumable. The internal
signals never leave the module that raises them; they are HindcastErrors so that one that
did would still be one clean line.
"""

from __future__ import annotations

from typing import Any

from hindcast.http import redact


class HindcastError(Exception):
    """Base of every error hindcast raises deliberately (the CLI maps it to `exit_code`).
    Its message never holds a credential: URLs in it are redacted (`hindcast.http.redact`)."""

    exit_code = 1

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact(a) if isinstance(a, str) else a for a in args))


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
        super().__init__(
            f"{len(problems)} malformed row(s) in {path}; nothing was written:\n  {shown}{more}"
        )


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
    """The run database (or its response cache) cannot be opened — an older schema on a read-only
    open, a newer schema than this hindcast reads — or does not hold what was asked for."""


class LockHeldError(HindcastError):
    """Another instance holds the lock (of a store, or of the service)."""

    exit_code = 3


class StoppedError(HindcastError):
    """A run that ended before its plan was done (circuit breaker, cost or token budget, or
    outages below the breaker's threshold that left forecasts missing): everything answered is
    kept; re-running the same command resumes."""

    exit_code = 4


class HostDown(StoppedError):
    """A host that refused the connection or failed DNS `failures` times in a row: an outage,
    not a market's failure; the pull stops with its cache kept (`host` is host:port only)."""

    def __init__(self, host: str, failures: int, last: str):
        self.host, self.failures = host, failures
        super().__init__(
            f"host {host} cannot be reached: {failures} connections in a row failed (last: "
            f"{redact(last)}); the pull stopped and keeps its cache: run the same command again "
            "when the host answers"
        )


class UnknownEmbedderError(ConfigError, ValueError):
    """An embedder name that no registered factory or plugin provides."""


class BadModelSpec(ConfigError, ValueError):
    """A model spec that cannot be used: malformed, an endpoint carrying credentials, a key
    pasted where key_env's variable name belongs (the message never repeats a credential)."""


class MalformedMarket(MarketDataError):
    """A market (or its price history) whose fields cannot be read; names the market."""

    def __init__(self, market_id: str, reason: str):
        self.market_id = market_id
        self.reason = reason
        super().__init__(f"market {market_id}: {reason}")


class PolymarketError(MarketDataError):
    """A Polymarket request that failed for good, or answered something unreadable."""

    def __init__(self, url: str, reason: str):
        self.url = url
        self.reason = reason
        super().__init__(f"{url}: {reason}")


class KalshiError(MarketDataError):
    """A Kalshi request that failed for good, or answered something unreadable."""

    def __init__(self, url: str, reason: str):
        self.url = url
        self.reason = reason
        super().__init__(f"{url}: {reason}")


class ManifoldError(MarketDataError):
    """A Manifold request that failed for good, or answered something unreadable;
    `unreachable`: no answer came at all (an outage, not bad data)."""

    def __init__(self, url: str, reason: str, unreachable: bool = False):
        self.url = url
        self.reason = reason
        self.unreachable = unreachable
        super().__init__(f"{url}: {reason}")


class PullBusy(LockHeldError, MarketDataError):
    """Another pull into the same store is running (exit code 3, like every held lock)."""


class MarketSkipped(HindcastError):
    """A well-formed market this service does not use (not binary, not resolved …)."""

    def __init__(self, market_id: str, reason: str, pending: bool = False):
        self.market_id = market_id
        self.reason = reason
        self.pending = (
            pending  # may still resolve: worth asking for again (not closed, not resolved yet)
        )
        super().__init__(f"market {market_id}: skipped: {reason}")


class ArchiveInputError(HindcastError):
    """An archive input that cannot be read at all (missing file, unknown format, truncated …)."""


class BadRow(HindcastError, ValueError):
    """Raised inside a row parser; becomes a Reject with this message."""


class RetrievalError(HindcastError):
    """A search that cannot be run as asked (unknown mode, k < 1 …)."""


class ChatError(ForecastError):
    """A chat call that produced no usable reply (after retries, or not retryable)."""


class RejectedAnswer(HindcastError):
    """One model reply refused (unreadable, off-schema); the repair turn or a failure follows."""

    def __init__(self, reason: str, text: str):
        super().__init__(reason)
        self.reason, self.text, self.attempts, self.seconds = reason, text, 1, 0.0


class CircuitOpen(InfrastructureError):
    """No call was made: the endpoint's breaker is open (not an attempt of its own)."""


class LocalModelError(InfrastructureError):
    """The embedded model server is not available (an outage, not a forecast failure);
    `endpoint` is the local model's identity."""


class LocalServerRequest(HindcastError, ValueError):
    """A request the local model server refuses (HTTP 400), with the reason."""


class NoRunDatabase(RunStoreError):
    """A read of a run database file that does not exist (nothing is created)."""


class LeaderboardError(HindcastError):
    """A leaderboard or report that cannot be made as asked (unknown format,
    slice, baseline, no rows)."""


class ScheduleError(HindcastError):
    """The re-run service cannot do what it was asked (bad config, unknown job …)."""


class Interrupted(ScheduleError):
    """The service was asked to stop; the batch is left pending and resumed at the next start."""


class AlreadyRunning(ScheduleError):
    """Another scheduler holds the lock of this run database."""

    exit_code = 3


class Busy(LockHeldError):
    """Someone else holds the lock; `holder` is what they wrote (or None)."""

    def __init__(self, path: object, holder: dict[str, Any] | None) -> None:
        self.path, self.holder = path, holder
        super().__init__(f"{path} is held by {holder or 'an unknown process'}")


# fmt: off
__all__ = ["AlreadyRunning", "ArchiveInputError", "ArchiveIntegrityError", "BadModelSpec",
    "BadRow", "Busy", "ChatError", "CircuitOpen", "ConfigError", "CutoffError", "ForecastError",
    "FrozenError", "HindcastError", "HostDown", "InfrastructureError", "InputFormatError",
    "Interrupted", "KalshiError", "LeaderboardError", "LeakageError", "LocalModelError",
    "LocalServerRequest", "LockHeldError", "MalformedMarket", "ManifoldError", "MarketDataError",
    "MarketSkipped", "NoRunDatabase", "PolymarketError", "PullBusy", "RejectedAnswer",
    "RetrievalError", "RunStoreError", "ScheduleError", "StoppedError", "UnknownEmbedderError"]
# fmt: on
