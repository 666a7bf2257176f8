"""Throughput of N `hindcast sweep --shard I/N` processes against one, sweeping one spec into
one PostgreSQL run database, against the shipped fake chat model with a fixed latency.

Each process keeps `--concurrency C` requests in flight and every request takes L seconds, so
one process makes about C/L forecasts a second and N processes about N·C/L (what the claims in
the database cost is the difference). Both arms start from an empty database and an empty
response cache (every forecast is a fresh request); wall time is from the first process
started to the last one ended, interpreter start-up included; and the model window, from the
first request the fake received to the last one answered (start-up and scoring excluded).
Reported for each arm: seconds and forecasts a second, and the ratios N-process / 1-process
throughput of both.

A throwaway PostgreSQL server is started (tests/pg.py: Debian's postgresql) unless --db-server
names a database to create the two databases on (postgresql+psycopg://user@host:port/postgres).

Usage: python benchmarks/shards.py [--markets 40] [--latency 0.5] [--concurrency 2] [--workers 4]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hindcast.llm.fake import FakeChatModel, answer


def sweep_cmd(args, fake_url: str, out: Path, db: str, shard: str | None) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        "hindcast",
        "sweep",
        "--store",
        str(ROOT / "markets" / "sample"),
        "--limit",
        str(args.markets),
        "-f",
        f"zero-shot:model=openai-compatible:{fake_url}#fake-model",
        "--concurrency",
        str(args.concurrency),
        "--out",
        str(out),
        "--db",
        db,
        "--json",
    ]
    return cmd + (["--shard", shard] if shard else [])


def arm(
    args, fake_url: str, db: str, workers: int, folder: Path, seen: list[float]
) -> tuple[float, float, int]:
    """Seconds for `workers` processes (each with its own empty response cache) to sweep the
    spec, of its model window (`seen`: the instants the fake received each request), and the
    number of requests."""
    seen.clear()
    start = time.perf_counter()
    procs = [
        subprocess.Popen(
            sweep_cmd(
                args, fake_url, folder / f"w{i}", db, f"{i}/{workers}" if workers > 1 else None
            ),
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(1, workers + 1)
    ]
    for proc in procs:
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(
                "a sweep failed: "
                f"{err.strip().splitlines()[-1] if err.strip() else proc.returncode}"
            )
    return time.perf_counter() - start, max(seen) + args.latency - min(seen), len(seen)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--markets", type=int, default=40)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    from tests import pg

    bin_dir = pg.pg_bin()
    if bin_dir is None:
        raise SystemExit("needs Debian's postgresql (apt-get install postgresql)")
    server = pg.start(bin_dir)
    try:
        seen: list[float] = []
        reply = answer('{"probability": 0.42}', delay=args.latency)
        fake = FakeChatModel(default=lambda body: seen.append(time.perf_counter()) or reply)
        planned = args.markets * 4
        with fake.serve() as url, tempfile.TemporaryDirectory() as tmp:
            one, one_window, one_requests = arm(
                args, url, server.create_database(), 1, Path(tmp) / "one", seen
            )
            many, many_window, many_requests = arm(
                args, url, server.create_database(), args.workers, Path(tmp) / "many", seen
            )
    finally:
        pg.stop(server)
    print(
        f"{planned} forecasts, latency {args.latency} s, concurrency {args.concurrency} per "
        f"process (requests: {one_requests} by 1 process, {many_requests} by {args.workers}): 1 "
        f"process {one:.1f} s ({planned / one:.1f}/s), {args.workers} processes {many:.1f} s "
        f"({planned / many:.1f}/s); throughput ratio {one / many:.2f}× wall clock; model window "
        f"{one_window:.1f} s vs {many_window:.1f} s ({planned / many_window:.1f}/s), ratio "
        f"{one_window / many_window:.2f}× (ideal {args.workers}×, C/L = "
        f"{args.concurrency / args.latency:.1f}/s per process)"
    )


if __name__ == "__main__":
    main()
