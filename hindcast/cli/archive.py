"""`hindcast archive …`: ingest, freeze, verify, embed, search. Parses,
calls the library, prints."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from typer.core import TyperCommand

from hindcast import api
from hindcast import archive as archives
from hindcast.cli.common import EXIT_USAGE, fail, verbosity
from hindcast.cli.console import err_console
from hindcast.errors import ArchiveIntegrityError
from hindcast.timeutil import iso, parse_utc

if TYPE_CHECKING:
    from typer._click.core import Context

app = typer.Typer(
    help="The frozen document archive and its time-bounded retriever.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

ARCHIVE = typer.Option(Path("archive"), "--archive", help="Archive directory.")
_ADDRESS = re.compile(
    r"^(auto|local|(ray://)?[A-Za-z0-9_.\-]+:\d{1,5}|(ray://)?\[[0-9A-Fa-f:]+\]:\d{1,5})$"
)
RAY = typer.Option(
    None,
    "--ray",
    metavar="[ADDRESS]",
    help=(
        "Run on Ray (the optional extra: pip install 'hindcast-replay[ray]'): --ray alone starts "
        "a private local Ray; --ray auto | HOST:PORT | ray://HOST:PORT joins a cluster. Same "
        "files, same bytes as without it."
    ),
)


class RayCommand(TyperCommand):
    """`--ray` takes an optional ADDRESS: without one (the next word is no address)
    it means `--ray=local`."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        words = list(args)
        for i, word in enumerate(words):
            if word == "--":
                break
            if word == "--ray" and not (i + 1 < len(words) and _ADDRESS.match(words[i + 1])):
                words[i] = "--ray=local"
        return super().parse_args(ctx, words)


def _ray(address: Optional[str]) -> Optional[str]:
    """The checked --ray address (None: not on Ray)."""

    if address is None:
        return None
    if not _ADDRESS.match(address):
        raise fail(f"--ray {address!r}: use auto, local, HOST:PORT or ray://HOST:PORT", EXIT_USAGE)
    return address


@app.command(cls=RayCommand)
def ingest(
    paths: list[Path] = typer.Argument(
        ..., help="Input files (RS_/RC_ .zst dumps, news JSONL/Parquet, headlines JSONL)."
    ),
    source: str = typer.Option(..., "--source", help="Source name: the partition key source=NAME."),
    fmt: str = typer.Option(..., "--format", help="pushshift | news | headlines"),
    archive: Path = ARCHIVE,
    snapshot: Optional[str] = typer.Option(
        None,
        "--snapshot",
        help="Refused: frozen snapshots are never written to [default: the draft].",
    ),
    ray: Optional[str] = RAY,
) -> None:
    """Ingest inputs into the archive draft (Parquet by creation month); malformed
    rows go to a rejects file.

    All or nothing: every input is read in full before anything is written, so an input that
    cannot be read (truncated, corrupt, missing) changes nothing. Inputs are identified by
    their content, so two files with the same name are two inputs. With --ray, one Ray task reads
    each input (inputs and archive on a filesystem every Ray node sees at the same path)."""

    try:
        archives.check_source(source)
    except ValueError as exc:
        raise fail(f"--source: {exc}", EXIT_USAGE) from None
    if fmt not in archives.FORMATS:
        raise fail(f"--format {fmt!r}: use {', '.join(archives.FORMATS)}", EXIT_USAGE)
    for summary in api.ingest(paths, source, fmt, archive, snapshot=snapshot, ray=_ray(ray)):
        rejects = f" → {summary.rejects_path}" if summary.rejects_path else ""
        print(
            f"{summary.input}: {summary.read} rows, {summary.written} written, "
            f"{summary.rejected} rejected{rejects}"
        )


@app.command()
def freeze(archive: Path = ARCHIVE) -> None:
    """Freeze the draft as an immutable, content-addressed snapshot; print its id."""

    print(api.freeze(archive))


@app.command()
def verify(
    archive: Path = ARCHIVE,
    snapshot: Optional[str] = typer.Option(
        None, "--snapshot", help="Snapshot id [default: LATEST]."
    ),
) -> None:
    """Check every file of a snapshot against its manifest (exit 1 on any difference)."""

    snapshot_id = snapshot or archives.latest(archive)
    problems = archives.verify_snapshot(archive, snapshot_id)
    if problems:
        raise ArchiveIntegrityError(
            f"snapshot {snapshot_id} fails verification: " + "; ".join(problems)
        )
    print(f"ok: snapshot {snapshot_id} matches its manifest")


