"""The live arm (`[live]`): over simulated ticks and the loopback Polymarket fake, the markets open
at tick 1 get live forecasts at t0 = the tick, are scored once they resolve (by tick 3), are
hindcast at the same instants, and the backtest–live report shows both; a forecast log edited
after the fact fails verification — with the database a SQLite file and on PostgreSQL."""

from __future__ import annotations

import json
from datetime import timedelta

from typer.testing import CliRunner

from hindcast.cli.common import EXIT_ERROR
from hindcast.cli.live import app
from hindcast.schedule import live, live_report, load
from hindcast.timeutil import iso
from tests.schedule.conftest import (
    T0,
    TICKS,
    query,
    resolved_between,
    service_state,
    sim_markets,
    tick,
    write_config,
)

LIVE = '\n[live]\nsweep = "baselines"\nevery = "1d"\n'
FORECASTERS = {"market", "constant", "base-rate"}


def _open_at(now) -> set[str]:
    return {m.condition_id for m in sim_markets() if m.opened <= now < m.resolves}


def _live_rows(folder) -> list[tuple]:
    return query(
        folder,
        "SELECT forecaster, market_id, t0, label, probability FROM forecasts WHERE run_id = :r",
        r=live.run_id("baselines"),
    )


def _ticks(config, clock, ticks) -> None:
    for now in ticks:
        clock.now = now
        statuses, _ = tick(config, now)
        assert set(statuses.values()) == {"ok"}, statuses


def test_open_markets_get_live_forecasts_scored_once_resolved(tmp_path, server, clock, service_db):
    config = write_config(tmp_path, server.url, LIVE)
    _ticks(config, clock, TICKS[:1])
    rows = _live_rows(tmp_path)
    assert {(f, m) for f, m, *_ in rows} == {(f, m) for f in FORECASTERS for m in _open_at(T0)}
    assert {t0 for _, _, t0, _, _ in rows} == {iso(T0)} and {r[3] for r in rows} == {"live"}
    _ticks(config, clock, TICKS[1:3])
    cfg = load(config)
    report = live_report.for_config(cfg)
    resolved = _open_at(T0) & resolved_between(sim_markets(), None, TICKS[2])
    assert len(resolved) == 4  # markets 4…7 resolve between tick 1 and tick 3; 8 stays open
    live_pairs = {
        (m, t0) for f, m, t0, _, _ in _live_rows(tmp_path) if f == "market" and m in resolved
    }
    assert report.late == 0 and report.scored == len(live_pairs) * len(FORECASTERS)
    gaps = {g.forecaster: g for g in report.gaps}
    assert set(gaps) == FORECASTERS
    for g in gaps.values():
        assert (g.pairs, g.markets) == (len(live_pairs), len(resolved)), g
        assert g.low is not None and g.low <= g.gap <= g.high
        assert g.fraction > 0  # > 1: within the last day (1.0 is a day before resolution)
    # deterministic baselines at the same instant see the same prices: no gap
    assert gaps["market"].gap == 0 and gaps["constant"].gap == 0
    assert {x.forecaster for x in report.regimes} == FORECASTERS
    assert all(x.live_n == len(live_pairs) for x in report.regimes)
    text = live_report.text(report)
    printed = CliRunner().invoke(app, ["report", "--config", str(config)])
    assert printed.exit_code == 0 and printed.stdout.strip() == text
    assert "backtest–live gap" in text and "base-rate" in text
    state = service_state(tmp_path)
    assert set(live.hindcast_runs(state)) == resolved
    verified = live.verify(cfg.live.log, cfg)
    assert verified.ok and len(verified.records) == len(_live_rows(tmp_path))


