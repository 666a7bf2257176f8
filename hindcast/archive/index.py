"""The searchable index of a snapshot: embeddings plus one LanceDB table per month.

Per month: float32 vectors, int8 codes and scales in (created_us, id) order, memory-mapped and
searched by the exact two-stage scan of `hindcast.archive.scan` (the cutoff month cut at t0,
the edit policy masked inside the scan); BM25 postings for full text (`hindcast.archive.text`);
a LanceDB table of the document columns for row reads; optionally an approximate index
(`hindcast.archive.ann`). `IndexReader.open_month` is the only door, so a search at t0 never
opens a later month. Building is resumable (chunks of `chunk_rows`, finished months recorded
in `index.json`). The measured choice of this layout and its exactness argument:
docs/archive.md, "How the index is built and chosen".
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from hindcast import frozen
from hindcast.archive import ann, ann_index, docs, layout, scan, text
from hindcast.archive.embed import (
    Embedder,
    default_embedder,
    document_text,
    for_index,
    get_embedder,
    resolve,
)
from hindcast.archive.snapshot import Snapshot
from hindcast.errors import ArchiveIntegrityError

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
    from lancedb.db import AsyncConnection, DBConnection
    from lancedb.table import AsyncTable, Table

T = TypeVar("T")

FORMAT = "hindcast-archive-index/1"
INFO = "index.json"
CHUNK_ROWS = 2048
Progress = Callable[[int, int], None]


def build_index(
    snapshot: Snapshot,
    embedder: Embedder | str,
    chunk_rows: int = CHUNK_ROWS,
    on_progress: Progress | None = None,
) -> dict:
    """Embed every month of `snapshot` not yet indexed; return the index info.

    `embedder`: a registry key (`minilm`, `hash`, …), a recorded name, or an instance (then
    registered under its `name` for this process, so search embeds queries with it)."""
    emb = resolve(embedder)
    root = layout.index_dir(snapshot.archive, snapshot.id, emb.name)
    info = _start_info(root, snapshot, emb)
    counts = frozen.read_manifest(snapshot.path)["rows"]
    total = sum(counts.values())
    done = [sum(info["months"].values())]
    for month in snapshot.months:
        if month not in info["months"]:
            _index_month(root, snapshot, month, emb, chunk_rows, _ticker(done, total, on_progress))
            info["months"][month] = _month_rows(counts, month)
            save_info(root, info)
            shutil.rmtree(_chunks(root, month), ignore_errors=True)
    info["documents"] = sum(info["months"].values())
    save_info(root, info)
    return info


def _ticker(done: list[int], total: int, on_progress: Progress | None) -> Callable[[int], None]:
    def tick(rows: int) -> None:
        done[0] += rows
        if on_progress:
            on_progress(done[0], total)

    return tick


def pending(snapshot: Snapshot, embedder: str) -> tuple[int, int]:
    """(documents in the snapshot, documents `build_index` would still embed with the embedder of
    this recorded name), read from the manifests alone: nothing is loaded."""
    counts = frozen.read_manifest(snapshot.path)["rows"]
    path = layout.index_dir(snapshot.archive, snapshot.id, embedder) / INFO
    done = json.loads(path.read_text(encoding="utf-8"))["months"] if path.exists() else {}
    return sum(counts.values()), sum(
        _month_rows(counts, m) for m in snapshot.months if m not in done
    )


def _month_rows(counts: dict, month: str) -> int:
    return sum(n for key, n in counts.items() if key.endswith(f"/month={month}"))


def _start_info(root: Path, snapshot: Snapshot, emb: Embedder) -> dict:
    path = root / INFO
    if path.exists():
        info = json.loads(path.read_text(encoding="utf-8"))
        if (info["snapshot"], info["embedder"], info["dims"]) != (snapshot.id, emb.name, emb.dims):
            raise ArchiveIntegrityError(f"{path} belongs to another snapshot or embedder")
        return info
    root.mkdir(parents=True, exist_ok=True)
    info = {
        "format": FORMAT,
        "snapshot": snapshot.id,
        "embedder": emb.name,
        "dims": emb.dims,
        "dtype": "float32",
        "embedder_dtype": getattr(emb, "dtype", "float32"),
        "vector_search": (
            "exact two-stage scan over time-sorted vectors (int8 first stage, float64 rescore)"
        ),
        "months": {},
    }
    save_info(root, info)
    return info


def save_info(root: Path, info: dict) -> None:
    frozen.write_text_atomic(root / INFO, json.dumps(info, indent=2, sort_keys=True) + "\n")


def month_rows(snapshot: Snapshot, month: str) -> list[dict]:
    """All rows of one month (every source) in (created_us, id) order."""
    rows = [r for f in snapshot.partition_files(month) for r in docs.read_parquet(f).to_pylist()]
    return sorted(rows, key=docs.sort_key)


def _index_month(
    root: Path,
    snapshot: Snapshot,
    month: str,
    emb: Embedder,
    chunk_rows: int,
    tick: Callable[[int], None],
) -> None:
    import numpy as np

    rows = month_rows(snapshot, month)
    texts = month_texts(rows)
    vectors = np.concatenate(
        [
            _chunk(root, month, i, texts[i : i + chunk_rows], emb, tick)
            for i in range(0, len(texts), chunk_rows)
        ]
    )
    _write_arrays(root, month, rows, vectors)
    text.write(_text_dir(root, month), text.build(texts), _save_array)
    _write_table(root, month, rows, texts, vectors)


def _text_dir(root: Path, month: str) -> Path:
    return layout.vector_chunk_dir(root, month) / "text"


def _chunks(root: Path, month: str) -> Path:
    return layout.vector_chunk_dir(root, month) / "chunks"


def month_texts(rows: list[dict]) -> list[str]:
    """What is embedded for each row of `month_rows` (same order)."""
    return [document_text(r["title"], r["text"]) for r in rows]


def chunk_path(root: Path, month: str, start: int) -> Path:
    """The resumable checkpoint file of the chunk of `month` starting at row `start`: vectors
    written here (by this process or by workers elsewhere, `save_chunk`) are reused by
    `build_index` instead of being embedded again."""
    return _chunks(root, month) / f"chunk-{start:09d}.npy"


def load_chunk(path: Path, rows: int, dims: int):
    """A checkpointed chunk's vectors, or None when absent or of another shape."""
    import numpy as np

    if not path.exists():
        return None
    vectors = np.load(path)
    return vectors if vectors.shape == (rows, dims) else None


