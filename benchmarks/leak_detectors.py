"""Precision and recall of the outcome-leak detectors on the shipped leak set (data/leakset).

    python benchmarks/leak_detectors.py                      # lexical (model-free)
    python benchmarks/leak_detectors.py --judge-local        # + judge:model=local (slow)
    python benchmarks/leak_detectors.py --cascade-local --concurrency 1 --cache /tmp/fresh.db
        # + cascade:lexical>judge:model=local, with its per-stage cost table (a fresh cache:
        # every judge call is made and timed)
    python benchmarks/leak_detectors.py -d judge:model=openai:gpt-4.1-mini   # needs its key
    python benchmarks/leak_detectors.py --write-measured     # record the figures (<set>/measured.json)
    python benchmarks/leak_detectors.py --set heldout        # one set only (default: both)
    python benchmarks/leak_detectors.py --set v2 -d lexical -d lexical2   # data/leakset/v2

Two sets: `data/leakset` (markets of the shipped sample) and `data/leakset/heldout`
(resolved markets outside the sample, built after the model-free detector was tuned on the
first: its figures say how the detector generalises), and the second edition data/leakset/v2
(`v2-dev`, on which `lexical2` was tuned, and `v2-heldout`, evaluated once after it was frozen;
rows carry a category, counted per category in the output). Every row is judged against its market's
question as it stood at t0 (`hindcast.records.Question`; the outcome is never shown). A row is
predicted positive when the verdict is flagged (label "reveals-outcome" or "after-t0"). Positives
are the misdated outcome-stating headlines, negatives the same-topic pre-t0 headlines.

- precision = TP / flagged, recall = TP / positives, pooled over rows;
- 95% intervals: market-cluster percentile bootstrap (2,000 replicates, seed 0; markets are
  drawn with replacement, every row of a drawn market taken — rows of one market share its
  question and news, so they are not independent); a replicate with no flagged row has no
  precision and is left out of that interval;
- on every row, and on the hand-checked rows only;
- a cascade (`cascade:lexical>judge:model=local`) also gets a cost table per stage: texts
  it judged (for a judge: calls), texts it decided, seconds per judged row (its calls' summed
  latency over their number; with --concurrency > 1 calls wait on each other, so use 1 to time),
  and the cascade's wall time per row;
- a detector that fails on a row (an exception, e.g. a model outage, or a judge's answer
  that could not be read) is counted as a failure and the row is left out of both figures —
  never imputed as "neither"; the count is printed.

A judge's answers are cached in the response cache (runs/responses.db by default), so a
second run is free.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hindcast.records import Question  # noqa: E402
from hindcast.scoring.bootstrap import (  # noqa: E402
    LEVEL,
    REPLICATES,
    draw_weights,
    market_codes,
    percentile_interval,
    rng_for,
)

LEAKSET = ROOT / "data" / "leakset"
SETS = {
    "sample": LEAKSET,
    "heldout": LEAKSET / "heldout",
}  # the held-out set: markets outside the sample
# the second edition (data/leakset/v2): 51 other markets, split by news cluster into a dev part
# (the model-free detectors may be tuned on it) and a held-out part kept untouched until the
# detector under test was frozen (its sha256 is in data/leakset/v2/heldout.sha256)
SETS_V2 = {"v2-dev": LEAKSET / "v2" / "dev", "v2-heldout": LEAKSET / "v2" / "heldout"}
ALL_SETS = SETS | SETS_V2
MEASURED = "measured.json"  # in each set's folder
# a small fixed subset (two markets, 34 rows of the sample set) that a test can judge with the
# local model in about a minute: its figures are recorded too
SMALL_MARKETS = ("0x319825b4", "0xda8ebb9d")


@dataclass(frozen=True)
class Row:
    id: str
    market_id: str
    text: str
    positive: bool
    hand_checked: bool
    category: str = ""  # v2 sets: how a positive states the outcome / what a negative is


def load_rows(folder: Path = LEAKSET) -> list[Row]:
    rows = []
    for line in (folder / "leakset.jsonl").open(encoding="utf-8"):
        raw = json.loads(line)
        rows.append(
            Row(
                raw["id"],
                raw["market_id"],
                raw["text"],
                raw["label"] == "positive",
                raw["hand_checked"],
                raw.get("category", ""),
            )
        )
    return rows


def load_questions(folder: Path = LEAKSET) -> dict[str, Question]:
    """Each market of the set as it stood at its t0 (no outcome, no resolution instant)."""
    questions = {}
    for line in (folder / "markets.jsonl").open(encoding="utf-8"):
        m = json.loads(line)
        t0 = datetime.fromisoformat(m["t0"].replace("Z", "+00:00"))
        questions[m["market_id"]] = Question(
            m["market_id"], m["question"], m["description"], t0, m["url"], m["topic"]
        )
    return questions


async def judge_rows(
    detector, rows: list[Row], questions: dict[str, Question], concurrency: int = 4
) -> list:
    """The Verdict per row; None where the detector raised (a failure, counted, never imputed)."""
    gate = asyncio.Semaphore(concurrency)

    async def one(row: Row):
        async with gate:
            try:
                return await detector.judge(row.text, questions[row.market_id])
            except Exception as exc:  # noqa: BLE001 — any failure of a detector is data here
                print(f"  {row.id}: {type(exc).__name__}: {exc}", file=sys.stderr)
                return None

    return list(await asyncio.gather(*(one(r) for r in rows)))


def judge_small_locally() -> tuple[str, list[Row], list]:
    """judge:model=local on SMALL_MARKETS' rows of the sample set (34 rows): its name, the rows
    and their verdicts — what tests/leaks/test_leakset.py checks and leak_judge_small.py records."""
    from hindcast.leaks import get_detector
    from hindcast.llm.models import Models

    folder = SETS["sample"]
    rows = [r for r in load_rows(folder) if r.market_id[:10] in SMALL_MARKETS]
    with Models() as models:
        detector = get_detector("judge:model=local", models)

        async def run():
            try:
                return await judge_rows(detector, rows, load_questions(folder), concurrency=2)
            finally:
                await models.aclose()

        return detector.name, rows, asyncio.run(run())


def confusion(rows: list[Row], flagged: list[bool | None]) -> dict:
    pairs = [(r.positive, f) for r, f in zip(rows, flagged) if f is not None]
    tp = sum(p and f for p, f in pairs)
    fp = sum(f and not p for p, f in pairs)
    fn = sum(p and not f for p, f in pairs)
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": len(pairs) - tp - fp - fn,
        "failures": len(rows) - len(pairs),
    }


def measure(rows: list[Row], flagged: list[bool | None], key: str) -> dict:
    """Precision and recall (pooled) with market-cluster bootstrap intervals."""
    kept = [(r, f) for r, f in zip(rows, flagged) if f is not None]
    counts = confusion(rows, flagged)
    precision = (
        counts["tp"] / (counts["tp"] + counts["fp"]) if counts["tp"] + counts["fp"] else None
    )
    recall = counts["tp"] / (counts["tp"] + counts["fn"]) if counts["tp"] + counts["fn"] else None
    low_high = _intervals(kept, key)
    return {
        "rows": len(rows),
        "markets": len({r.market_id for r in rows}),
        **counts,
        "precision": precision,
        "recall": recall,
        **low_high,
    }


def _intervals(kept: list[tuple[Row, bool]], key: str) -> dict:
    codes, n = market_codes([r.market_id for r, _ in kept])
    tp = np.bincount(codes, weights=[float(r.positive and f) for r, f in kept], minlength=n)
    flagged = np.bincount(codes, weights=[float(f) for _, f in kept], minlength=n)
    positives = np.bincount(codes, weights=[float(r.positive) for r, _ in kept], minlength=n)
    w = draw_weights(n, REPLICATES, rng_for(0, key)).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_int = percentile_interval((w @ tp) / (w @ flagged), LEVEL)
        r_int = percentile_interval((w @ tp) / (w @ positives), LEVEL)
    return {
        "precision_ci": [p_int.low, p_int.high] if p_int else None,
        "recall_ci": [r_int.low, r_int.high] if r_int else None,
    }


def evaluate(spec: str, rows: list[Row], verdicts: list) -> dict:
    """Figures of one detector; a row whose verdict is missing (the detector raised) or
    unreadable (an LLM judge's answer that could not be read) is a failure, not a "neither"."""
    flagged = [None if v is None or _unreadable(v) else v.flagged for v in verdicts]
    checked = [i for i, r in enumerate(rows) if r.hand_checked]
    small = [i for i, r in enumerate(rows) if r.market_id[:10] in SMALL_MARKETS]
    return {
        "detector": spec,
        "all": measure(rows, flagged, f"{spec}/all"),
        "hand_checked": measure(
            [rows[i] for i in checked], [flagged[i] for i in checked], f"{spec}/hand"
        ),
        "small": measure([rows[i] for i in small], [flagged[i] for i in small], f"{spec}/small")
        if small
        else None,
        "best_recall_at_precision_0.9": best_recall(rows, verdicts, 0.9),
        **({"by_category": by_category(rows, flagged)} if any(r.category for r in rows) else {}),
    }


def by_category(rows: list[Row], flagged: list[bool | None]) -> dict[str, dict]:
    """Per category of a v2 set: rows, how many were flagged, failures (a positive category's
    flagged share is its recall, a negative category's its false-positive rate)."""
    out: dict[str, dict] = {}
    for row, flag in zip(rows, flagged):
        key = f"{'positive' if row.positive else 'negative'}:{row.category}"
        cell = out.setdefault(key, {"rows": 0, "flagged": 0, "failures": 0})
        cell["rows"] += 1
        cell["flagged"] += bool(flag)
        cell["failures"] += flag is None
    return dict(sorted(out.items()))


def _unreadable(verdict) -> bool:
    return bool(getattr(verdict, "unreadable", False))


def best_recall(rows: list[Row], verdicts: list, floor: float) -> dict | None:
    """The operating point a threshold on the verdict score could reach: the largest recall
    among thresholds (`score ≥ t` flags) whose precision is at least `floor`, on every row."""
    scored = [
        (v.score, r.positive)
        for r, v in zip(rows, verdicts)
        if v is not None and not _unreadable(v)
    ]
    positives, best = sum(p for _, p in scored), None
    for t in sorted({s for s, _ in scored}):
        tp = sum(p for s, p in scored if s >= t)
        flagged = sum(1 for s, _ in scored if s >= t)
        if flagged and tp / flagged >= floor and (best is None or tp / positives > best["recall"]):
            best = {"threshold": t, "precision": tp / flagged, "recall": tp / positives}
    return best


def _fmt(value: float | None, ci: list[float] | None) -> str:
    if value is None:
        return "—"
    return f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else f"{value:.3f}"


def table(results: list[dict]) -> str:
    head = (
        f"{'detector':<28} {'rows':<13} {'n':>4} {'TP':>4} {'FP':>4} {'FN':>4} {'fail':>4}  "
        f"{'precision [95% CI]':<24} {'recall [95% CI]':<24}"
    )
    lines = [head, "-" * len(head)]
    for res in results:
        for subset in ("all", "hand_checked"):
            m = res[subset]
            lines.append(
                f"{res['detector']:<28} {subset:<13} {m['rows']:>4} {m['tp']:>4} {m['fp']:>4} "
                f"{m['fn']:>4} {m['failures']:>4}  {_fmt(m['precision'], m['precision_ci']):<24} "
                f"{_fmt(m['recall'], m['recall_ci']):<24}"
            )
    return "\n".join(lines)


async def run_detector(
    spec: str, rows: list[Row], questions: dict[str, Question], models, concurrency: int
) -> dict:
    from hindcast.leaks import get_detector

    detector = get_detector(spec, models)
    started = time.perf_counter()
    verdicts = await judge_rows(detector, rows, questions, concurrency)
    result = evaluate(
        getattr(detector, "name", spec), rows, verdicts
    )  # a judge's name carries its template hash
    result["seconds"] = round(time.perf_counter() - started, 1)
    if hasattr(detector, "stats"):  # a cascade: what each stage cost
        result["stages"] = detector.stats
    return result


def cost_table(results: list[dict]) -> str:
    """Per stage of each cascade: texts judged, decided, seconds per judged row; and the cascade's
    wall time per row (all stages, with the run's concurrency)."""
    lines = []
    for res in (r for r in results if r.get("stages")):
        rows = res["all"]["rows"]
        lines.append(
            f"{res['detector']}: {rows} rows, wall {res['seconds']:.1f} s "
            f"({res['seconds'] / rows:.3f} s/row)"
        )
        lines.append(f"  {'stage':<34} {'judged':>7} {'decided':>8} {'s/judged row':>13}")
        for stage in res["stages"]:
            per = stage["seconds"] / stage["calls"] if stage["calls"] else 0.0
            lines.append(
                f"  {stage['stage']:<34} {stage['calls']:>7} {stage['decided']:>8} {per:>13.3f}"
            )
    return "\n".join(lines)


def make_models(specs: list[str], cache: Path):
    if not any("judge:" in s for s in specs):
        return None
    from hindcast.llm.models import Models

    return Models.from_environment(os.environ, cache)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "-d",
        "--detector",
        action="append",
        default=[],
        metavar="SPEC",
        help="a detector spec (repeatable; default: lexical)",
    )
    parser.add_argument(
        "--judge-local",
        action="store_true",
        help="also judge:model=local (the embedded model; slow)",
    )
    parser.add_argument(
        "--cascade-local",
        action="store_true",
        help="also cascade:lexical>judge:model=local (the judge only on lexical's undecided band)",
    )
    parser.add_argument(
        "--limit", type=int, help="only the first N rows (a quick look; figures not comparable)"
    )
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument(
        "--cache",
        type=Path,
        default=ROOT / "runs" / "responses.db",
        help="response cache of a judge",
    )
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument(
        "--write-measured", action="store_true", help=f"record the figures in each set's {MEASURED}"
    )
    parser.add_argument(
        "--set",
        choices=(*ALL_SETS, "both", "v2"),
        default="both",
        help="both = sample + heldout; v2 = v2-dev + v2-heldout",
    )
    args = parser.parse_args()
    specs = (
        (args.detector or ["lexical"])
        + (["judge:model=local"] if args.judge_local else [])
        + (["cascade:lexical>judge:model=local"] if args.cascade_local else [])
    )
    names = {"both": tuple(SETS), "v2": tuple(SETS_V2)}.get(args.set, (args.set,))
    payload = {
        "bootstrap": {"replicates": REPLICATES, "level": LEVEL, "seed": 0, "unit": "market"},
        "sets": asyncio.run(run_sets(names, specs, args)),
    }
    if args.write_measured:
        for name, results in payload["sets"].items():
            record(results, ALL_SETS[name])
    if args.json:
        args.json.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")


