"""`hindcast markets pull` as a user runs it, against a fake Polymarket on 127.0.0.1 over real
sockets: killed part-way, re-run, and the store is complete with nothing fetched twice."""

import subprocess
import sys

from hindcast.markets.store import open_version
from tests.helpers import ROOT
from tests.markets.conftest import Reply, by_question, tokens

STORED = {
    by_question(q)["conditionId"]
    for q in ("Marco Rubio", "Bitcoin reach", "Acend", "emergency rate cut", "Sam Bankman-Fried")
}  # "50 bps": no history


def pull_args(server, store):
    return [
        sys.executable,
        "-m",
        "hindcast",
        "markets",
        "pull",
        "--store",
        str(store),
        "--page-size",
        "5",
        "--gamma-url",
        f"{server.url}/gamma",
        "--clob-url",
        f"{server.url}/clob",
        "--data-url",
        f"{server.url}/data",
        "--timeout",
        "20",
        "--attempts",
        "2",
    ]


def run(server, store) -> subprocess.CompletedProcess:
    return subprocess.run(
        pull_args(server, store), cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def price_rows(store):
    import pyarrow.parquet as pq

    version = open_version(store)
    return [
        (r["market_id"], r["t"]) for r in pq.read_table(version.path / "prices.parquet").to_pylist()
    ]


def test_a_killed_pull_is_resumed_without_refetching_and_completes(tmp_path, local_server):
    store, fake = tmp_path / "store", local_server.fake
    blocked_token = tokens(by_question("Sam Bankman-Fried"))[1]
    local_server.block(
        lambda key: key[1] == "prices-history" and ("market", blocked_token) in key[2]
    )
    proc = subprocess.Popen(
        pull_args(local_server, store), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert local_server.blocked.wait(90), "the pull never reached the blocking request"
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    local_server.release()
    served_before_kill, mark = list(local_server.served), len(fake.requests)
    assert not (store / "LATEST").exists()
    assert sum(1 for key in served_before_kill if key[1] == "prices-history") >= 5

    second = run(local_server, store)
    assert second.returncode == 0, second.stderr
    resumed = fake.requests[mark:]
    assert not [r for r in resumed if r[0] == "gamma"]  # every page came from the pull cache
    in_flight = (
        "token_id",
        blocked_token,
    )  # the killed market's Data API answer (none) is asked again
    assert {r for r in resumed if in_flight not in r[2]}.isdisjoint(served_before_kill)
    assert any(("market", blocked_token) in r[2] for r in resumed)

    version = open_version(store)
    assert {m.id for m in version.bundle.markets} == STORED
    rows = price_rows(store)
    assert len(rows) == len(set(rows)) == sum(len(h) for h in version.bundle.prices.values())
    assert "pulled 5 market(s)" in second.stdout and "failed 3" in second.stdout
    assert "stored 5 of 13 listed market(s): 5 skipped, 3 failed" in second.stderr
    assert by_question("Dow close above")["conditionId"] in second.stdout


def test_a_pull_after_a_finished_one_asks_only_for_the_listing_and_past_failures(
    tmp_path, local_server
):
    store, fake = tmp_path / "store", local_server.fake
    first = run(local_server, store)
    assert first.returncode == 0, first.stderr
    mark = len(fake.requests)
    again = run(local_server, store)
    assert again.returncode == 0, again.stderr
    histories = {dict(r[2])["market"] for r in fake.requests[mark:] if r[1] == "prices-history"}
    assert histories == {tokens(by_question(q))[0] for q in ("Solana", "Ethereum", "50 bps")}
    assert open_version(store).id == first.stdout.split("(version ")[1].split(")")[0]


def test_an_unreachable_gamma_is_a_one_line_error_naming_the_url(tmp_path, local_server):
    local_server.fake.faults[("gamma", "markets/keyset")] = [Reply(500, b"")] * 2
    proc = run(local_server, tmp_path / "store")
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"hindcast: error: {local_server.url}/gamma/markets/keyset?")
    assert (
        "HTTP 500 after 2 attempts" in proc.stderr and not (tmp_path / "store" / "LATEST").exists()
    )
