"""Re-measure judge:model=local on the leak set's small subset (two markets, 34 rows) with the
current local engine, exactly as tests/audit/test_leakset.py judges it, and record it in
data/leakset/measured.json (as the entry's "small", saying which engine measured which figure).

    python benchmarks/leak_judge_small.py

The full sets: `python benchmarks/leak_detectors.py --judge-local --write-measured` (hours on 2 cores).
"""
import asyncio, json, sys
from pathlib import Path
sys.path.insert(0, ".")
from benchmarks.leak_detectors import SMALL_MARKETS, measure, _unreadable
from hindcast.forecasters.leaks import get_detector
from hindcast.forecasters.models import Models
from benchmarks.leak_detectors import SETS, MEASURED, load_rows, load_questions, judge_rows
folder = SETS["sample"]
rows = [r for r in load_rows(folder) if r.market_id[:10] in SMALL_MARKETS]
with Models() as models:
    detector = get_detector("judge:model=local", models)
    async def run():
        try:
            return await judge_rows(detector, rows, load_questions(folder), concurrency=2)
        finally:
            await models.aclose()
    verdicts = asyncio.run(run())
flagged = [None if v is None or _unreadable(v) else v.flagged for v in verdicts]
small = measure(rows, flagged, f"{detector.name}/small")
print(json.dumps(small, indent=1))
path = folder / MEASURED
current = json.loads(path.read_text(encoding="utf-8"))
entry = current["detectors"][detector.name]
entry["small"] = small
entry["engines"] = {"all": "llama.cpp (llama-cpp-python 0.3.36), before 2026-12-01",
                    "hand_checked": "llama.cpp (llama-cpp-python 0.3.36), before 2026-12-01",
                    "best_recall_at_precision_0.9": "llama.cpp (llama-cpp-python 0.3.36), before 2026-12-01",
                    "small": "transformers (hindcast.forecasters.local_server), 2026-12-01"}
path.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n", encoding="utf-8")
