"""The one way ingest and the index are built: in this process, or — given a Ray address — with Ray
as the executor (`hindcast.archive.distributed`, the optional extra, imported only then). The
Ray path runs the same code on the same chunk boundaries, so both give the same bytes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from hindcast.archive import ann_index, distributed, index, layout, ray_embed, shipped
from hindcast.archive import ingest as ingesting
from hindcast.archive.embed import Embedder, resolve
from hindcast.archive.snapshot import Snapshot
from hindcast.errors import ConfigError


def ingest_inputs(
    paths: Sequence[Path], source: str, fmt: str, archive: Path, *, ray: str | None = None
) -> list[ingesting.IngestSummary]:
    """`ingest.ingest` (`ray` None) or the same on Ray (`hindcast.archive.distributed`) at address
    `ray` ("local": a private local Ray)."""
    if ray is None:
        return ingesting.ingest(paths, source, fmt, archive)

    return distributed.ingest(paths, source, fmt, archive, address=ray)


def build(
    snapshot: Snapshot,
    embedder: Embedder | str,
    *,
    ray: str | None = None,
    device: str = "cpu",
    chunk_rows: int = index.CHUNK_ROWS,
    on_progress: Callable[[int, int], None] | None = None,
    approx: bool = False,
    lists: int | None = None,
    partition: str | None = None,
) -> dict:
    """The index of `snapshot`: `index.build_index` (`ray` None, CPU only) or its chunks embedded on
    Ray first; then, with `approx`, the approximate index of each month
    (`hindcast.archive.ann.build`). Vectors the archive ships for this snapshot and embedder
    (`hindcast.archive.shipped`, every digest checked) are used instead of embedding."""
    if ray is None and device != "cpu":
        raise ConfigError(
            f"--device {device}: only with --ray (the single-process path embeds on the CPU)"
        )
    found = shipped.find(snapshot, resolve(embedder))
    # vectors shipped with the archive: the chunks are seeded from them, nothing is embedded
    seeded = shipped.seed(snapshot, found, chunk_rows) if found is not None else 0
    if ray is None:
        info = index.build_index(snapshot, embedder, chunk_rows=chunk_rows, on_progress=on_progress)
    else:
        info = ray_embed.embed(
            snapshot,
            embedder,
            address=ray,
            device=device,
            chunk_rows=chunk_rows,
            on_progress=on_progress,
        )
    if found is not None and seeded:
        info = shipped.record(snapshot, found, info)
    return _approximate(info, snapshot, lists, partition) if approx else info


def _approximate(info: dict, snapshot: Snapshot, lists: int | None, partition: str | None) -> dict:
    info["ann"] = ann_index.build(
        layout.index_dir(snapshot.archive, snapshot.id, info["embedder"]),
        lists=lists,
        partition=partition,
    )
    return info
