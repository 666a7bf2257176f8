"""The stored (JSON) forms of a run's records, made and read here only: a run's identity (whose
hash is its id), its manifest, and a forecast's retrieval log. Each `*_of` reads what `*_form`
wrote (and what older releases wrote) back into the record; `*_form(*_of(x)) == x` for every
stored form this package writes, so stored rows and exports are byte-identical."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hindcast.records import ArchiveRef, MarketStoreRef, Retrieval, RunIdentity, RunManifest

# the keys every identity carries, in their stored order (RunIdentity's required fields)
_IDENTITY_KEYS = (
    "store_version",
    "snapshot",
    "markets",
    "forecasters",
    "subsets",
    "fractions",
    "offsets",
    "instants",
    "hindcast_rule",
    "repeats",
    "seed",
)
_MANIFEST_FIELDS = (
    "identity",
    "forecasters",
    "market_store",
    "archive",
    "scoring_policies",
    "git_revision",
    "python",
    "packages",
)


def identity_form(identity: RunIdentity) -> dict[str, object]:
    """The stored (and hashed) form of a run identity."""
    out: dict[str, object] = {
        "store_version": identity.store_version,
        "snapshot": identity.snapshot,
        "markets": list(identity.markets),
        "forecasters": list(identity.forecasters),
        "subsets": [list(s) for s in identity.subsets],
        "fractions": list(identity.fractions),
        "offsets": list(identity.offsets),
        "instants": list(identity.instants),
        "hindcast_rule": identity.hindcast_rule,
        "repeats": identity.repeats,
        "seed": identity.seed,
    }
    out = {k: v for k, v in out.items() if k not in identity.absent}
    if identity.vector_search is not None:
        out |= {"vector_search": identity.vector_search, "nprobe": identity.nprobe}
    if identity.exclude is not None:
        out["exclude"] = list(identity.exclude)
    if identity.question_text_uncertain is not None:
        out["question_text_uncertain"] = [dict(m) for m in identity.question_text_uncertain]
    if identity.index is not None:
        out["index"] = dict(identity.index)
    if identity.inspect_eval is not None:
        out["inspect_eval"] = identity.inspect_eval
    return {**out, **identity.extra}


def identity_of(stored: Mapping[str, Any]) -> RunIdentity:
    """The record of a stored identity; a key an older (or the live) layout lacks is named in
    `absent` and not written back, a key of no field is kept in `extra`."""
    given = dict(stored)
    absent = frozenset(k for k in _IDENTITY_KEYS if k not in given)
    exclude = given.pop("exclude", None)
    uncertain = given.pop("question_text_uncertain", None)
    return RunIdentity(
        store_version=given.pop("store_version", ""),
        snapshot=given.pop("snapshot", None),
        markets=tuple(given.pop("markets", ())),
        forecasters=tuple(given.pop("forecasters", ())),
        subsets=tuple(tuple(s) for s in given.pop("subsets", ())),
        fractions=tuple(given.pop("fractions", ())),
        offsets=tuple(given.pop("offsets", ())),
        instants=tuple(given.pop("instants", ())),
        hindcast_rule=given.pop("hindcast_rule", False),
        repeats=given.pop("repeats", 0),
        seed=given.pop("seed", 0),
        vector_search=given.pop("vector_search", None),
        nprobe=given.pop("nprobe", None),
        exclude=None if exclude is None else tuple(exclude),
        question_text_uncertain=None if uncertain is None else tuple(uncertain),
        index=given.pop("index", None),
        inspect_eval=given.pop("inspect_eval", None),
        extra=given,
        absent=absent,
    )


def manifest_form(manifest: RunManifest) -> dict[str, object]:
    """The stored form of a run manifest (JSON-ready): version 1 without a version key."""
    store = manifest.market_store
    archive = manifest.archive
    out: dict[str, object] = {
        "identity": identity_form(manifest.identity),
        "forecasters": manifest.forecasters,
        "market_store": {} if store is None else {"version": store.version, "root": store.root},
        "archive": None
        if archive is None
        else {"snapshot": archive.snapshot, "root": archive.root},
        "scoring_policies": manifest.scoring_policies,
        "git_revision": manifest.git_revision,
        "python": manifest.python,
        "packages": manifest.packages,
    }
    out = out if manifest.version == 1 else {**out, "manifest_version": manifest.version}
    return {**out, **manifest.extra}


def manifest_of(stored: Mapping[str, Any]) -> RunManifest:
    """The record of a stored manifest; a field an older layout lacks reads as empty (a market
    store or archive recorded without both its keys as None)."""
    given = dict(stored)
    version = given.pop("manifest_version", 1)
    named = {name: given.pop(name) for name in _MANIFEST_FIELDS if name in given}
    store = named.get("market_store") or {}
    archive = named.get("archive") or {}
    return RunManifest(
        identity=identity_of(named.get("identity") or {}),
        forecasters=named.get("forecasters") or {},
        market_store=_store_ref(store),
        archive=_archive_ref(archive),
        scoring_policies=named.get("scoring_policies") or {},
        git_revision=named.get("git_revision"),
        python=named.get("python") or "",
        packages=named.get("packages") or {},
        version=version,
        extra=given,
    )


def _store_ref(stored: object) -> MarketStoreRef | None:
    if not isinstance(stored, Mapping):
        return None
    version, root = stored.get("version"), stored.get("root")
    return None if version is None or root is None else MarketStoreRef(str(version), str(root))


def _archive_ref(stored: object) -> ArchiveRef | None:
    if not isinstance(stored, Mapping) or (root := stored.get("root")) is None:
        return None
    snapshot = stored.get("snapshot")
    return ArchiveRef(None if snapshot is None else str(snapshot), str(root))


def retrieval_form(entry: Retrieval) -> dict[str, object]:
    """The stored form of one retrieval-log entry: its detail, its op and the ids it returned."""
    return {**entry.detail, "op": entry.op, "ids": list(entry.ids)}


def retrieval_of(stored: Mapping[str, Any]) -> Retrieval:
    """The record of a stored retrieval-log entry (an entry without ids returned none)."""
    given = dict(stored)
    op = str(given.pop("op", ""))
    return Retrieval(op, tuple(str(i) for i in given.pop("ids", None) or ()), given)


def retrievals_form(entries: Iterable[Retrieval]) -> list[dict[str, object]]:
    return [retrieval_form(e) for e in entries]


def retrievals_of(stored: Iterable[Mapping[str, Any]]) -> tuple[Retrieval, ...]:
    return tuple(retrieval_of(e) for e in stored)