def test_a_forecast_edited_after_the_fact_fails_verification(tmp_path, server, clock):
    config = write_config(tmp_path, server.url, LIVE)
    _ticks(config, clock, TICKS[:1])
    log = load(config).live.log
    result = CliRunner().invoke(app, ["verify", str(log), "--config", str(config)])
    assert result.exit_code == 0, result.stderr
    lines = log.read_text().splitlines()
    record = json.loads(lines[2])
    record["probability"] = 0.99 if record["probability"] != 0.99 else 0.01
    lines[2] = json.dumps(record, sort_keys=True)
    log.write_text("\n".join(lines) + "\n")
    edited = log.read_bytes()
    for args in (["verify", str(log)], ["verify", str(log), "--config", str(config)]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == EXIT_ERROR and "Traceback" not in result.stderr
        assert result.stderr.strip().splitlines() == [
            f"hindcast: error: live log {log}: record 3: its sha256 does not match its content "
            "(edited after it was written)"
        ]
    clock.now = TICKS[1]
    statuses, _ = tick(config, TICKS[1])
    assert statuses["live"] == "failed"  # nothing is appended to a log that fails verification
    assert log.read_bytes() == edited


def test_a_log_cut_short_or_a_stored_forecast_changed_fails_verification(tmp_path, server, clock):
    config = write_config(tmp_path, server.url, LIVE)
    _ticks(config, clock, TICKS[:1])
    cfg = load(config)
    log, whole = cfg.live.log, cfg.live.log.read_text()
    log.write_text("".join(whole.splitlines(keepends=True)[:-1]))
    assert live.verify(log).ok  # the chain alone cannot see a cut end …
    assert "cut off" in live.verify(log, cfg).bad[1]  # … the recorded head can
    log.write_text(whole)
    query(tmp_path, "SELECT 1")  # the database is reachable
    from sqlalchemy import create_engine, text

    engine = create_engine(cfg.db_url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "UPDATE forecasts SET probability = 0.123 WHERE run_id = :r "
                "AND forecaster = 'constant'"
            ),
            {"r": live.run_id("baselines")},
        )
    engine.dispose()
    bad = live.verify(log, cfg).bad
    assert bad is not None and "the run store holds probability 0.123" in bad[1]


def test_an_unreachable_model_is_an_outage_asked_again_next_tick(
    tmp_path, server, clock, monkeypatch
):
    from hindcast.llm.fake import FakeChatModel, answer

    key = "sk-live-key-0123"
    fake = FakeChatModel(default=answer('{"probability": 0.7}'), require_key=key)
    with fake.serve() as url:
        spec = f"zero-shot:model=openai-compatible:{url}#m,key_env=LIVE_KEY"
        config = write_config(tmp_path, server.url, LIVE)
        config.write_text(config.read_text().replace('spec = "base-rate"', f'spec = "{spec}"'))
        monkeypatch.delenv("LIVE_KEY", raising=False)
        statuses, _ = tick(config, T0)
        assert statuses["live"] == "stopped" and fake.requests == []
        rows = _live_rows(tmp_path)
        assert {f for f, *_ in rows} == {"market", "constant"}  # the others were answered
        attempts = query(
            tmp_path,
            "SELECT forecaster, kind FROM attempts WHERE run_id = :r",
            r=live.run_id("baselines"),
        )
        assert {(f, k) for f, k in attempts} == {(spec, "infrastructure")}
        assert len(attempts) == len(_open_at(T0))
        log = load(config).live.log
        assert len(log.read_text().splitlines()) == len(rows)  # an outage is not logged there
        monkeypatch.setenv("LIVE_KEY", key)
        later = T0 + timedelta(hours=1)
        clock.now = later
        statuses, _ = tick(config, later)
    assert statuses["live"] == "ok", statuses
    asked = [(m, t0, p) for f, m, t0, _, p in _live_rows(tmp_path) if f == spec]
    assert sorted(m for m, _, _ in asked) == sorted(_open_at(later))
    assert {(t0, p) for _, t0, p in asked} == {(iso(later), 0.7)}
    assert live.verify(log, load(config)).ok


def test_reading_commands_on_bad_input_are_one_line_and_write_nothing(tmp_path):
    config = write_config(tmp_path, "http://127.0.0.1:9", LIVE)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    for args, message in (
        (["verify", str(tmp_path / "none.jsonl")], f"live log {tmp_path / 'none.jsonl'}: no such"),
        (["report", "--config", str(config)], "run database"),
        (["report", "--config", str(tmp_path / "missing.toml")], "missing.toml"),
    ):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == EXIT_ERROR and "Traceback" not in result.stderr, result.stderr
        assert len(result.stderr.splitlines()) == 1 and message in result.stderr, result.stderr
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_a_tick_forecasts_at_most_max_markets_and_fetches_only_their_prices(
    tmp_path, server, clock
):
    config = write_config(tmp_path, server.url, LIVE + "max_markets = 2\n")
    _ticks(config, clock, TICKS[:1])
    open_now = sorted(_open_at(T0))  # equal volumes in the fake: the smallest ids are chosen
    assert {m for _, m, *_ in _live_rows(tmp_path)} == set(open_now[:2])
    tokens = {m.yes_token: m.condition_id for m in sim_markets()}
    asked = {
        tokens.get(dict(params).get("token_id") or dict(params).get("market"))
        for service, _, params in server.fake.requests
        if service in ("data", "clob")
    }
    assert asked.isdisjoint(open_now[2:]) and set(open_now[:2]) <= asked