async def run_sets(names: tuple[str, ...], specs: list[str], args) -> dict[str, list[dict]]:
    """Every set judged in one event loop (a judge's HTTP clients live in it); the models
    (and the local model's server) closed at the end."""
    models = make_models(specs, args.cache)
    try:
        return {name: await run_set(name, specs, models, args) for name in names}
    finally:
        if models is not None:
            await models.aclose()


async def run_set(name: str, specs: list[str], models, args) -> list[dict]:
    folder = ALL_SETS[name]
    rows, questions = load_rows(folder)[: args.limit or None], load_questions(folder)
    results = [await run_detector(s, rows, questions, models, args.concurrency) for s in specs]
    print(
        f"\n{name} set ({folder.relative_to(ROOT)}): {len(rows)} rows, "
        f"{sum(r.positive for r in rows)} positives, {sum(r.hand_checked for r in rows)} "
        f"hand-checked, {len({r.market_id for r in rows})} markets"
    )
    print(table(results))
    if any(r.get("stages") for r in results):
        print(cost_table(results))
    for res in results:
        best = res["best_recall_at_precision_0.9"]
        print(
            f"{res['detector']}: best recall at precision ≥ 0.9 over score thresholds: "
            + (
                f"{best['recall']:.3f} (threshold {best['threshold']:.3f}, precision "
                f"{best['precision']:.3f})"
                if best
                else "none (no threshold reaches precision 0.9)"
            )
        )
    return results


def record(results: list[dict], folder: Path) -> None:
    """Merge the figures into the set's measured.json, one entry per detector spec."""
    path = folder / MEASURED
    current = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"detectors": {}}
    for res in results:
        keep = ("all", "hand_checked", "small", "best_recall_at_precision_0.9", "by_category")
        current["detectors"][res["detector"]] = {k: res[k] for k in keep if k in res}
    path.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