@app.command(cls=RayCommand)
def embed(
    archive: Path = ARCHIVE,
    snapshot: Optional[str] = typer.Option(
        None, "--snapshot", help="Snapshot id [default: LATEST]."
    ),
    embedder: str = typer.Option(
        "minilm",
        "--embedder",
        help="minilm (all-MiniLM-L6-v2, bf16) | minilm-fp32 | hash (tests) | any registered name",
    ),
    chunk_rows: int = typer.Option(
        2048, "--chunk-rows", min=1, help="Documents embedded between resumable checkpoints."
    ),
    ray: Optional[str] = RAY,
    device: str = typer.Option(
        "cpu",
        "--device",
        help="cpu | cuda: where the Ray embedders run (cuda: one GPU an embedder, needs --ray; "
        "GPU arithmetic is not the CPU's, so its vectors are not byte-identical to a CPU "
        "build).",
    ),
    approx: bool = typer.Option(
        False,
        "--approx",
        help="Also build the approximate index of every month, for --vector-search approx.",
    ),
    lists: Optional[int] = typer.Option(
        None,
        "--lists",
        min=1,
        help="IVF lists (the fixed codebook's) with --approx --partition codebook [default: 1024].",
    ),
    partition: Optional[str] = typer.Option(
        None,
        "--partition",
        help="projection (the default: rows whose fixed 128-d projection scores high enough, "
        "rescored exactly) | codebook (IVF lists of a fixed codebook), with --approx; "
        "docs/performance.md.",
    ),
) -> None:
    """Embed a snapshot and build its LanceDB tables (resumable: re-run to continue).

    With --ray, an actor pool of embedders on Ray Data embeds the same chunks; the index is
    byte-identical to the one built without it."""
    from rich.progress import Progress

    try:
        archives.get_embedder(embedder)
    except ValueError as exc:
        raise fail(f"--embedder: {exc}", EXIT_USAGE) from None
    if device not in ("cpu", "cuda") or (device == "cuda" and ray is None):
        raise fail(f"--device {device!r}: use cpu, or cuda with --ray", EXIT_USAGE)
    if lists is not None and not approx:
        raise fail("--lists: only with --approx", EXIT_USAGE)
    if partition not in (None, "codebook", "projection"):
        raise fail(f"--partition {partition!r}: use projection or codebook", EXIT_USAGE)
    if partition is not None and not approx:
        raise fail("--partition: only with --approx", EXIT_USAGE)
    if lists is not None and partition != "codebook":
        raise fail("--lists: only with --partition codebook", EXIT_USAGE)
    address = _ray(ray)
    snap = archives.open_snapshot(archive, snapshot)
    with Progress(console=err_console(), transient=True, disable=verbosity() < 0) as progress:
        task = progress.add_task(f"embedding {snap.id}", total=None)
        info = api.embed(
            archive,
            snap.id,
            embedder,
            chunk_rows=chunk_rows,
            ray=address,
            device=device,
            approx=approx,
            lists=lists,
            partition=partition,
            on_progress=lambda done, total: progress.update(task, completed=done, total=total),
        )
    print(
        f"indexed snapshot {snap.id}: {info['documents']} documents, "
        f"{info['embedder']}{_recall(info)}"
    )


def _recall(info: dict) -> str:
    ann = info.get("ann")
    if not ann:
        return ""
    where = (
        f"at threshold {ann['threshold']:g} (fixed projection {ann.get('projection')}"
        if ann.get("partition") == "projection"
        else f"at nprobe {ann['nprobe']} (fixed codebook {ann.get('codebook')}"
    )
    return (
        f"; approximate index: recall@10 {ann['recall@10']:.3f} {where}, measured on its "
        "reference corpus, not on this archive)"
    )


@app.command()
def search(
    query: str = typer.Option(
        ..., "--query", help="What to search for (words; vector and full-text)."
    ),
    t0: str = typer.Option(
        ..., "--t0", help="ISO-8601 instant with a zone; only documents created before it."
    ),
    archive: Path = ARCHIVE,
    snapshot: Optional[str] = typer.Option(
        None, "--snapshot", help="Snapshot id [default: LATEST]."
    ),
    k: int = typer.Option(10, "--k", min=1, help="How many documents."),
    mode: str = typer.Option("hybrid", "--mode", help="vector | text | hybrid"),
    vector_search: str = typer.Option(
        "exact",
        "--vector-search",
        help="exact (provably exact scan) | approx (closed months through their approximate "
        "index; `archive embed --approx`).",
    ),
    nprobe: Optional[int] = typer.Option(
        None,
        "--nprobe",
        min=1,
        help="IVF lists probed per closed month with approx [default: the index's].",
    ),
    ray: Optional[str] = RAY,
    as_json: bool = typer.Option(False, "--json", help="Print JSON lines."),
) -> None:
    """Search a snapshot as it stood before t0 (with --ray: its months as shards on a Ray
    cluster, the same hits)."""

    if not query.strip():
        raise fail("--query: empty; give the words to search for", EXIT_USAGE)
    if vector_search not in ("exact", "approx"):
        raise fail(f"--vector-search {vector_search!r}: use exact or approx", EXIT_USAGE)
    if nprobe is not None and vector_search != "approx":
        raise fail("--nprobe: only with --vector-search approx", EXIT_USAGE)
    hits = api.search(
        archive,
        query,
        _instant(t0, parse_utc),
        snapshot=snapshot,
        k=k,
        mode=mode,
        vector_search=vector_search,
        nprobe=nprobe,
        ray=_ray(ray),
    )
    for hit in hits:
        row = {
            "id": hit.doc.id,
            "source": hit.doc.source,
            "created_at": iso(hit.doc.created_at),
            "score": round(hit.score, 6),
            "title": hit.doc.title or hit.doc.text[:120],
        }
        print(
            json.dumps(row, ensure_ascii=False)
            if as_json
            else "\t".join(str(v) for v in row.values())
        )


def _instant(text: str, parse: Callable[[str], datetime]) -> datetime:

    try:
        return parse(text)
    except ValueError as exc:
        raise fail(f"--t0 {text!r}: {exc}")
