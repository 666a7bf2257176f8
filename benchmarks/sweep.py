"""Sweep throughput against a fake OpenAI-compatible server on loopback with fixed latency.

A real `api.sweep` runs the zero-shot forecaster on the shipped sample against
a fake OpenAI-compatible server (benchmarks/fast_fake_server.py: real HTTP over
127.0.0.1, asyncio, in its own process) answering every request after L seconds. With C forecasts in
flight the ideal is C / L forecasts per second; the target is at least 0.9 of it. The measured
window runs from the plan to the last stored forecast (so it includes building prompts, HTTP,
parsing and committing every row).

Usage: python benchmarks/sweep.py [--latency 0.2] [--concurrency 8 16 32]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from hindcast import api
from hindcast.llm.cache import ResponseCache
from hindcast.llm.models import Models
from hindcast.replay.spec import ReplaySpec
from hindcast.runs.store import RunStore
from hindcast.timeutil import parse_utc

SAMPLE = Path(__file__).resolve().parents[1] / "markets" / "sample"
FRACTIONS = tuple(i / 10 for i in range(1, 11))  # 57 markets × 10 cutoffs = 570 forecasts


@contextmanager
def fake_server(latency: float):
    """The fake model server in its own process, as a real model server would be."""
    server = Path(__file__).with_name("fast_fake_server.py")
    proc = subprocess.Popen(
        [sys.executable, str(server), str(latency)], stdout=subprocess.PIPE, text=True
    )
    try:
        yield proc.stdout.readline().strip()
    finally:
        proc.kill()
        proc.wait()


def measure(latency: float, concurrency: int) -> tuple[int, float]:
    marks: list[float] = []
    with fake_server(latency) as url, tempfile.TemporaryDirectory() as tmp:
        spec = ReplaySpec(
            store=SAMPLE,
            forecasters=(f"zero-shot:model=openai-compatible:{url}#fake-model",),
            fractions=FRACTIONS,
            concurrency=concurrency,
        )
        store = RunStore(f"sqlite:///{tmp}/h.db")
        with Models(
            cache=ResponseCache(Path(tmp) / "responses.db"),
            concurrency=concurrency,
            owns_cache=True,
        ) as models:
            api.sweep(
                spec,
                runs=store,
                out=Path(tmp),
                now=parse_utc("2026-11-30T00:00:00Z"),
                models=models,
                on_plan=lambda n: marks.append(time.perf_counter()),
                advance=lambda: marks.append(time.perf_counter()),
            )
    return len(marks) - 1, marks[-1] - marks[0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 16, 32])
    args = parser.parse_args()
    print(
        f"latency L = {args.latency:.3f} s; zero-shot on the shipped sample, 10 cutoffs per market"
    )
    for c in args.concurrency:
        n, seconds = measure(args.latency, c)
        ideal = c / args.latency
        print(
            f"C = {c:3d}: {n} forecasts in {seconds:.2f} s = {n / seconds:6.1f}/s; ideal C/L = "
            f"{ideal:6.1f}/s; ratio {n / seconds / ideal:.2f} (target >= 0.90)"
        )


if __name__ == "__main__":
    main()
