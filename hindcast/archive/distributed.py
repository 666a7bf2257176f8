"""Ingest and embedding scaled out on Ray (the optional extra: `pip install
'hindcast-replay[ray]'`).

Same code, same bytes, more processes:

* `ingest` is file-parallel: one Ray task per input runs `hindcast.archive.ingest.stage` — the
  code the single-process path runs — into the ingest's private staging folder; the driver
  commits only when every input was read (all or nothing, as `ingest.ingest`). The draft's
  chunk files are byte-identical, so `freeze` gives the same snapshot id.
* `embed` runs an actor pool of embedders on Ray Data (each actor loads the model once) over
  exactly the single-process chunk boundaries (`index.month_rows`, `index.month_texts`,
  `chunk_rows`). Texts go to the actors and vectors come back through Ray's object store; the
  driver saves each chunk as it arrives (`index.save_chunk(index.chunk_path(...))`), then the
  unchanged `index.build_index` assembles arrays, codes, postings and tables from those chunks.
  A run that stops (a worker died, the cluster went away) keeps every chunk already saved: a
  re-run embeds only the missing ones.

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
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType

from hindcast.archive import index, layout
from hindcast.archive import ingest as ingesting
from hindcast.archive.embed import Embedder, resolve
from hindcast.archive.snapshot import Snapshot
from hindcast.errors import ArchiveInputError, ConfigError, HindcastError, StoppedError

INSTALL = "pip install 'hindcast-replay[ray]'"
_ADDRESS = re.compile(
    r"^(auto|local|(ray://)?[A-Za-z0-9_.\-]+:\d{1,5}|(ray://)?\[[0-9A-Fa-f:]+\]:\d{1,5})$"
)
_SOCKET_MAX, _SOCKET_TAIL = (
    107,
    len("/session_2026-01-01_00-00-00_000000_1234567/sockets/plasma_store"),
)
# texts of at most this many documents are held by the driver at once (one Ray Data run)
_BATCH_DOCS = 200_000


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
    parent = os.environ.get("RAY_TMPDIR") or tempfile.gettempdir()
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


# ---- embed: an actor pool of embedders on Ray Data -----------------------------------------------


class _EmbedActor:
    """One model per actor (loaded once); a batch of chunks → their float32 vectors as bytes."""

    def __init__(self, embedder: Embedder | str, device: str, threads: int | None):
        self.emb, self.device = resolve(embedder), device
        if threads:  # the driver's torch thread count: reductions split alike → the same bits
            import torch

            torch.set_num_threads(threads)
        if device == "cuda":
            _gpu_model(self.emb).to("cuda")

    def __call__(self, batch: dict) -> dict:
        import numpy as np

        vectors = [self._embed(list(texts)).tobytes() for texts in batch["texts"]]
        return {
            "month": batch["month"],
            "start": batch["start"],
            "rows": batch["rows"],
            "vectors": np.array(vectors, dtype=object),
        }

    def _embed(self, texts: list[str]):
        import numpy as np

        with _autocast(self.emb, self.device):
            return np.ascontiguousarray(self.emb.embed(texts), dtype=np.float32)


def _actor(embedder: Embedder | str, device: str, threads: int | None) -> type:
    """The actor class with its arguments bound (shipped with the class, not as
    constructor arguments)."""

    class EmbedActor(_EmbedActor):
        def __init__(self):
            super().__init__(embedder, device, threads)

    return EmbedActor


def _torch_threads() -> int | None:
    """How many threads torch computes with in this process (what the single-process path uses)."""
    try:
        import torch
    except ImportError:
        return None
    return torch.get_num_threads()


def _gpu_model(emb: Embedder):
    """The torch module of an embedder that has one (`model()`, as the MiniLM
    embedders), to move to a GPU."""
    model = getattr(emb, "model", None)
    if not callable(model):
        raise ConfigError(
            f"--device cuda: embedder {emb.name!r} has no model to move to a GPU; use --device cpu"
        )
    return model()


def _autocast(emb: Embedder, device: str):
    if device != "cuda" or getattr(emb, "dtype", "float32") != "bfloat16":
        return contextlib.nullcontext()
    import torch

    return torch.autocast("cuda", dtype=torch.bfloat16)


def embed_chunks(
    snapshot: Snapshot,
    embedder: Embedder | str,
    *,
    address: str | None = None,
    device: str = "cpu",
    chunk_rows: int = index.CHUNK_ROWS,
    on_progress: Callable[[int, int], None] | None = None,
) -> int:
    """Embed on Ray every chunk of every month not yet indexed whose checkpoint file is missing;
    each chunk saved as it arrives. Returns how many chunks were embedded. `on_progress(documents
    embedded, documents to embed)`."""
    emb = resolve(embedder)
    root = layout.index_dir(snapshot.archive, snapshot.id, emb.name)
    pending = _pending(snapshot, root, emb.dims, chunk_rows)
    if not pending:
        return 0
    total, done = sum(rows for *_, rows in pending), [0]

    def tick(rows: int) -> None:
        done[0] += rows
        if on_progress:
            on_progress(done[0], total)

    threads = _torch_threads() if device == "cpu" else None
    with connected(address) as ray:
        pool = _workers(ray, device, threads)
        shipped = embedder if isinstance(embedder, str) else emb  # a name is resolved in each actor
        return sum(
            _run(ray, snapshot, group, root, shipped, (device, threads), pool, tick)
            for group in _groups(pending)
        )


def _pending(
    snapshot: Snapshot, root: Path, dims: int, chunk_rows: int
) -> list[tuple[str, int, int]]:
    """(month, start, rows) of every chunk still to embed, in order (months
    already indexed skipped)."""
    built = _indexed_months(root)
    pending = []
    for month in snapshot.months:
        if month in built:
            continue
        total = sum(_rows_of(snapshot, month).values())
        for start in range(0, total, chunk_rows):
            rows = min(chunk_rows, total - start)
            if index.load_chunk(index.chunk_path(root, month, start), rows, dims) is None:
                pending.append((month, start, rows))
    return pending


def _indexed_months(root: Path) -> set[str]:
    import json

    path = root / index.INFO
    return set(json.loads(path.read_text(encoding="utf-8"))["months"]) if path.exists() else set()


def _rows_of(snapshot: Snapshot, month: str) -> dict:
    from hindcast import frozen

    rows = frozen.read_manifest(snapshot.path)["rows"]
    return {k: n for k, n in rows.items() if k.endswith(f"/month={month}")}


def _groups(pending: list[tuple[str, int, int]]) -> Iterator[list[tuple[str, int, int]]]:
    """Consecutive chunks of whole months, about `_BATCH_DOCS` documents a group
    (bounded driver memory)."""
    group: list[tuple[str, int, int]] = []
    docs = 0
    for chunk in pending:
        if docs >= _BATCH_DOCS and chunk[0] != group[-1][0]:
            yield group
            group, docs = [], 0
        group.append(chunk)
        docs += chunk[2]
    if group:
        yield group


def _workers(ray, device: str, threads: int | None) -> tuple[int, dict]:
    """(how many embedder actors, what each reserves). With cuda: one GPU an actor. On the CPU an
    actor computes with `threads` torch threads (the driver's: the same bits as the single-process
    path) and reserves that many CPUs, at most a node's: so one actor per `threads`
    CPUs, not oversubscribed."""
    if device not in ("cpu", "cuda"):
        raise ConfigError(f"--device {device!r}: use cpu or cuda")
    resources = ray.cluster_resources()
    if device == "cuda":
        if resources.get("GPU", 0) < 1:
            raise ConfigError("--device cuda: the Ray cluster has no GPU")
        return int(resources["GPU"]), {"num_gpus": 1}
    per_node = [n["Resources"].get("CPU", 0) for n in ray.nodes() if n.get("Alive")]
    cpus = max(1, min(threads or 1, int(max(per_node, default=1))))
    return max(1, int(resources.get("CPU", 1)) // cpus), {"num_cpus": cpus}


def _run(
    ray,
    snapshot: Snapshot,
    group: list[tuple[str, int, int]],
    root: Path,
    embedder,
    where: tuple,
    pool: tuple[int, dict],
    tick: Callable[[int], None],
) -> int:
    """One Ray Data run over a group of chunks; each result saved as soon as it arrives."""
    items = _items(snapshot, group)
    (workers, reserve), (device, threads) = pool, where
    with (
        warnings.catch_warnings()
    ):  # max_restarts has no named parameter; Ray Data's own deprecation notes
        warnings.simplefilter("ignore")
        ds = ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
            _actor(embedder, device, threads),
            batch_size=1,
            batch_format="numpy",
            max_restarts=0,
            compute=ray.data.ActorPoolStrategy(size=min(workers, len(items))),
            **reserve,
        )
        return _save(ds, root, tick)


def _save(ds, root: Path, tick: Callable[[int], None]) -> int:
    """Each chunk's vectors into its checkpoint file as it arrives; a failure → what
    was kept, in one line."""
    import numpy as np

    saved = 0
    try:
        for row in ds.iter_rows():
            vectors = np.frombuffer(row["vectors"], dtype=np.float32).reshape(int(row["rows"]), -1)
            index.save_chunk(index.chunk_path(root, str(row["month"]), int(row["start"])), vectors)
            saved += 1
            tick(len(vectors))
    except Exception as exc:
        raise _stopped(exc, saved, root) from None
    return saved


def _items(snapshot: Snapshot, group: list[tuple[str, int, int]]) -> list[dict]:
    """The chunks' texts, cut at the single-process boundaries (`index.month_rows` order)."""
    items, texts_of = [], {}
    for month, start, rows in group:
        if month not in texts_of:
            texts_of = {month: index.month_texts(index.month_rows(snapshot, month))}
        items.append(
            {
                "month": month,
                "start": start,
                "rows": rows,
                "texts": texts_of[month][start : start + rows],
            }
        )
    return items


def _stopped(exc: Exception, saved: int, root: Path) -> HindcastError:
    cause = _unwrapped(exc)
    if isinstance(cause, HindcastError) and not isinstance(cause, StoppedError):
        return cause
    return StoppedError(
        f"embedding on Ray stopped ({cause}); {saved} chunk(s) of this run kept under "
        f"{root}/vectors — re-run the same command to resume"
    )


def embed(
    snapshot: Snapshot,
    embedder: Embedder | str,
    *,
    address: str | None = None,
    device: str = "cpu",
    chunk_rows: int = index.CHUNK_ROWS,
    on_progress: Callable[[int, int], None] | None = None,
) -> dict:
    """`index.build_index`, its chunks embedded on Ray first (byte-identical
    vectors); the index info."""
    embed_chunks(
        snapshot,
        embedder,
        address=address,
        device=device,
        chunk_rows=chunk_rows,
        on_progress=on_progress,
    )
    return index.build_index(snapshot, embedder, chunk_rows=chunk_rows, on_progress=on_progress)


# ---- the two entry points the facade calls: with Ray or without ----------------------------------
