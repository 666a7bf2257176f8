"""Retrieval policies compared on matched rows (issue 16, item 4).

The `policy` slice of the leaderboard (`aggregate.SLICES`) groups forecasters by their
retrieval policy; each group's Brier is over its own rows. This Finding compares a policy
VARIANT with its TWIN under `pit` on the same rows: for every document-reading forecaster
whose spec sets `policy=none` or `policy=pit+filter` (`aggregate.retrieval_policy`), its twin
is the same spec with `policy` and `detector` removed (or `policy=pit`), the other parameters
equal (in any order, `k=5` equal to `k=5.0`; a name qualified by its run, `spec@run`, pairs
within that run). On the (market, t0, repeat) rows where both have a valid probability: each
one's Brier, the difference variant − pit (negative: the variant scored better) and its
market-clustered 95% bootstrap interval (none under `vs_market.MIN_MARKETS` markets).

A lower Brier under `pit+filter` than under `pit` is what withheld leaks would produce; a
`none` (closed book) row measures what the documents add. Failures (probability None) are
counted (`n_failed`), never imputed, and a matched row needs a valid probability on both sides.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np

from hindcast.scoring import Finding, ScoredRow, bootstrap, retrieval_policy, vs_market
from hindcast.specs import run_qualified, split_spec

TITLE = "Retrieval policies: each variant against the same forecaster under pit, on matched rows"
COLUMNS = (
    "forecaster",
    "policy",
    "twin",
    "n_rows",
    "n_failed",
    "n_paired",
    "n_markets_paired",
    "brier_paired",
    "twin_brier_paired",
    "brier_diff",
    "diff_ci_low",
    "diff_ci_high",
)
VARIANTS = ("none", "pit+filter")
DROPPED = ("policy", "detector")
POLICY = {"policy_pairs": "variant-vs-same-spec-under-pit-matched-on-market-t0-repeat"}
NOTES = (
    (
        "twin: the same spec under pit (policy and detector removed); paired on (market, t0, "
        "repeat) rows where both have a valid probability: brier_diff = variant − pit (negative: "
        "the variant scored better), market-clustered 95% bootstrap interval; failures counted "
        "(n_failed), never imputed"
    ),
)


def twin_key(spec: str) -> tuple | None:
    """(name, parameters other than policy and detector, run) — equal for a variant and its twin."""
    head, run = run_qualified(spec)
    parsed = split_spec(head)
    if parsed is None:
        return None
    name, params = parsed
    return name, frozenset((k, v) for k, v in params.items() if k not in DROPPED), run


def pairs(names: Iterable[str]) -> list[tuple[str, str | None]]:
    """(variant, its pit twin or None) for every variant among `names`, sorted."""
    names = sorted(set(names))
    pit = {twin_key(n): n for n in names if retrieval_policy(n) == "pit"}
    variants = [n for n in names if retrieval_policy(n) in VARIANTS]
    return [(n, pit.get(twin_key(n))) for n in variants]


def compare(variant: Sequence[ScoredRow], twin: Sequence[ScoredRow], replicates: int, rng) -> tuple:
    """(n_paired, n_markets, brier, twin_brier, difference, ci_low, ci_high)
    on matched valid rows."""
    mine, theirs = _valid(variant), _valid(twin)
    keys = sorted(mine.keys() & theirs.keys())
    if not keys:
        return (0, 0, None, None, None, None, None)
    a = np.array([mine[k].brier for k in keys])
    b = np.array([theirs[k].brier for k in keys])
    codes, n = bootstrap.market_codes([k[0] for k in keys])
    ci = None
    if not vs_market.too_few(n):
        weights = bootstrap.draw_weights(n, replicates, rng)
        ci = bootstrap.percentile_interval(bootstrap.replicate_means(weights, codes, a - b))
    return (
        len(keys),
        n,
        float(a.mean()),
        float(b.mean()),
        float((a - b).mean()),
        ci and ci.low,
        ci and ci.high,
    )


def _valid(rows: Sequence[ScoredRow]) -> dict[tuple, ScoredRow]:
    return {(r.market_id, r.t0, r.repeat): r for r in rows if r.probability is not None}


def policy_pairs(
    rows: Iterable[ScoredRow], replicates: int = bootstrap.REPLICATES, seed: int = 0
) -> Finding:
    """The "policies" Finding: one row per policy variant (twin None: no pit twin in the rows)."""
    by_name: dict[str, list[ScoredRow]] = defaultdict(list)
    for r in rows:
        by_name[r.forecaster].append(r)
    found = pairs(by_name)
    if not found:
        return Finding(
            "policies", TITLE, COLUMNS, (), (*NOTES, "no forecaster with policy=none or pit+filter")
        )
    body, notes = [], list(NOTES)
    for name, twin in found:
        own = by_name[name]
        failed = sum(1 for r in own if r.probability is None)
        versus = (
            compare(
                own, by_name[twin], replicates, bootstrap.rng_for(seed, f"policies|{name}|{twin}")
            )
            if twin
            else (None,) * 7
        )
        body.append((name, retrieval_policy(name), twin, len(own), failed, *versus))
        notes += _notes(name, twin, versus)
    return Finding("policies", TITLE, COLUMNS, tuple(body), tuple(notes))


def _notes(name: str, twin: str | None, versus: tuple) -> list[str]:
    if twin is None:
        return [
            f"{name}: no twin under pit (the same spec without policy) in these rows, no "
            "paired comparison"
        ]
    if not versus[0]:
        return [f"{name} vs {twin}: no matched row with a valid probability on both sides"]
    if vs_market.too_few(versus[1]):
        return [
            f"{name} vs {twin}: n too small: {versus[1]} market(s) (< "
            f"{vs_market.MIN_MARKETS}), no interval"
        ]
    return []
