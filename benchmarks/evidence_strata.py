"""Evidence strata (issue 30): the fixed procedure (`hindcast.audit.evidence`) against hand
labels of (market, t0) pairs of the sample's default run (README command 1).

    python benchmarks/evidence_strata.py sheet          # the labelling sheet (no procedure output)
    python benchmarks/evidence_strata.py                # precision / recall against the labels
    python benchmarks/evidence_strata.py --write-measured   # record them (data/evidence_labels)
    python benchmarks/evidence_strata.py scale --markets 10000   # computed once, at scale

`scale`: the default run's (market, t0) questions replicated with new market ids to N markets
× its cutoffs, labelled by `label_all` into a fresh SQLite run database's `analyses` table (the
batched procedure), then labelled again (every answer read back, none computed: computed once).
Each replica asks a question of its own: its text gains " (replica c)" (c ≥ 1; the first copy
is the question as it is), so every (question, t0) pair is searched and judged — the embedded
query differs, the documents before t0 and the detector are the same. `--same-questions` keeps
the texts (as benchmarks/pipeline_scale.py replicates markets: then only the default run's
distinct pairs are searched, the rest copied). `--spread-hours H` also moves copy c's t0s
c·H hours earlier, so replicas search the archive at instants of their own (other documents
before t0, nothing shared through the searches' row cache by instant) — closer to 10,000
unrelated markets. It prints both wall times, the distinct (question, t0) pairs searched, and
seconds per distinct pair.

Needs the shipped archive's index (README command 1 builds it). The (market, t0) pairs are the
default run's cutoffs (the default spec's plan). `sheet` writes, per pair, the question, t0,
the outcome and the documents the procedure retrieves before t0 — never the detector's
verdicts — so the labeller reads what the procedure reads, blind to its answer.

A pair is positive when its hand label is "present". precision = TP / predicted present,
recall = TP / labelled present, pooled over pairs; 95% market-cluster percentile bootstrap
intervals (2,000 replicates, seed 0: a market's cutoffs share its question and news). Also
the procedure's wall time over every pair of the run (no cache) and over the labelled pairs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.leak_detectors import Row, measure  # noqa: E402
from hindcast.audit import evidence  # noqa: E402
from hindcast.timeutil import iso  # noqa: E402

LABELS = ROOT / "data" / "evidence_labels"
SHEET = LABELS / "sheet.jsonl"
HAND = LABELS / "labels.jsonl"
MEASURED = LABELS / "measured.json"


def default_plan():
    """The default run's plan: the shipped market sample and archive, the sample forecasters."""
    from hindcast import replay

    spec = replay.spec_from_mapping(
        {
            "store": ROOT / "markets" / "sample",
            "archive": ROOT / "archive" / "sample",
            "forecasters": list(replay.SAMPLE_FORECASTERS),
            "subsets": list(replay.SAMPLE_SUBSETS),
        }
    )
    return replay.prepare(spec)


def questions_of(plan) -> list:
    from hindcast.replay import question_at

    return [question_at(plan.bundle, c) for c in plan.cutoffs]


def outcomes(plan) -> dict[str, float | None]:
    return {r.market_id: r.outcome for r in plan.bundle.resolutions}


def sheet(plan, out: Path = SHEET) -> int:
    """One line per (market, t0): what the procedure reads, and the outcome; no verdict."""
    from hindcast.replay import retriever_factory

    retriever_for, outcome = retriever_factory(plan.snapshot, plan.index), outcomes(plan)
    labels = {(c.market_id, c.t0): c.label for c in plan.cutoffs}
    lines = []
    for q in questions_of(plan):
        with retriever_for(q.t0) as retriever:
            docs = evidence.retrieve(retriever, q.question)
        lines.append(
            {
                "market_id": q.market_id,
                "t0": iso(q.t0),
                "cutoff": labels[(q.market_id, q.t0)],
                "question": q.question,
                "outcome": outcome.get(q.market_id),
                "queries": list(evidence.queries(q.question)),
                "docs": [[d.id, iso(d.created_at), evidence.doc_text(d)] for d in docs],
            }
        )
    out.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")
    return len(lines)


def load_hand(path: Path = HAND) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def predict(plan, pairs: set[tuple[str, str]] | None = None) -> tuple[dict, float]:
    """The procedure's stratum of each pair (all of the run's, or `pairs`), no cache; seconds."""
    from hindcast.replay import retriever_factory

    chosen = [q for q in questions_of(plan) if pairs is None or (q.market_id, iso(q.t0)) in pairs]
    started = time.perf_counter()
    labels = evidence.label_all(
        chosen,
        retriever_factory(plan.snapshot, plan.index),
        evidence.archive_identity(plan.snapshot, plan.index),
    )
    seconds = time.perf_counter() - started
    return {(m, iso(t0)): label for (m, t0), label in labels.items()}, seconds


