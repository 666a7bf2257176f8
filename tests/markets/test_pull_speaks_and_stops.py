"""`hindcast markets pull` as a user runs it (a subprocess) against the shipped fakes on
127.0.0.1 (issue 39 item 5, issue 36 item 6): a history host that refuses connections stops the
pull within seconds as an outage (one line naming the host, exit 4, no version, the cache
kept) and the same command completes from the cache once the host is back; Kalshi the same; a
pull that stored nothing writes no version and exits 1; progress is printed when stderr is a
file (and not with -q); a Data API history whose `next_cursor` never advances stops at once."""

from __future__ import annotations

import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from hindcast.errors import PolymarketError
from hindcast.markets.fake_kalshi import FakeKalshi
from hindcast.markets.fake_kalshi import serve as serve_kalshi
from hindcast.markets.fake_polymarket import FakePolymarket, population, serve
from hindcast.markets.polymarket import PolymarketClient, RetryPolicy
from hindcast.markets.store import open_version
from tests.helpers import ROOT
from tests.markets.kalshi_support import tree

START = datetime(2025, 6, 1, tzinfo=UTC)
NOW = START + timedelta(days=260)
COUNT = 30
BOUND = 90  # seconds: the old pull retried each of the 30 markets for ~15 s (7.5 min in all)


def free_port() -> int:
    """A port nothing listens on (bound, then closed): connecting to it is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pull(store, gamma: str, data: str, *extra: str, stderr=subprocess.PIPE, quiet=False):
    """The real command with the default retry policy (5 attempts, backoff from 1 s)."""
    args = [sys.executable, "-m", "hindcast", *(["-q"] if quiet else []), "markets", "pull"]
    args += ["--store", str(store)]
    args += ["--gamma-url", f"{gamma}/gamma", "--clob-url", f"{gamma}/clob"]
    args += ["--data-url", f"{data}/data", *extra]
    return subprocess.run(
        args, cwd=ROOT, stdout=subprocess.PIPE, stderr=stderr, text=True, timeout=BOUND
    )


def errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("hindcast: error:")]


def test_a_history_host_that_refuses_connections_stops_the_pull_and_the_rerun_completes(tmp_path):
    fake, store, port = (
        FakePolymarket(population(COUNT, START), NOW),
        tmp_path / "store",
        free_port(),
    )
    with serve(fake) as base:
        down = pull(store, base, f"http://127.0.0.1:{port}")
        assert down.returncode == 4, down.stderr
        assert errors(down.stderr) == [errors(down.stderr)[0]] and "Traceback" not in down.stderr
        assert f"host 127.0.0.1:{port} cannot be reached" in errors(down.stderr)[0]
        assert not (store / "LATEST").exists() and not (store / "versions").exists()
        assert list((store / ".pull").glob("*/pages/*.json"))  # the listing is kept for the resume
        listed = len(fake.requests)
        with serve(fake, port) as data:  # the history host is back, at the same address
            again = pull(store, base, data, "--json")
    assert again.returncode == 0, again.stderr
    assert not [r for r in fake.requests[listed:] if r[0] == "gamma"]  # the listing: from the cache
    assert {m.id for m in open_version(store).bundle.markets} == {
        m.condition_id for m in fake.markets
    }


def test_a_kalshi_host_that_refuses_connections_stops_the_pull_with_one_line(tmp_path):
    port, store = free_port(), tmp_path / "store"
    proc = subprocess.run(
        [sys.executable, "-m", "hindcast", "markets", "pull", "--venue", "kalshi", "--store"]
        + [str(store), "--kalshi-url", f"http://127.0.0.1:{port}/trade-api/v2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=BOUND,
    )
    assert proc.returncode == 4 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"hindcast: error: host 127.0.0.1:{port} cannot be reached")
    assert not store.exists()


def test_a_pull_that_stores_nothing_writes_no_version_and_exits_1(tmp_path):
    fake, store = FakePolymarket(population(COUNT, START), NOW), tmp_path / "store"
    with serve(fake) as base:
        first = pull(store, base, base)
        before = tree(store)
        nothing = pull(store, base, base, "--since", "2030-01-01")  # no market ends then
    assert first.returncode == 0, first.stderr
    assert nothing.returncode == 1 and "no version written" in nothing.stdout
    assert errors(nothing.stderr) == [
        f"hindcast: error: stored 0 of 0 listed market(s): no version written into {store} "
        "(0 skipped, 0 failed: see above)"
    ]
    after = tree(store)
    assert {k: v for k, v in after.items() if k != "pulls.jsonl"} == {
        k: v for k, v in before.items() if k != "pulls.jsonl"
    }  # LATEST and every version unchanged; the pull log has one more line
    assert after["pulls.jsonl"].startswith(before["pulls.jsonl"])


def test_a_kalshi_pull_that_stores_nothing_writes_no_version_and_exits_1(tmp_path):
    store = tmp_path / "store"
    with serve_kalshi(FakeKalshi.generate(live=3, historical=2)) as url:
        proc = subprocess.run(
            [sys.executable, "-m", "hindcast", "markets", "pull", "--venue", "kalshi"]
            + ["--store", str(store), "--kalshi-url", url, "--series", "NOSUCHSERIES"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=BOUND,
        )
    assert proc.returncode == 1 and "stored 0 of 0 listed" in proc.stderr, proc.stderr
    assert not (store / "LATEST").exists()


def test_a_pull_prints_progress_when_stderr_is_a_file_and_nothing_with_q(tmp_path):
    fake = FakePolymarket(population(COUNT, START), NOW)
    with serve(fake) as base, open(tmp_path / "stderr", "w+") as log:
        proc = pull(tmp_path / "store", base, base, stderr=log)
        log.seek(0)
        said = log.read()
        quiet = pull(tmp_path / "quiet", base, base, quiet=True)
    assert proc.returncode == 0, said
    lines = said.splitlines()
    assert any(line.startswith(f"markets pull: listing: {COUNT}/{COUNT} markets") for line in lines)
    histories = [line for line in lines if line.startswith("markets pull: price histories: ")]
    assert histories and histories[-1].startswith(f"markets pull: price histories: {COUNT}/{COUNT}")
    assert "markets/s" in histories[-1]  # the rate
    assert quiet.returncode == 0 and "markets pull:" not in quiet.stderr


def test_a_data_api_cursor_that_never_advances_stops_after_two_requests():
    """Issue 36.6: the answer's `next_cursor` is the one just sent, forever (a broken server)."""
    asked = []

    def stuck(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.params.get("cursor"))
        page = {"data": [{"timestamp": 1788800640 + len(asked), "price": 0.5}]}
        return httpx.Response(
            200, json=page | {"pagination": {"has_more": True, "next_cursor": "Y3Vyc29y"}}
        )

    client = PolymarketClient(
        httpx.Client(transport=httpx.MockTransport(stuck)), retry=RetryPolicy(attempts=1)
    )
    with pytest.raises(PolymarketError, match="does not advance: page 2 answers a next_cursor"):
        client.data_history("1" * 70)
    assert asked == [None, "Y3Vyc29y"]
