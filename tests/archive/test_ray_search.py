"""Time-bounded search on a real local Ray cluster of month shards (issue 37): the session's
cluster of tests/archive/ray_cluster.py with three nodes (head + two worker nodes on loopback, one
CPU each), one search actor a node, the months dealt between them.

* Every mode (vector exact, approximate at every list and at one list, text, hybrid), read and
  thread give the single-node retriever's documents, scores (to the bit) and order at t0s exactly
  on documents, just around them and on month boundaries, over an archive with documents created
  and edited after those t0s (tests/archive/test_properties.py's synthetic archive).
* A shard whose process is killed mid-query, or that stops answering, is an outage
  (InfrastructureError), never a short or partial list; with the default retry the replaced
  actor answers and the list is the full one.
* A sweep of the sample markets with a retrieval agent reading the archive on Ray stores rows
  byte-identical to the same sweep on one node.
* The live arm's plan and `hindcast analyze --ray`'s evidence strata search through the shards
  with the single node's results.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sqlite3
import threading
import time
from datetime import timedelta

import pytest
import ray  # noqa: F401  (the `ray` extra: pip install -e '.[ray]'; this test is meant to run, not skip)

from hindcast.archive import fanout
from hindcast.archive.retriever import TimeBoundRetriever
from hindcast.errors import InfrastructureError, LeakageError
from hindcast.timeutil import from_unix
from tests.archive import test_properties as props
from tests.archive.ray_cluster import ray_env

MODES = ("vector", "text", "hybrid")
SEARCHES = ({}, props.APPROX, props.TINY, {"vector_search": "approx", "nprobe": 3})
QUERIES = ("alpha bravo", "tango lima zzzunknown")


@pytest.fixture(scope="module")
def driver(cluster3):
    """This process as a driver of the cluster (loopback, no token), for the module."""
    saved, env = dict(os.environ), ray_env()
    os.environ.clear()
    os.environ.update(env)
    from hindcast.archive import distributed

    with distributed.connected(cluster3.address) as connected:
        yield connected
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The property tests' synthetic archive (post-t0 documents and edits), with its
    approximate index: (snapshot, index)."""
    subs, comments = props._synthetic_rows(7)
    return props._frozen(tmp_path_factory.mktemp("ray-world") / "w", subs, comments)


@pytest.fixture(scope="module")
def on_ray(driver, world):
    with fanout.open_shards(world[1], None) as found:
        assert len(found.actors) == 3 and [len(found._months(k)) for k in (0, 1, 2)] == [1, 1, 1]
        yield found


