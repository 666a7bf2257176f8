"""A run's identity: what makes a run this run — the frozen inputs and the schedule, not
paths, concurrency or budgets — and its id, the hash of that identity's canonical JSON.

Equal specs over the same frozen inputs are the same run, so re-running a spec resumes it.
The canonical form is pinned by tests: a change here re-runs every stored run.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

from hindcast.timeutil import iso

if TYPE_CHECKING:
    from hindcast.replay.spec import ReplaySpec


def run_identity(
    spec: ReplaySpec, store_version: str, market_ids: list[str], snapshot_id: str | None
) -> dict:
    """What makes a run this run: the frozen inputs and the schedule, not paths or concurrency."""
    return (
        {
            "store_version": store_version,
            "snapshot": snapshot_id,
            "markets": sorted(market_ids),
            "forecasters": list(spec.forecasters),
            "subsets": sorted(map(list, spec.subsets)),
            "fractions": list(spec.fractions),
            "offsets": list(spec.offsets),
            "instants": [iso(t) for t in spec.at],
            "hindcast_rule": spec.hindcast_rule,
            "repeats": spec.repeats,
            "seed": spec.seed,
        }
        | _search_identity(spec)
        | ({"exclude": sorted(spec.exclude)} if spec.exclude else {})
    )


def _search_identity(spec: ReplaySpec) -> dict:
    """How vectors are searched, when not the default exact scan (so exact runs keep their ids)."""
    if spec.vector_search == "exact":
        return {}
    return {"vector_search": spec.vector_search, "nprobe": spec.nprobe}


def run_id(identity: dict) -> str:
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return "r-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
