"""Embedding scaled out on Ray (the optional extra): an actor pool of embedders on Ray Data
(each actor loads the model once) over exactly the single-process chunk boundaries
(`index.month_rows`, `index.month_texts`, `chunk_rows`). Texts go to the actors and vectors
come back through Ray's object store; the driver saves each chunk as it arrives
(`index.save_chunk(index.chunk_path(...))`), then the unchanged `index.build_index` assembles
arrays, codes, postings and tables from those chunks. A run that stops (a worker died, the
cluster went away) keeps every chunk already saved: a re-run embeds only the missing ones.
Embedding needs no shared filesystem. Connecting to the cluster: `hindcast.archive.distributed`.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

from hindcast import frozen
from hindcast.archive import index, layout
from hindcast.archive.distributed import _unwrapped, connected
from hindcast.archive.embed import Embedder, resolve
from hindcast.archive.snapshot import Snapshot
from hindcast.errors import ConfigError, HindcastError, StoppedError

# texts of at most this many documents are held by the driver at once (one Ray Data run)
_BATCH_DOCS = 200_000

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
    with warnings.catch_warnings():  # max_restarts is no named parameter: Ray Data warns of it
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