def _t0s() -> list:
    """Every kind of t0 once or a few times: on documents, 1 µs around them, on each month
    boundary (−1/0/+1 µs), before and after the archive. Random t0s and splits of the months
    are the in-process property's (test_properties: the same merge code, many more examples);
    this checks the same bits come back through Ray."""
    instants = props._instants()
    exact = [from_unix(t) for t in instants[:: max(len(instants) // 4, 1)]]
    around = [t + timedelta(microseconds=d) for t in exact[:2] for d in (-1, 1)]
    bounds = [m + timedelta(microseconds=d) for m in props.MONTH_STARTS for d in (-1, 0, 1)]
    return exact + around + bounds + [from_unix(props.START - 1), from_unix(props.END + 10)]


def _same(world, shards, t0) -> int:
    snap, index = world
    checked = 0
    for search in SEARCHES:
        alone = TimeBoundRetriever(snap, t0, index=index, **search)
        shared = TimeBoundRetriever(snap, t0, index=index, shards=shards, **search)
        for mode in MODES:
            for query in QUERIES:
                assert props._bits(shared, query, 12, mode) == props._bits(alone, query, 12, mode)
                checked += 1
    for pick in ("t3_p1", "t3_p77", "t1_q5", "t1_q300", "nope"):
        for mode in ("read", "thread"):
            assert props._bits(shared, pick, 1, mode) == props._bits(alone, pick, 1, mode)
    return checked


def test_search_on_ray_shards_gives_the_single_node_bits(world, on_ray):
    assert sum(_same(world, on_ray, t0) for t0 in _t0s()) >= 19 * 24


def test_a_month_after_month_t0_is_refused_by_the_shard_not_served(on_ray, world):
    months = world[0].months
    with pytest.raises(LeakageError, match="after month"):
        on_ray.each(months[0], [months[-1]], 0, None, "exact", [0.0] * 384, 3)


def _expected(world, t0):
    return TimeBoundRetriever(world[0], t0, index=world[1]).search("alpha bravo", k=20)


def _hammer(world, shards, t0, stop: threading.Event, got: list) -> None:
    bound = TimeBoundRetriever(world[0], t0, index=world[1], shards=shards)
    while not stop.is_set():
        try:
            got.append(bound.search("alpha bravo", k=20))
        except InfrastructureError as exc:
            got.append(exc)


def _killed_mid_query(world, shards, sig=signal.SIGKILL, wait=1.5) -> list:
    """Search in a thread while a shard's process gets `sig`; every answer or outage."""
    t0 = from_unix(props.END - 3600)
    pid = shards.ray.get(shards.actors[0].pid.remote())
    stop, got = threading.Event(), []
    worker = threading.Thread(target=_hammer, args=(world, shards, t0, stop, got))
    worker.start()
    while len(got) < 5:
        time.sleep(0.01)
    os.kill(pid, sig)
    time.sleep(wait)
    stop.set()
    worker.join()
    if sig == signal.SIGSTOP:  # unless the late shard was already replaced (killed): expected
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
    return got


@pytest.mark.parametrize("sig, timeout", [(signal.SIGKILL, 30), (signal.SIGSTOP, 5)])
def test_a_shard_killed_or_stuck_mid_query_is_an_outage_never_a_short_list(
    driver, world, sig, timeout
):
    with fanout.open_shards(world[1], None, retries=0, timeout=timeout) as shards:
        got = _killed_mid_query(world, shards, sig, wait=1.5 if sig == signal.SIGKILL else 8)
    outages = [g for g in got if isinstance(g, InfrastructureError)]
    answers = [g for g in got if not isinstance(g, InfrastructureError)]
    assert outages and answers, got
    assert "asked again on the next run" in str(outages[0])
    expected = _expected(world, from_unix(props.END - 3600))
    assert len(expected) == 20 and all(answer == expected for answer in answers)


def test_with_the_default_retry_a_killed_shard_is_replaced_and_the_list_is_full(driver, world):
    with fanout.open_shards(world[1], None) as shards:
        got = _killed_mid_query(world, shards)
    expected = _expected(world, from_unix(props.END - 3600))
    assert len(got) > 5 and all(answer == expected for answer in got)


# ---- a sweep served by the cluster stores the single-node rows --------------------------------

AGENT = "retrieval-agent:model=openai-compatible:http://fake.invalid/v1#searcher,rounds=1"


def _searches(body):
    from hindcast.llm.fake import answer

    schema = body.get("response_format", {}).get("json_schema", {}).get("schema", {})
    props_ = schema.get("properties", {})
    if "summary" in props_:
        return answer(json.dumps({"summary": "read", "queries": []}))
    if "queries" in props_:
        return answer(json.dumps({"queries": ["Fed rate cut decision", "election"]}))
    return answer(json.dumps({"probability": 0.5}))


@pytest.fixture(scope="module")
def sample_archive(tmp_path_factory):
    """Shipped headlines of nine months (a few hundred each), hash-embedded."""
    from hindcast import api
    from tests.integration.archive_support import real_headlines

    folder = tmp_path_factory.mktemp("ray-sweep")
    months = [f"2025-{m:02d}" for m in range(7, 13)] + ["2026-01", "2026-02", "2026-03"]
    inputs = real_headlines(folder, months, ("fed", "election"), per_month=150)
    api.ingest(inputs, "news", "headlines", folder / "archive")
    api.embed(folder / "archive", api.freeze(folder / "archive"), "hash")
    return folder / "archive"


def _rows(path) -> dict:
    """Every row of every table, as text; a model call's measured latency (the wall clock) is the
    one value blanked."""
    with sqlite3.connect(path) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {
            t: [LATENCY.sub("latency", repr(row)) for row in db.execute(f'SELECT * FROM "{t}"')]
            for t in tables
        }


LATENCY = re.compile(r'\\?"latency_s\\?": [0-9.e-]+')


def test_a_sweep_on_the_cluster_stores_the_single_node_rows(driver, sample_archive, tmp_path):
    import httpx

    from hindcast import api, replay
    from hindcast.llm.fake import FakeChatModel
    from hindcast.llm.models import Models
    from hindcast.replay.spec import spec_from_mapping
    from hindcast.runs.store import RunStore
    from tests.helpers import SAMPLE_MARKETS, at

    opened = {}
    for where in ("alone", "ray"):
        spec = spec_from_mapping(
            {
                "store": str(SAMPLE_MARKETS),
                "archive": str(sample_archive),
                "forecasters": [AGENT],
                "offsets": ["10d", "3d"],
                "fractions": [],
                "limit": 6,
                "concurrency": 1,  # rows stored in one order: the same row ids
                "ray": "auto" if where == "ray" else None,
            }
        )
        store = RunStore(f"sqlite:///{tmp_path / where}.db")
        fake = FakeChatModel(default=_searches)
        with Models(http=lambda: httpx.AsyncClient(transport=fake.transport())) as models:
            plan = replay.prepare(spec)
            api.sweep(
                spec,
                runs=store,
                out=tmp_path / where,
                now=at("2026-11-30T00:00:00"),
                models=models,
                created_at=at("2026-11-30T00:00:00"),
                prepared=plan,
            )
        opened[where] = set(plan.index.opened)  # months this process opened itself
        plan.close()
        store.close()
    assert opened["ray"] == set() and opened["alone"]  # on Ray, every month read by the shards
    alone, on_ray = _rows(tmp_path / "alone.db"), _rows(tmp_path / "ray.db")
    searched = [row for row in alone["forecasts"] if '"op": "search"' in row]
    assert len(searched) == len(alone["forecasts"]) == 12 and '"ids": ["' in searched[0]
    assert on_ray == alone


# ---- the live arm and the evidence strata read the archive on the cluster too -------------------


def test_the_live_arm_searches_the_archive_on_the_cluster(driver, sample_archive):
    """A live tick's plan (schedule/live.py) of a sweep with `ray` searches through Ray shards,
    with the single node's bits, and closing the plan stops them."""
    from hindcast.archive import open_index, open_snapshot
    from hindcast.replay.spec import spec_from_mapping
    from hindcast.schedule import live
    from tests.helpers import SAMPLE_MARKETS, at

    spec = spec_from_mapping(
        {"store": str(SAMPLE_MARKETS), "archive": str(sample_archive), "ray": "auto"}
    )
    snap = open_snapshot(sample_archive)
    with open_index(snap) as index:
        now = at("2026-02-10T12:00:00")
        plan = live.live_plan("r-live", spec, [], None, (snap, index), now)
        shards = plan.search["shards"]
        assert isinstance(shards, fanout.RayShards) and shards.actors
        for mode in MODES:
            on_ray = TimeBoundRetriever(snap, now, index=index, **plan.search)
            alone = TimeBoundRetriever(snap, now, index=index)
            assert props._bits(on_ray, "Fed rate cut", 10, mode) == props._bits(
                alone, "Fed rate cut", 10, mode
            )
        plan.close()
        assert shards.actors == []


def test_hindcast_analyze_ray_computes_the_evidence_strata_on_the_cluster(
    driver, sample_archive, tmp_path
):
    """`api.analyze(…, ray=ADDRESS)` (hindcast analyze --ray) labels the evidence strata by
    searching the archive on the cluster: the same Finding as on one node."""
    from hindcast import api
    from hindcast.replay.spec import spec_from_mapping
    from hindcast.runs.store import RunStore
    from tests.helpers import SAMPLE_MARKETS, at

    spec = spec_from_mapping(
        {
            "store": str(SAMPLE_MARKETS),
            "archive": str(sample_archive),
            "forecasters": ["market"],
            "offsets": ["10d"],
            "fractions": [],
            "limit": 3,
        }
    )
    evidence = {}
    for where in ("alone", "ray"):
        (tmp_path / where).mkdir()
        store = RunStore(f"sqlite:///{tmp_path / where / 'runs.db'}")  # its own evidence.db
        done = api.sweep(spec, runs=store, out=tmp_path / where, now=at("2026-11-30T00:00:00"))
        found = api.analyze(store, [done.run_id], ray="auto" if where == "ray" else None)
        evidence[where] = [f.to_json() for f in found if f.key == "evidence"]
        store.close()
    assert evidence["ray"] == evidence["alone"] and evidence["alone"][0]["rows"]
