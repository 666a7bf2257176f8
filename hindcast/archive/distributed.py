"""Connecting to a Ray cluster, and ingest scaled out on it (the optional extra: `pip install
'hindcast-replay[ray]'`); embedding on Ray: `hindcast.archive.ray_embed`.

Same code, same bytes, more processes:

* `ingest` is file-parallel: one Ray task per input runs `hindcast.archive.ingest.stage` — the
  code the single-process path runs — into the ingest's private staging folder; the driver
  commits only when every input was read (all or nothing, as `ingest.ingest`). The draft's
  chunk files are byte-identical, so `freeze` gives the same snapshot id.
* `embed` (`hindcast.archive.ray_embed`) runs an actor pool of embedders on Ray Data over
  exactly the single-process chunk boundaries.

Where things must be: the driver (the machine running `hindcast`) writes the archive and the
index. Ingest workers read the inputs and write into the staging folder inside the archive, so
on a cluster of several machines the inputs and the archive must be on a filesystem every node
mounts at the same path (a worker that cannot see them fails with one line naming the file).
Embedding needs no shared filesystem. Every node needs hindcast installed (the same version).

`address`: None or "local" starts a private local Ray (all cores, no dashboard, session files in
a temporary folder under $RAY_TMPDIR or the system temp dir, removed afterwards); "auto",
"HOST:PORT" or "ray://HOST:PORT" joins an existing cluster. A process that already called
`ray.init` is used as it is (and left running).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import socket
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType

from hindcast import environment
from hindcast.archive import ingest as ingesting
from hindcast.archive import layout
from hindcast.errors import ArchiveInputError, ConfigError, HindcastError, StoppedError

INSTALL = "pip install 'hindcast-replay[ray]'"
_ADDRESS = re.compile(
    r"^(auto|local|(ray://)?[A-Za-z0-9_.\-]+:\d{1,5}|(ray://)?\[[0-9A-Fa-f:]+\]:\d{1,5})$"
)
_SOCKET_MAX, _SOCKET_TAIL = (
    107,
    len("/session_2026-01-01_00-00-00_000000_1234567/sockets/plasma_store"),
)


def check_address(address: str | None) -> str:
    """`None`/"local" | "auto" | "HOST:PORT" | "ray://HOST:PORT", else a ConfigError saying so."""
    if address is not None and not _ADDRESS.match(address):
        raise ConfigError(f"Ray address {address!r}: use auto, local, HOST:PORT or ray://HOST:PORT")
    return address or "local"


def import_ray() -> ModuleType:
    """The `ray` module, or one line saying how to install it."""
    try:
        import ray
        import ray.data  # noqa: F401  (the extra installs ray[data])
    except ImportError:
        raise ConfigError(f"--ray needs Ray, which is not installed: {INSTALL}") from None
    return ray


@contextlib.contextmanager
def connected(address: str | None) -> Iterator[ModuleType]:
    """Ray, initialised for the duration (see the module doc); an unreachable
    cluster → StoppedError."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    address = check_address(address)
    temp = _private_temp() if address == "local" else None
    _init(ray, address, temp)
    try:
        yield ray
    finally:
        ray.shutdown()
        if temp:
            shutil.rmtree(temp, ignore_errors=True)


def _private_temp() -> str:
    """A private session folder (nothing of the session stays behind) under $RAY_TMPDIR — Ray's own
    variable — or the system temp dir; refused when Ray's socket paths below
    it would be too long."""
    parent = environment.value("RAY_TMPDIR") or tempfile.gettempdir()
    if len(os.path.abspath(parent)) + len("/hindcast-ray-12345678") + _SOCKET_TAIL > _SOCKET_MAX:
        raise ConfigError(
            f"RAY_TMPDIR {parent}: too long a path for Ray's sockets below it "
            f"(at most {_SOCKET_MAX - _SOCKET_TAIL - 22} characters); set a shorter one"
        )
    return tempfile.mkdtemp(prefix="hindcast-ray-", dir=parent)


