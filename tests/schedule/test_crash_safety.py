"""Killed during a job and restarted, the service ends with the same market store, runs,
forecasts, batches, watermarks and exports as a service that was never interrupted."""

from __future__ import annotations

import pytest

from tests.schedule.conftest import (
    TICKS,
    contents,
    reference,
    run_process,
    service_state,
    sim_markets,
    tick,
    write_config,
)
from tests.schedule.fake_polymarket import FakePolymarket, LocalServer, SimClock

KILL_TICK = 1  # the second tick: markets already swept, two new ones resolved


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    clock = SimClock(TICKS[0])
    with LocalServer(FakePolymarket(sim_markets(), clock)) as server:
        return reference(tmp_path_factory.mktemp("uninterrupted"), server.url, clock)


def _interrupted_run(tmp_path, server, clock, kill) -> None:
    config = write_config(tmp_path, server.url)
    for i, now in enumerate(TICKS):
        clock.now = now
        if i == KILL_TICK:
            kill(config, now)
        statuses, _ = tick(config, now)  # the restart (and the later ticks)
        assert set(statuses.values()) == {"ok"}, statuses


DIE_AT = {
    "pull, fetching price histories": "hindcast.markets.pull_history:_fetch_history:2",
    "pull, version written, watermark not yet": "hindcast.schedule.state:State.set_many:1",
    "sweep, mid-batch": "hindcast.replay.sweep:add_many:1",  # a batch of forecasts being stored
    "sweep, batch run complete, not yet closed": "hindcast.schedule.state:State.close_batch:1",
    "export, writing the per-forecast table": "hindcast.leaderboard.export:write_forecasts:1",
}


@pytest.mark.parametrize("where", list(DIE_AT))
def test_a_process_dying_mid_job_is_completed_by_the_next_run(
    tmp_path, server, clock, uninterrupted, where, service_db
):
    def kill(config, now):
        proc = run_process(config, "once", "--now", now.isoformat(), die=DIE_AT[where])
        assert proc.returncode == 137, proc.stderr

    _interrupted_run(tmp_path, server, clock, kill)
    assert contents(tmp_path, server.url) == uninterrupted
    interrupted = service_state(tmp_path).job_runs(status="interrupted")
    assert len(interrupted) == 1 and "next run completes it" in interrupted[0].error


def test_sigkill_while_a_request_is_in_flight(tmp_path, server, clock, uninterrupted, service_db):
    new_token = next(m for m in sim_markets() if m.resolves > TICKS[0]).yes_token

    def kill(config, now):
        server.block(
            lambda endpoint, params: new_token in (params.get("market"), params.get("token_id"))
        )
        proc = run_process(config, "once", "--now", now.isoformat(), wait=False)
        try:
            assert server.blocked.wait(60), "the service never asked for the new market's history"
            proc.kill()
            proc.wait(30)
        finally:
            server.release()
        assert proc.returncode == -9

    _interrupted_run(tmp_path, server, clock, kill)
    assert contents(tmp_path, server.url) == uninterrupted
    assert service_state(tmp_path).job_runs(status="interrupted")[0].job == "pull"
