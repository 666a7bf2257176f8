"""A folder of arrays written whole: staged beside its place, then renamed into it, so a reader
sees the old folder or the new one, never a mix (the approximate indexes' months, the fixed
codebook and projection)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np


def write_whole(target: Path, arrays: dict[str, np.ndarray], meta: dict) -> None:
    """`arrays` (file name → array) and meta.json into `target`, replacing what was there."""
    staging = target.with_name(f".{target.name}-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for name, array in arrays.items():
        np.save(staging / name, array)
    (staging / "meta.json").write_text(
        json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    if target.exists():
        old = target.with_name(f".old-{target.name}-{os.getpid()}")
        target.rename(old)
        shutil.rmtree(old)
    staging.rename(target)


def reference(vectors: np.ndarray | None) -> dict[str, np.ndarray]:
    """The reference vectors a fixed partition keeps for its recall, as float32 (none: {})."""
    if vectors is None:
        return {}
    return {"reference.npy": np.ascontiguousarray(vectors, dtype=np.float32)}
