"""hindcast: judge forecasters on resolved prediction markets replayed at a past instant.

The public Python API is `__all__`. Heavy modules (the engine, the archive, torch,
LanceDB, polars) load on first use of a name that needs them, so `import hindcast` and
`hindcast --help` stay instant.

    import hindcast

    # the caller's instant (the package reads no clock)
    recorded_at = datetime(2026, 11, 30, tzinfo=timezone.utc)
    result = hindcast.sweep(store=hindcast.sample("markets"), forecasters=["market", "base-rate"],
                            fractions=[0.5, 1.0], out="runs", now=recorded_at)
    print(result.to_polars())

`hindcast.sweep(spec=None, *, now, out="runs", db=None, runs=None, **options)` is
`hindcast.api.sweep`: the spec (a ReplaySpec, a mapping of spec keys, a
TOML file, or nothing, with `settings` — the spec keys of the TOML layout such as
`store=`, `forecasters=` (default: the baselines market, constant, base-rate),
`fractions=`, `offsets=`, `limit=`, `archive=` — laid over it), the run
database (`db=` a path or a URL; default `$HINDCAST_DB`, else `runs/hindcast.db`, as in
`hindcast sweep`; or an open `runs=RunStore`). `now`, the instant the run is recorded at, is
passed in by the caller (time is an input: the library never reads the clock).
Exports and the report go to `OUT/<run id>/`. `hindcast.sweep_async` is the same as a
coroutine, for a running event loop (Jupyter).
"""

from __future__ import annotations

import importlib

from hindcast import replay
from hindcast.errors import *  # noqa: F403  (the whole tree, listed in errors.__all__)

__version__ = "0.1.0"

_LAZY = {  # public name → (module, attribute), imported on first access
    "sweep": ("hindcast.api", "sweep"),
    "sweep_async": ("hindcast.api", "sweep_async"),
    "ReplaySpec": ("hindcast.replay.spec", "ReplaySpec"),
    "spec_from_mapping": ("hindcast.replay.spec", "spec_from_mapping"),
    "SweepResult": ("hindcast.replay.engine", "SweepResult"),
    "RunScores": ("hindcast.replay.scored", "RunScores"),
    "load_scored": ("hindcast.replay.scored", "load_scored"),
    "RunStore": ("hindcast.runs.store", "RunStore"),
    "Models": ("hindcast.llm.models", "Models"),
    "Forecast": ("hindcast.records", "Forecast"),
    "Question": ("hindcast.records", "Question"),
    "Document": ("hindcast.records", "Document"),
    "Context": ("hindcast.forecasters.base", "Context"),
    "Forecaster": ("hindcast.forecasters.base", "Forecaster"),
    "register_forecaster": ("hindcast.forecasters.registry", "register"),
    "Embedder": ("hindcast.archive.embed", "Embedder"),
    "register_embedder": ("hindcast.archive.embed", "register"),
    "open_snapshot": ("hindcast.archive.snapshot", "open_snapshot"),
    "build_index": ("hindcast.archive.index", "build_index"),
    "TimeBoundRetriever": ("hindcast.archive.retriever", "TimeBoundRetriever"),
}

# fmt: off
__all__ = ["__version__", "load_spec", "sample", "sweep", "sweep_async", "ReplaySpec",
    "spec_from_mapping", "SweepResult", "RunScores", "load_scored", "RunStore", "Models",
    "Forecast", "Question", "Document", "Context", "Forecaster", "register_forecaster", "Embedder",
    "register_embedder", "open_snapshot", "build_index", "TimeBoundRetriever", "AlreadyRunning",
    "ArchiveInputError", "ArchiveIntegrityError", "BadModelSpec", "BadRow", "Busy", "ChatError",
    "CircuitOpen", "ConfigError", "CutoffError", "ForecastError", "FrozenError", "HindcastError",
    "HostDown", "InfrastructureError", "InputFormatError", "Interrupted", "KalshiError",
    "LeaderboardError", "LeakageError", "LocalModelError", "LocalServerRequest", "LockHeldError",
    "MalformedMarket", "ManifoldError", "MarketDataError", "MarketSkipped", "NoRunDatabase",
    "PolymarketError", "PullBusy", "RejectedAnswer", "RetrievalError", "RunStoreError",
    "ScheduleError", "StoppedError", "UnknownEmbedderError"]
# fmt: on


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'hindcast' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def load_spec(path):
    """A TOML sweep spec file (the `hindcast sweep --spec` layout) → a ReplaySpec."""
    return replay.spec_from_mapping(replay.load_toml(path))


def sample(kind: str = "markets"):
    """The shipped sample `markets/sample` or `archive/sample`: in the working directory,
    else in the source checkout this package runs from (a ConfigError when neither has it)."""
    from pathlib import Path

    if kind not in ("markets", "archive"):
        raise ConfigError(f"sample {kind!r}: use 'markets' or 'archive'")
    for base in (Path.cwd(), Path(__file__).resolve().parents[1]):
        if (base / kind / "sample").is_dir():
            return base / kind / "sample"
    raise ConfigError(
        f"the shipped sample {kind}/sample is not here (it comes with the source checkout)"
    )