def save_chunk(path: Path, vectors) -> None:
    """Write a chunk's float32 vectors atomically (a temporary file, then a rename)."""
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path.with_name(path.stem + ".tmp.npy"), np.ascontiguousarray(vectors, dtype=np.float32))
    path.with_name(path.stem + ".tmp.npy").replace(path)


def _chunk(root: Path, month: str, start: int, texts: list[str], emb: Embedder, tick) -> "object":
    """Vectors of one chunk: from its file when a previous run (or a worker) wrote
    it, else embedded now."""
    import numpy as np

    path = chunk_path(root, month, start)
    vectors = load_chunk(path, len(texts), emb.dims)
    if vectors is None:
        vectors = np.ascontiguousarray(emb.embed(texts), dtype=np.float32)
        save_chunk(path, vectors)
    tick(len(texts))
    return vectors


def _write_arrays(root: Path, month: str, rows: list[dict], vectors) -> None:
    import numpy as np

    folder = layout.vector_chunk_dir(root, month)
    arrays = {
        "vectors": vectors,
        "created_us": np.array([r["created_us"] for r in rows], dtype=np.int64),
        "edit_us": np.array([r["edit_us"] for r in rows], dtype=np.int64),
    }
    for name, array in arrays.items():
        _save_array(folder, name, array)
    _write_codes(folder, vectors)


def _save_array(folder: Path, name: str, array) -> None:
    """Write `name`.npy atomically (a private temporary file, then a rename)."""
    import tempfile

    import numpy as np

    with tempfile.NamedTemporaryFile(
        dir=folder, prefix=f".{name}.", suffix=".npy", delete=False
    ) as tmp:
        np.save(tmp, array)
    Path(tmp.name).replace(folder / f"{name}.npy")


def _write_codes(folder: Path, vectors) -> None:
    """The int8 codes and per-row scales of the first-stage scan (`hindcast.archive.scan`)."""
    codes, scales = scan.quantize(vectors)
    _save_array(folder, "codes", codes)
    _save_array(folder, "scales", scales)


