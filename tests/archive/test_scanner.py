"""The scan's threads are owned by an object (`scan.Scanner`, held by the opened index) and
closed by it: no process-wide pool. A scan on a scanner's threads gives the same bits as one
in the calling thread alone, several threads may share one scanner, and closing it stops its
threads (a later scan starts them again)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from hindcast.archive import scan

NEVER = np.iinfo(np.int64).min


def _month(rows: int, dims: int, seed: int) -> scan.Vectors:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((rows, dims)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    codes, scales = scan.quantize(vectors)
    edit_us = np.where(rng.random(rows) < 0.2, 50, NEVER).astype(np.int64)
    return scan.Vectors(vectors, codes, scales, edit_us, float(scales.max(initial=0.0)))


def _scan_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("hindcast-scan")}


def test_a_scan_on_the_scanners_threads_matches_the_calling_thread_alone():
    parts = [(_month(9000, 64, 1), 9000), (_month(12000, 64, 2), 7777), (_month(300, 64, 3), 1)]
    q = np.random.default_rng(4).standard_normal(64).astype(np.float32)
    before = _scan_threads()
    with scan.Scanner(workers=3) as scanner:
        shared = scan.first_stage(parts, q, 50, scanner)
        assert _scan_threads() - before  # the work was handed out (rows ≥ PARALLEL_ROWS)
        top = scan.top_each(parts, q, 50, 10, scanner)
    alone = scan.first_stage(parts, q, 50)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(shared, alone))
    assert top == scan.top_each(parts, q, 50, 10)


def test_threads_sharing_one_scanner_get_their_own_results():
    month = _month(40_000, 32, 5)
    queries = np.random.default_rng(6).standard_normal((12, 32)).astype(np.float32)
    alone = [scan.top(month, q, 40_000 - 997 * i, None, 10) for i, q in enumerate(queries)]
    with scan.Scanner(workers=2) as scanner, ThreadPoolExecutor(4) as callers:
        together = list(
            callers.map(
                lambda i: scan.top(month, queries[i], 40_000 - 997 * i, None, 10, scanner),
                range(12),
            )
        )
    assert together == alone


def test_closing_the_scanner_stops_its_threads_and_a_later_scan_restarts_them():
    parts = [(_month(20_000, 16, 7), 20_000)]
    q = np.ones(16, np.float32)
    before, scanner = _scan_threads(), scan.Scanner(workers=2)
    first = scan.top_each(parts, q, None, 5, scanner)
    started = _scan_threads() - before
    assert started
    scanner.close()
    assert not any(t.is_alive() for t in started)
    assert scan.top_each(parts, q, None, 5, scanner) == first
    restarted = _scan_threads() - before
    assert restarted
    scanner.close()
    assert not any(t.is_alive() for t in restarted)


def test_the_opened_index_owns_the_scanner_and_closes_it(tmp_path):
    from hindcast.archive.index import IndexReader

    before = _scan_threads()
    with IndexReader(tmp_path, {"months": {}}) as reader:
        scan.first_stage(
            [(_month(20_000, 16, 8), 20_000)], np.ones(16, np.float32), None, reader.scanner
        )
        started = _scan_threads() - before
        assert started
    assert not any(t.is_alive() for t in started)


def test_a_retriever_closes_the_index_it_opened_and_leaves_a_given_one_to_its_owner(reddit_archive):
    from hindcast.archive.index import open_index
    from hindcast.archive.retriever import TimeBoundRetriever
    from hindcast.timeutil import parse_utc

    snap, t0, big = (
        reddit_archive[1],
        parse_utc("2026-01-01T00:00:00Z"),
        [(_month(20_000, 16, 9), 20_000)],
    )
    before = _scan_threads()
    with TimeBoundRetriever(snap, t0) as own:
        scan.first_stage(big, np.ones(16, np.float32), None, own.index.scanner)
        started = _scan_threads() - before
    assert started and not any(t.is_alive() for t in started)
    with open_index(snap) as index:
        with TimeBoundRetriever(snap, t0, index=index) as borrowing:
            scan.first_stage(big, np.ones(16, np.float32), None, borrowing.index.scanner)
        borrowed = _scan_threads() - before  # threading.enumerate lists live threads only
        assert borrowed  # the retriever did not close its owner's index
    assert not any(t.is_alive() for t in borrowed)
