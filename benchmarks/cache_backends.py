"""What a response-cache hit costs on each backend: `ResponseCache.get` of a stored answer
(a 1 KB request, a 2 KB response, 5,000 entries) from a SQLite file (WAL) and from a
PostgreSQL table over loopback TCP (a throwaway server, tests/pg.py: Debian's postgresql).
Reported: median and p95 µs per hit, and the ratio PostgreSQL / SQLite; for scale, the
latency of the model call a hit replaces is 0.3-30 s.

Usage: python benchmarks/cache_backends.py [--entries 5000] [--gets 5000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hindcast.llm.cache import ResponseCache, request_key


def fill(cache: ResponseCache, n: int) -> list[str]:
    keys = []
    for i in range(n):
        body = {
            "model": "m",
            "messages": [{"role": "user", "content": f"question {i} " + "x" * 1000}],
        }
        key = request_key("http://127.0.0.1:1/v1", body)
        cache.put(
            key, body, {"choices": [{"message": {"content": '{"probability": 0.4}' + " " * 2000}}]}
        )
        keys.append(key)
    return keys


def timed_gets(cache: ResponseCache, keys: list[str], gets: int) -> list[float]:
    out = []
    for i in range(gets):
        start = time.perf_counter()
        assert cache.get(keys[(i * 7919) % len(keys)]) is not None
        out.append((time.perf_counter() - start) * 1e6)
    return out


def summary(name: str, micros: list[float]) -> float:
    median = statistics.median(micros)
    print(
        f"{name}: median {median:.0f} µs, p95 {sorted(micros)[int(len(micros) * 0.95)]:.0f} "
        "µs per hit"
    )
    return median


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=5000)
    parser.add_argument("--gets", type=int, default=5000)
    args = parser.parse_args()
    from tests import pg

    with tempfile.TemporaryDirectory() as tmp:
        lite = ResponseCache(Path(tmp) / "responses.db")
        sqlite = summary("SQLite", timed_gets(lite, fill(lite, args.entries), args.gets))
        lite.close()
    bin_dir = pg.pg_bin()
    if bin_dir is None:
        raise SystemExit("needs Debian's postgresql (apt-get install postgresql)")
    server = pg.start(bin_dir)
    try:
        remote = ResponseCache(server.create_database())
        postgres = summary(
            "PostgreSQL (loopback TCP)", timed_gets(remote, fill(remote, args.entries), args.gets)
        )
        remote.close()
    finally:
        pg.stop(server)
    print(f"ratio PostgreSQL / SQLite: {postgres / sqlite:.1f}×")


if __name__ == "__main__":
    main()
