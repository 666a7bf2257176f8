"""Evidence that scales: every built-in cheap forecaster stores evidence of bounded size, whatever
the number of markets — base-rate records the rule and its counts (n resolved before t0, n Yes),
not the id of every market resolved before t0 (the ids are recomputable from the run's store
version and t0: `Context.resolved_before()`). And the Outcomes index a sweep builds once gives
every Context exactly what a scan of the resolutions gives."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
from datetime import timedelta

from hindcast import api
from hindcast.forecasters import Outcomes, registry
from hindcast.forecasters.base import Context
from hindcast.forecasters.baselines import RULE
from hindcast.records import Question, Resolution
from hindcast.replay.spec import ReplaySpec
from hindcast.timeutil import parse_utc
from tests.helpers import SAMPLE_MARKETS, at

BOUND = 200  # bytes of evidence_json per baseline forecast
CHEAP = ("market", "constant", "base-rate")
T0 = at("2026-01-01T00:00:00")


def many_resolutions(n: int, seed: int = 5) -> tuple[Resolution, ...]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        known = T0 - timedelta(days=rnd.randint(-30, 400), seconds=rnd.randint(0, 86_399))
        status = rnd.choice(("yes", "no", "no", "fifty-fifty"))
        out.append(Resolution(f"m{i:05d}", status, known, known))
    return tuple(out)


def test_every_cheap_builtin_is_declared_cheap_and_its_evidence_is_bounded_at_any_scale():
    resolutions = many_resolutions(10_000)
    question = Question("m00000", "Will it?", "", T0)
    for name in CHEAP:
        forecaster = registry.create(name)
        assert forecaster.cheap
        ctx = Context(T0, "m00000", (), resolutions)
        forecast = asyncio.run(forecaster.forecast(question, ctx))
        assert len(json.dumps(list(forecast.evidence))) <= BOUND, name


def test_base_rate_evidence_is_the_rule_and_the_counts_that_resolved_before_lists():
    resolutions = many_resolutions(2_000)
    ctx = Context(T0, "m00007", (), resolutions)
    forecast = asyncio.run(
        registry.create("base-rate").forecast(Question("m00007", "?", "", T0), ctx)
    )
    past = ctx.resolved_before()
    yes = sum(r.outcome for r in past)
    assert forecast.evidence == (f"{RULE}: n={len(past)}, yes={yes:g}",)
    assert forecast.probability == (yes + 1.0) / (len(past) + 2.0)


def test_a_swept_run_stores_at_most_200_bytes_of_evidence_per_baseline_forecast(tmp_path):
    """On the shipped sample (57 markets): a base-rate forecast at the last cutoffs stored
    every earlier market's id (kilobytes; 147 KB a forecast at 10,000 markets)."""
    result = api.sweep(
        ReplaySpec(store=SAMPLE_MARKETS, forecasters=CHEAP),
        db=tmp_path / "h.db",
        out=tmp_path / "out",
        now=parse_utc("2026-03-01T00:00:00Z"),
    )
    with sqlite3.connect(tmp_path / "h.db") as db:
        sizes = db.execute(
            "SELECT forecaster, max(length(evidence_json)), count(*) FROM forecasts "
            "WHERE run_id = ? GROUP BY forecaster",
            (result.run_id,),
        ).fetchall()
    assert {name for name, _, _ in sizes} == set(CHEAP)
    assert all(top <= BOUND for _, top, _ in sizes), sizes


def test_the_outcomes_index_gives_each_context_what_a_scan_gives():
    resolutions = many_resolutions(3_000, seed=9)
    outcomes = Outcomes(resolutions)
    rnd = random.Random(2)
    for _ in range(200):
        t0 = T0 - timedelta(days=rnd.randint(-40, 420), seconds=rnd.randint(0, 86_399))
        market = f"m{rnd.randint(0, 3_100):05d}"
        scanned = [
            (r.market_id, r.outcome)
            for r in resolutions
            if r.known_at < t0 and r.outcome is not None and r.market_id != market
        ]
        indexed = Context(t0, market, (), outcomes)
        assert [(p.market_id, p.outcome) for p in indexed.resolved_before()] == scanned
        assert indexed.resolved_counts() == (len(scanned), sum(o for _, o in scanned))
