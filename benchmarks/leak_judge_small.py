"""Re-measure judge:model=local on the leak set's small subset (two markets, 34 rows) with the
current local engine, exactly as tests/leaks/test_leakset.py judges it, and record it in
data/leakset/measured.json (as the entry's "small", saying which engine measured which figure).

    python benchmarks/leak_judge_small.py

The full sets: `python benchmarks/leak_detectors.py --judge-local
--write-measured` (hours on 2 cores).
"""

import json
import sys

sys.path.insert(0, ".")
from benchmarks.leak_detectors import MEASURED, SETS, _unreadable, judge_small_locally, measure

name, rows, verdicts = judge_small_locally()
folder = SETS["sample"]
flagged = [None if v is None or _unreadable(v) else v.flagged for v in verdicts]
small = measure(rows, flagged, f"{name}/small")
print(json.dumps(small, indent=1))
path = folder / MEASURED
current = json.loads(path.read_text(encoding="utf-8"))
entry = current["detectors"][name]
entry["small"] = small
entry["engines"] = {
    "all": "llama.cpp (llama-cpp-python 0.3.36), before 2026-12-01",
    "hand_checked": "llama.cpp (llama-cpp-python 0.3.36), before 2026-12-01",
    "best_recall_at_precision_0.9": "llama.cpp (llama-cpp-python 0.3.36), before 2026-12-01",
    "small": "transformers (hindcast.llm.local_server), 2026-12-01",
}
path.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n", encoding="utf-8")
