"""A driver of its own for tests/archive/test_ray_cluster.py: embeds a frozen archive on a Ray
cluster with an embedder whose worker dies, in a process apart from the test's, so that whatever
Ray does to a driver whose actor died cannot take the test process with it.

    python -m tests.archive.dying_embed ARCHIVE SNAPSHOT ADDRESS ARMED LOG MARKER

prints one JSON line: {"stopped": message} or {"months": {month: rows}}."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from hindcast.archive import ray_embed
from hindcast.archive import snapshot as snapshots
from hindcast.archive.embed import HashEmbedder
from hindcast.errors import StoppedError


class DyingEmbedder(HashEmbedder):
    """The hash embedder, which kills its own process (a worker dying) on the chunk holding `marker`
    while `armed` exists, and notes every chunk it embeds in `log` (pickled by value: defined in
    __main__)."""

    def __init__(self, armed: str, log: str, marker: str):
        super().__init__(384)
        self.armed, self.log, self.marker = armed, log, marker

    def embed(self, texts):
        if self.marker in texts and os.path.exists(self.armed):
            os._exit(1)
        with open(self.log, "a", encoding="utf-8") as out:
            out.write(texts[0] + "\n")
        return super().embed(texts)


def main(archive: str, snapshot_id: str, address: str, armed: str, log: str, marker: str) -> None:
    snap = snapshots.open_snapshot(Path(archive), snapshot_id)
    try:
        info = ray_embed.embed(
            snap, DyingEmbedder(armed, log, marker), address=address, chunk_rows=64
        )
    except StoppedError as exc:
        print(json.dumps({"stopped": str(exc)}))
        return
    print(json.dumps({"months": info["months"]}))


if __name__ == "__main__":
    main(*sys.argv[1:])