def _init(ray, address: str, temp: str | None) -> None:
    quiet = {"logging_level": logging.ERROR, "log_to_driver": False}
    if address != "local":
        _reachable(address)
    try:
        with warnings.catch_warnings():  # e.g. lancedb's note on the processes Ray forks
            warnings.simplefilter("ignore")
            if temp:
                ray.init(include_dashboard=False, _temp_dir=temp, **quiet)
            else:
                ray.init(address=address, **quiet)
    except (ConnectionError, RuntimeError, TimeoutError) as exc:
        raise _outage(
            address, str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        ) from None
    _quiet(ray)


def _quiet(ray) -> None:
    """No progress bars or execution logs of Ray Data on the CLI's stderr (they
    stay in Ray's log files)."""
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    for name in ("ray", "ray.data", "ray.data._internal"):
        logging.getLogger(name).setLevel(logging.ERROR)


def _reachable(address: str, timeout: float = 5.0) -> None:
    """Refuse fast when nothing listens at HOST:PORT (Ray itself would retry for minutes)."""
    if address == "auto":
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise _outage(address, exc.strerror or type(exc).__name__) from None


def _outage(address: str, why: str) -> StoppedError:
    return StoppedError(
        f"Ray cluster at {address} cannot be reached ({why}); nothing was written — "
        "re-run when it is up"
    )


# ---- ingest: one task per input, committed by the driver ----------------------------------------


def ingest(
    inputs: Sequence[Path],
    source: str,
    fmt: str,
    archive: Path,
    *,
    address: str | None = None,
    chunk_rows: int = ingesting.CHUNK_ROWS,
) -> list[ingesting.IngestSummary]:
    """`ingest.ingest` with each input read by a Ray task; all or nothing, the same files."""
    archive, inputs = Path(archive), [Path(p) for p in inputs]
    ingesting.refuse_frozen(layout.draft_dir(archive))
    with connected(address) as ray, ingesting.staging_area(archive) as staging:
        task = ray.remote(num_cpus=1)(_stage)
        refs = [
            task.remote(
                os.getcwd(), p, source, fmt, layout.draft_dir(archive), archive, staging, chunk_rows
            )
            for p in inputs
        ]
        staged = _gather(ray, refs)
        for item in staged:
            _visible(item)
        for item in staged:
            item.commit()
    return [item.summary for item in staged]


def _stage(
    cwd: str,
    path: Path,
    source: str,
    fmt: str,
    root: Path,
    archive: Path,
    staging: Path,
    chunk_rows: int,
) -> ingesting.Staged:
    """Runs in a Ray worker: relative paths mean what they meant to the driver."""
    os.chdir(cwd)
    return ingesting.stage(path, source, fmt, root, archive, staging, chunk_rows)


def _gather(ray, refs: list) -> list:
    """Every task's result, after all of them ended (so nothing still writes into the staging
    folder when it is removed); the first failure, as its own one-line error."""
    ray.wait(refs, num_returns=len(refs))
    results, failure = [], None
    for ref in refs:
        try:
            results.append(ray.get(ref))
        except Exception as exc:  # a task's error arrives wrapped by Ray: unwrap it
            failure = failure or _unwrapped(exc)
    if failure is not None:
        raise failure
    return results


def _unwrapped(exc: BaseException) -> BaseException:
    """The HindcastError or OSError a Ray error carries, else a StoppedError
    naming it in one line."""
    seen: BaseException | None = exc
    while seen is not None:
        cause = getattr(seen, "cause", None) or seen.__cause__
        if isinstance(seen, (HindcastError, OSError)) and not type(seen).__module__.startswith(
            "ray"
        ):
            return seen
        if isinstance(cause, (HindcastError, OSError)):
            return cause
        seen = cause
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
    return StoppedError(f"Ray stopped: {first}")


def _visible(item: ingesting.Staged) -> None:
    if not item.area.is_dir():
        raise ArchiveInputError(
            f"{item.summary.input}: a Ray worker wrote it to {item.area}, which this machine "
            "does not see; the archive must be on a filesystem shared by every Ray node"
        )
