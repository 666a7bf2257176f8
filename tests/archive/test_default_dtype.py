"""The default embedder's precision follows the CPU in front of it: bf16 autocast only where the
CPU computes bf16 natively (AVX512_BF16 or AMX), fp32 elsewhere — an AVX2-only CPU is emulated
here by limiting torch's and oneDNN's kernels to AVX2. An index records what it was built with
and a process on the other kind of CPU searches it with that, finding the same documents."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from hindcast.archive.embed import get_embedder, native_bf16
from hindcast.archive.index import build_index, open_index
from hindcast.archive.retriever import TimeBoundRetriever
from hindcast.archive.snapshot import build_snapshot, open_snapshot
from tests.helpers import ROOT

pytestmark = pytest.mark.cpu_default

AVX2_ONLY = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
}
T0 = datetime(2025, 3, 28, tzinfo=timezone.utc)
TITLES = [
    "Fed cuts interest rates again",
    "Central bank holds rates steady",
    "Volcano erupts in Iceland",
    "Election polls tighten in Ohio",
    "Interest rate futures rally",
    "Inflation cools, rate cut odds rise",
]
PROBE = """
import json, sys
from pathlib import Path
from hindcast.archive.embed import DEFAULT, get_embedder, native_bf16
out = {"native_bf16": native_bf16(), "default": get_embedder(DEFAULT).name}
if len(sys.argv) > 1:
    from datetime import datetime
    from hindcast.archive.retriever import TimeBoundRetriever
    from hindcast.archive.snapshot import open_snapshot
    with TimeBoundRetriever(open_snapshot(Path(sys.argv[1])), datetime.fromisoformat(sys.argv[2])) as bound:
        out["hits"] = [h.doc.id for h in bound.search(sys.argv[3], k=3, mode="vector")]
print(json.dumps(out))
"""


def probe(env: dict, *args: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **env},
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def cpu_has_native_bf16() -> bool:
    """Read independently of the code under test: the CPU's own flags (Linux), and whether torch
    runs its kernels above AVX2 here (ATEN_CPU_CAPABILITY, as .ci/run's AVX2 emulation sets it,
    lowers them: then bf16 is emulated whatever the CPU has)."""
    import torch

    flags = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
    above_avx2 = torch.backends.cpu.get_cpu_capability() not in ("DEFAULT", "AVX2", "NO AVX")
    return above_avx2 and re.search(r"\b(avx512_bf16|amx_bf16)\b", flags) is not None


def test_an_avx2_only_cpu_gets_fp32():
    assert probe(AVX2_ONLY) == {"native_bf16": False, "default": "all-MiniLM-L6-v2"}


@pytest.mark.skipif(
    not Path("/proc/cpuinfo").exists(), reason="reads the CPU flags from /proc/cpuinfo"
)
def test_this_cpu_gets_bf16_exactly_when_it_has_it_natively():
    """The rule on the CPU in front of the test (its flags, as torch runs on it), not one
    machine's outcome: bf16 where native, fp32 elsewhere."""
    expected = "all-MiniLM-L6-v2-bf16" if cpu_has_native_bf16() else "all-MiniLM-L6-v2"
    assert probe({}) == {"native_bf16": cpu_has_native_bf16(), "default": expected}
    assert native_bf16() == cpu_has_native_bf16()


def test_a_bf16_index_is_searched_as_bf16_on_an_avx2_only_cpu(tmp_path):
    rows = [
        {
            "id": f"h{i}",
            "created_utc": int(datetime(2025, 3, 1 + 3 * i, tzinfo=timezone.utc).timestamp()),
            "title": t,
            "source": "test",
            "kind": "headline",
        }
        for i, t in enumerate(TITLES)
    ]
    inbox = tmp_path / "news_2025-03.jsonl"
    inbox.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    archive = tmp_path / "archive"
    snapshot = open_snapshot(archive, build_snapshot([inbox], "headlines", "headlines", archive))
    info = build_index(snapshot, "minilm-bf16")
    assert (info["embedder"], info["embedder_dtype"], info["dtype"]) == (
        "all-MiniLM-L6-v2-bf16",
        "bfloat16",
        "float32",
    )
    assert open_index(snapshot).info["embedder_dtype"] == "bfloat16"
    query = "interest rate cut"
    with TimeBoundRetriever(snapshot, T0) as bound:
        here = [h.doc.id for h in bound.search(query, k=3, mode="vector")]
    there = probe(AVX2_ONLY, str(archive), T0.isoformat(), query)
    assert (
        there["default"] == "all-MiniLM-L6-v2" and there["hits"] == here
    )  # the recorded bf16 embedder, not fp32
    assert get_embedder(info["embedder"]).dtype == "bfloat16"