def figures(hand: list[dict], predicted: dict[tuple[str, str], str]) -> dict:
    """Precision and recall of `predicted` ("present" | "absent") against the hand labels."""
    rows = [
        Row(f"{h['market_id']}@{h['t0']}", h["market_id"], "", h["label"] == "present", True)
        for h in hand
    ]
    flagged = [predicted[(h["market_id"], h["t0"])] == "present" for h in hand]
    return measure(rows, flagged, "evidence-strata")


def run(write: bool) -> dict:
    plan = default_plan()
    hand = load_hand()
    pairs = {(h["market_id"], h["t0"]) for h in hand}
    missing = pairs - {(c.market_id, iso(c.t0)) for c in plan.cutoffs}
    if missing:
        raise SystemExit(
            f"{HAND}: {len(missing)} labelled pairs are not cutoffs of the default run"
        )
    every, all_seconds = predict(plan)
    predicted = {k: v.stratum for k, v in every.items()}
    result = {
        "procedure": evidence.PROCEDURE,
        "run_pairs": len(every),
        "run_present": sum(v == "present" for v in predicted.values()),
        "labelled_pairs": len(hand),
        "labelled_present": sum(h["label"] == "present" for h in hand),
        "figures": figures(hand, predicted),
        "predicted": {f"{m}@{t0}": predicted[(m, t0)] for m, t0 in sorted(pairs)},
    }
    print(json.dumps(result["figures"], indent=2))
    print(
        f"{result['run_present']} of {result['run_pairs']} pairs of the default run present; "
        f"procedure over all of them, no cache: {all_seconds:.1f} s"
    )
    if write:
        MEASURED.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", "utf-8")
    return result


def scale(markets: int, work: Path, distinct: bool = True, spread_hours: float = 0.0) -> dict:
    """The default run's questions replicated to `markets` markets (`distinct`: each replica's
    question text its own; `spread_hours`: copy c's t0s c × that earlier), labelled twice into a
    fresh run database (computed, then read)."""
    import dataclasses
    import tempfile
    from datetime import timedelta

    from hindcast.replay import retriever_factory
    from hindcast.runs import RunStore

    plan = default_plan()
    base = questions_of(plan)
    per_market: dict[str, list] = {}
    for q in base:
        per_market.setdefault(q.market_id, []).append(q)
    originals = sorted(per_market)
    questions = [
        dataclasses.replace(
            q,
            market_id=f"{m}/{k}",
            question=_replica_text(q.question, k // len(originals), distinct),
            t0=q.t0 - timedelta(hours=spread_hours * (k // len(originals))),
        )
        for k in range(markets)
        for m in [originals[k % len(originals)]]
        for q in per_market[m]
    ]
    folder = Path(tempfile.mkdtemp(prefix="evidence-scale-", dir=work))
    url = f"sqlite:///{folder / 'hindcast.db'}"
    RunStore(url).close()
    identity = evidence.archive_identity(plan.snapshot, plan.index)
    retriever_for = retriever_factory(plan.snapshot, plan.index)
    timings = {}
    for name in ("first", "again"):
        cache = evidence.EvidenceCache(url)
        started = time.perf_counter()
        labels = evidence.label_all(
            questions, retriever_for, identity, cache, embedder=plan.index.embedder
        )
        timings[name] = round(time.perf_counter() - started, 1)
        cache.close()
    searched = len({(q.question, q.t0) for q in questions})
    result = {
        "markets": markets,
        "replicas_ask_their_own_question": distinct,
        "spread_hours": spread_hours,
        "distinct_t0s": len({q.t0 for q in questions}),
        "pairs": len(questions),
        "distinct_pairs_searched": searched,
        "first_s": timings["first"],
        "again_s": timings["again"],
        "s_per_distinct_pair": round(timings["first"] / searched, 3),
        "present": sum(v.stratum == "present" for v in labels.values()),
        "db_mib": round((folder / "hindcast.db").stat().st_size / 2**20, 1),
        "load_average": os.getloadavg(),
    }
    print(json.dumps(result, indent=2))
    return result


def _replica_text(question: str, copy: int, distinct: bool) -> str:
    """A copy's question: its own text from the second copy of a market on."""
    return f"{question} (replica {copy})" if distinct and copy else question


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", nargs="?", default="measure", choices=("measure", "sheet", "scale"))
    parser.add_argument("--markets", type=int, default=10_000, help="scale: markets")
    parser.add_argument("--work", type=Path, default=None, help="scale: a folder for its db")
    parser.add_argument(
        "--same-questions", action="store_true", help="scale: replicas keep the question text"
    )
    parser.add_argument(
        "--spread-hours", type=float, default=0.0, help="scale: copy c's t0s c × H hours earlier"
    )
    parser.add_argument("--write-measured", action="store_true", help=f"record in {MEASURED}")
    args = parser.parse_args()
    if args.what == "scale":
        scale(args.markets, args.work, not args.same_questions, args.spread_hours)
        return
    if args.what == "sheet":
        print(f"{sheet(default_plan())} pairs → {SHEET}")
        return
    run(args.write_measured)


if __name__ == "__main__":
    main()