def _write_table(root: Path, month: str, rows: list[dict], texts: list[str], vectors) -> None:
    import lancedb
    import pyarrow as pa
    from lancedb.db import LanceDBConnection
    from lancedb.index import BTree

    table = pa.Table.from_pylist(rows, docs.schema())
    table = table.append_column("search_text", pa.array(texts, pa.string()))
    flat = pa.array(vectors.reshape(-1), pa.float32())
    table = table.append_column("vector", pa.FixedSizeListArray.from_arrays(flat, vectors.shape[1]))
    db = lancedb.connect(str(layout.lance_dir(root)))
    assert isinstance(db, LanceDBConnection)  # connect() is typed as the base; a folder's is local
    db.drop_table(layout.month_table(month), ignore_missing=True)
    lance_table = db.create_table(layout.month_table(month), data=table)
    for column in ("created_us", "id", "thread_id"):
        lance_table.create_index(column, config=BTree())


ROWS_KEPT = 20_000  # document rows an index reader keeps once read (`MonthData.rows_at`)


@dataclass
class MonthData:
    """One month of an index: time-sorted vectors and filter columns, and its LanceDB table."""

    month: str
    vectors: scan.Vectors  # float32 vectors, int8 codes, scales and edit instants, in time order
    created_us: np.ndarray
    postings: text.Postings  # BM25 postings over the same time order (hindcast.archive.text)
    table: Table
    rows: pa.Table  # Arrow table of the document columns, in the same (time) order as `vectors`
    atable: AsyncTable  # the same LanceDB table, async API (queries of all months run concurrently)
    ann: ann.Ann | ann.Projected | None = (
        None  # the month's approximate index (`hindcast.archive.ann`), if built
    )
    # rows read by position, shared by every month of the reader (ROWS_KEPT in all)
    taken: dict[tuple[str, int], dict] = field(default_factory=dict)

    def rows_at(self, positions: list[int]) -> list[dict]:
        """The document rows at these positions of the month's time order, each read from
        `rows` once (searches at nearby t0s return the same documents) and kept, ROWS_KEPT at
        most over all the reader's months (then the kept ones are dropped; safe with searches
        on other threads)."""
        kept, month = self.taken, self.month
        found = {p: row for p in positions if (row := kept.get((month, p))) is not None}
        missing = sorted({p for p in positions if p not in found})
        if missing:
            read = dict(zip(missing, self.rows.take(missing).to_pylist()))
            if len(kept) + len(read) > ROWS_KEPT:
                kept.clear()
            kept.update(((month, p), row) for p, row in read.items())
            found.update(read)
        return [found[p] for p in positions]


@dataclass
class IndexReader:
    """Read access to a built index. `open_month` is the only way a month's files are opened."""

    root: Path
    info: dict
    opened: set[str] = field(default_factory=set)
    _cache: dict = field(default_factory=dict)
    _taken: dict = field(default_factory=dict)  # its months' rows read by position (rows_at)
    _db: DBConnection | None = None
    _adb: AsyncConnection | None = None
    _embedder: Embedder | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    scanner: scan.Scanner = field(
        default_factory=scan.Scanner
    )  # the scan's threads: closed with the reader

    def close(self) -> None:
        """Stop the scan's threads (the reader stays usable: a later search starts them again)."""
        self.scanner.close()

    def __enter__(self) -> IndexReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def months(self) -> tuple[str, ...]:
        return tuple(sorted(self.info["months"]))

    def embedder(self) -> Embedder:
        """The embedder the index was built with (its recorded name, re-resolved): queries and
        documents are embedded alike, or a one-line error says how to register it."""
        if self._embedder is None:
            emb = for_index(self.info["embedder"])
            if emb.dims != self.info["dims"]:
                raise ArchiveIntegrityError(
                    f"{self.root}: built with {self.info['dims']}-dim embedder "
                    f"{self.info['embedder']!r}, but it now gives {emb.dims} dims"
                )
            self._embedder = emb
        return self._embedder

    def open_month(self, month: str) -> MonthData:
        with self._lock:
            if month not in self._cache:
                self.opened.add(month)
                self._cache[month] = self._load(month)
            return self._cache[month]

    def _load(self, month: str) -> MonthData:
        import lancedb
        import numpy as np

        folder = layout.vector_chunk_dir(self.root, month)
        if not (folder / "scales.npy").exists():  # an index built before the two-stage scan
            _write_codes(folder, np.load(folder / "vectors.npy", mmap_mode="r"))
        arrays = {
            n: np.load(folder / f"{n}.npy", mmap_mode="r")
            for n in ("vectors", "created_us", "edit_us", "codes", "scales")
        }
        if self._db is None or self._adb is None:
            self._db = lancedb.connect(str(layout.lance_dir(self.root)))
            self._adb = run_async(lancedb.connect_async(str(layout.lance_dir(self.root))))
        table = self._db.open_table(layout.month_table(month))
        rows = (
            table.search()
            .select(docs.schema().names)
            .limit(max(table.count_rows(), 1))
            .to_arrow()
            .combine_chunks()
        )
        if not np.array_equal(rows.column("created_us").to_numpy(), arrays["created_us"]):
            raise ArchiveIntegrityError(
                f"{self.root}: month {month} table and vectors are not aligned; rebuild the index"
            )
        vectors = scan.Vectors(
            arrays["vectors"],
            arrays["codes"],
            arrays["scales"],
            arrays["edit_us"],
            float(arrays["scales"].max(initial=0.0)),
        )
        return MonthData(
            month,
            vectors,
            arrays["created_us"],
            _postings(self.root, month, rows),
            table,
            rows,
            run_async(self._adb.open_table(layout.month_table(month))),
            _ann(self.root, month, folder, len(arrays["created_us"]), self.info.get("ann")),
            self._taken,
        )


