"""A run's identity: what makes a run this run — the frozen inputs and the schedule, not
paths, concurrency or budgets — and its id, the hash of that identity's canonical JSON.

Equal specs over the same frozen inputs are the same run, so re-running a spec resumes it.
The canonical form is pinned by tests: a change here re-runs every stored run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from hindcast.records import RunIdentity
from hindcast.runs import identity_form
from hindcast.timeutil import iso

if TYPE_CHECKING:
    from hindcast.replay.spec import ReplaySpec


def run_identity(
    spec: ReplaySpec, store_version: str, market_ids: list[str], snapshot_id: str | None
) -> RunIdentity:
    """What makes a run this run: the frozen inputs and the schedule, not paths or concurrency.
    How vectors are searched is recorded only off the default exact scan (so exact runs keep
    their ids), the excluded market classes only when some are."""
    approx = spec.vector_search != "exact"
    return RunIdentity(
        store_version=store_version,
        snapshot=snapshot_id,
        markets=tuple(sorted(market_ids)),
        forecasters=tuple(spec.forecasters),
        subsets=tuple(tuple(s) for s in sorted(map(list, spec.subsets))),
        fractions=tuple(spec.fractions),
        offsets=tuple(spec.offsets),
        instants=tuple(iso(t) for t in spec.at),
        hindcast_rule=spec.hindcast_rule,
        repeats=spec.repeats,
        seed=spec.seed,
        vector_search=spec.vector_search if approx else None,
        nprobe=spec.nprobe if approx else None,
        exclude=tuple(sorted(spec.exclude)) if spec.exclude else None,
    )


def run_id(identity: RunIdentity | Mapping[str, object]) -> str:
    """The hash of the identity's stored form (a RunIdentity, or a stored identity mapping)."""
    form = identity_form(identity) if isinstance(identity, RunIdentity) else dict(identity)
    text = json.dumps(form, sort_keys=True, separators=(",", ":"))
    return "r-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
