"""Small real archives for the forecaster tests: a frozen snapshot, its LanceDB index (hash
embedder), and a TimeBoundRetriever / Context bound to a t0 — the real harness, no stand-ins.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from hindcast.forecasters.base import Context
from tests.helpers import SAMPLE_ARCHIVE, sample_headlines


def write_headlines(path: Path, docs: list[tuple[str, datetime, str]]) -> Path:
    """(id, created_at, title) rows in the `headlines` input format."""
    rows = [
        {
            "id": i,
            "created_utc": int(t.timestamp()),
            "title": title,
            "source": "test",
            "kind": "news_headline",
        }
        for i, t, title in docs
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def real_headlines(
    folder: Path, months: list[str], words: tuple[str, ...], per_month: int = 120
) -> list[Path]:
    """Real shipped headlines (archive/sample) of some months, as `headlines` inputs: the
    first `per_month` of each month plus every one naming a word."""
    out = []
    for month, rows in sorted(sample_headlines(months).items()):
        keep = [
            r
            for n, r in enumerate(rows)
            if n < per_month or any(w in r["title"].lower() for w in words)
        ]
        out.append(folder / f"news_{month}.jsonl")
        out[-1].write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in keep), encoding="utf-8"
        )
    return out


def build_archive(folder: Path, inputs: list[Path]):
    """Freeze `inputs` as a snapshot and index it with the hash embedder; return the Snapshot."""
    from hindcast.archive.embed import HashEmbedder
    from hindcast.archive.index import build_index
    from hindcast.archive.snapshot import build_snapshot, open_snapshot

    snapshot = open_snapshot(folder, build_snapshot(inputs, "headlines", "headlines", folder))
    build_index(snapshot, HashEmbedder())
    return snapshot


def shipped_snapshot():
    """The shipped sample snapshot if its index has been built, else None."""
    from hindcast.archive.index import open_index
    from hindcast.archive.snapshot import open_snapshot
    from hindcast.errors import ArchiveIntegrityError

    try:
        snapshot = open_snapshot(SAMPLE_ARCHIVE)
        open_index(snapshot)
    except (ArchiveIntegrityError, OSError):
        return None
    return snapshot


def context_at(snapshot, t0: datetime, market_id: str = "m", history=(), resolutions=()) -> Context:
    """The Context the harness builds: a TimeBoundRetriever of `snapshot` bound to t0."""
    from hindcast.archive.retriever import TimeBoundRetriever

    return Context(t0, market_id, history, resolutions, TimeBoundRetriever(snapshot, t0))


FED_T0_TEXT = "2025-11-01T00:00:00"
FED_DOCS = [  # (id, created_at ISO, title): three visible at t0, the rest at or after it
    ("fed-sep", "2025-09-17T18:00:00", "Fed cuts rates by a quarter point, signals more cuts"),
    (
        "fed-oct",
        "2025-10-29T18:30:00",
        "Powell says a December rate cut is not a foregone conclusion",
    ),
    ("oil-oct", "2025-10-10T09:00:00", "Oil prices fall on supply glut"),
    ("fed-at-t0", "2025-11-01T00:00:00", "Fed December rate cut leaked exactly at t0"),
    ("fed-nov", "2025-11-15T12:00:00", "Fed December cut odds soar after jobs report"),
    ("fed-dec", "2025-12-10T19:00:00", "Fed cuts rates in December"),
]
FED_BEFORE_T0 = {"fed-sep", "fed-oct", "oil-oct"}


def fed_archive(folder: Path):
    """A tiny real snapshot + hash index of FED_DOCS."""
    from tests.helpers import at

    docs = [(i, at(t), title) for i, t, title in FED_DOCS]
    return build_archive(folder / "archive", [write_headlines(folder / "fed.jsonl", docs)])


_BUILT: dict = {}


def shared_fed_archive(tmp_path_factory):
    """fed_archive built once per test session (pass pytest's tmp_path_factory)."""
    if "fed" not in _BUILT:
        _BUILT["fed"] = fed_archive(tmp_path_factory.mktemp("fed-archive"))
    return _BUILT["fed"]