def _ann(
    root: Path, month: str, folder: Path, rows: int, recorded: dict | None = None
) -> ann.Ann | ann.Projected | None:
    """The month's approximate index, or None; one of another size than the month is refused.
    One that is not the build index.json records (`recorded`: a stopped rebuild) is marked
    stale: approximate search refuses it (`ann.rank`), the exact search never reads it."""
    found = ann.load_month(folder)
    if found is not None and not found.rows == found.meta["rows"] == rows:
        raise ArchiveIntegrityError(
            f"{root}: month {month} approximate index is damaged; "
            "rebuild it with `hindcast archive embed --approx`"
        )
    if found is None:
        return None
    why = ann_index.disagreement(found.meta, recorded, month)
    return (
        dataclasses.replace(found, meta=found.meta | {"stale": f"{root}: {why}"}) if why else found
    )


def _postings(root: Path, month: str, rows) -> text.Postings:
    """The month's BM25 postings; built here for an index made before them."""
    folder = _text_dir(root, month)
    if not text.exists(folder):
        texts = [
            document_text(t or "", x or "")
            for t, x in zip(rows.column("title").to_pylist(), rows.column("text").to_pylist())
        ]
        text.write(folder, text.build(texts), _save_array)
    return text.Postings.load(folder)


def run_async(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a LanceDB coroutine on LanceDB's own background loop (thread-safe; never
    call from inside it)."""
    from lancedb.background_loop import LOOP

    return LOOP.run(coroutine)


def open_index(snapshot: Snapshot, embedder: str | None = None) -> IndexReader:
    """The index of a snapshot: the one built, or the one of `embedder` when several exist
    (with none named, the snapshot's default embedder's when it is among them: the one its
    shipped vectors are of, else this CPU's, `embed.default_embedder`)."""
    parent = layout.index_parent(snapshot.archive, snapshot.id)
    built = sorted(p.parent.name for p in parent.glob(f"*/{INFO}")) if parent.is_dir() else []
    name = _index_name(embedder, built, snapshot)
    if name is None or name not in built:
        raise ArchiveIntegrityError(
            f"snapshot {snapshot.id} has no index{f' for {name}' if name else ''} "
            f"(built: {', '.join(built) or 'none'}); run `hindcast archive embed`"
        )
    info = json.loads((parent / name / INFO).read_text(encoding="utf-8"))
    _require_complete(snapshot, info)
    return IndexReader(parent / name, info)


def _index_name(embedder: str | None, built: list[str], snapshot: Snapshot) -> str | None:
    if embedder is None:
        if len(built) == 1:
            return built[0]

        default = default_embedder(snapshot)  # the shipped vectors' embedder, else this CPU's
        return default if default in built else None
    return embedder if embedder in built else get_embedder(embedder).name


def _require_complete(snapshot: Snapshot, info: dict) -> None:
    missing = [m for m in snapshot.months if m not in info["months"]]
    if missing:
        raise ArchiveIntegrityError(
            f"index of snapshot {snapshot.id} is incomplete (months {', '.join(missing)} "
            "not embedded); re-run `hindcast archive embed` to resume"
        )
