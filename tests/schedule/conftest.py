"""The schedule tests' world: simulated markets resolving between ticks, a fake Polymarket on
127.0.0.1, a service config, the service run in-process or as a real process, and a
snapshot of everything it stored (for comparing an interrupted run with an uninterrupted one)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hindcast.timeutil import iso
from tests.schedule.fake_polymarket import (
    FakePolymarket,
    LocalServer,
    SimClock,
    SimMarket,
)

T0 = datetime(2026, 3, 1, tzinfo=UTC)
TICKS = [T0, T0 + timedelta(days=1), T0 + timedelta(days=2), T0 + timedelta(days=3)]
DRIVER = Path(__file__).with_name("driver.py")
ROOT = Path(__file__).resolve().parents[2]


def sim_markets() -> list[SimMarket]:
    """3 resolved before the first tick, 2 + 2 between the next ticks, none before the last,
    one still open after it."""
    resolves = [
        T0 - timedelta(days=5),
        T0 - timedelta(days=3),
        T0 - timedelta(hours=10),
        T0 + timedelta(hours=6),
        T0 + timedelta(hours=20),
        T0 + timedelta(days=1, hours=3),
        T0 + timedelta(days=1, hours=9),
        T0 + timedelta(days=9),
    ]
    return [
        SimMarket(n, T0 - timedelta(days=30 - n), r, yes=n % 3 != 0)
        for n, r in enumerate(resolves, start=1)
    ]


def resolved_between(markets, after: datetime | None, until: datetime) -> set[str]:
    return {
        m.condition_id
        for m in markets
        if (after is None or m.resolves > after) and m.resolves <= until
    }


CONFIG = """
[service]
db = "runs/hindcast.db"
log = "runs/schedule.log"
runs_out = "runs/exports"

[jobs]
pull = "1h"

[markets]
store = "markets/store"
gamma_url = "{url}/gamma"
clob_url = "{url}/clob"
data_url = "{url}/data"
since = "2026-01-01"
lookback = "2d"
attempts = 1
timeout = 10

[[sweeps]]
name = "baselines"
[sweeps.cutoffs]
fractions = [0.5, 0.9]
[[sweeps.forecasters]]
spec = "market"
[[sweeps.forecasters]]
spec = "constant"
[[sweeps.forecasters]]
spec = "base-rate"
[sweeps.run]
concurrency = 2

[[leaderboards]]
sweep = "baselines"
out = "leaderboards/baselines"
formats = ["csv", "md", "html"]
"""


SERVICE_HEAD = (
    '[service]\ndb = "runs/hindcast.db"\nlog = "runs/schedule.log"\nruns_out = "runs/exports"\n'
)


def sweep_table(name: str, spec: str, store: Path, ids: list[str], run: dict | None = None) -> str:
    """One `[[sweeps]]` table: one forecaster on `ids` of `store` at lifetime fraction 0.5 (+ `[sweeps.run]`)."""
    text = (
        f'\n[[sweeps]]\nname = "{name}"\n[sweeps.markets]\nstore = "{store}"\nids = {json.dumps(ids)}\n'
        f'[sweeps.cutoffs]\nfractions = [0.5]\n[[sweeps.forecasters]]\nspec = "{spec}"\n'
    )
    return text + (
        "[sweeps.run]\n" + "".join(f"{k} = {v}\n" for k, v in run.items()) if run else ""
    )


SERVICE_DB = (
    "runs/hindcast.db"  # the service's database in CONFIG (the `service_db` fixture sets it)
)


@pytest.fixture(params=["sqlite", "postgresql"])
def service_db(request, monkeypatch) -> str:
    """The service's (and its runs') database on each backend, as write_config writes it into
    the config: the default SQLite file, or a new database on the session's real PostgreSQL
    server (tests/pg.py)."""
    if request.param == "postgresql":
        url = request.getfixturevalue("pg_server").create_database()
        monkeypatch.setattr("tests.schedule.conftest.SERVICE_DB", url)
        return url
    return SERVICE_DB


def write_config(folder: Path, url: str, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "hindcast.toml"
    path.write_text(on_service_db(CONFIG.format(url=url) + extra), encoding="utf-8")
    return path


def on_service_db(text: str) -> str:
    """A config's text with its `[service]` database the one `service_db` chose."""
    if SERVICE_DB != "runs/hindcast.db":
        text = text.replace(  # a lock file, needed beside a database that is not a file
            'db = "runs/hindcast.db"',
            f'db = "{SERVICE_DB}"\nlock = "runs/hindcast.schedule.lock"',
            1,
        )
    return text


def query(folder: Path, sql: str, **params) -> list[tuple]:
    """The rows of `sql` (`:name` parameters) in the run database of the config in `folder`,
    whichever backend it is on."""
    from sqlalchemy import create_engine, text

    from hindcast.schedule.config import load

    engine = create_engine(load(folder / "hindcast.toml").db_url)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text(sql), params)]
    finally:
        engine.dispose()


@pytest.fixture
def clock() -> SimClock:
    return SimClock(T0)


@pytest.fixture
def server(clock):
    with LocalServer(FakePolymarket(sim_markets(), clock)) as local:
        yield local


def tick(config_path: Path, now: datetime) -> tuple[dict, str]:
    """`schedule once` in this process at `now`: the job statuses and the JSON log lines."""
    from hindcast.schedule.config import load
    from hindcast.schedule.service import running

    stream = io.StringIO()
    with running(load(config_path), "once", clock=lambda: now, log_stream=stream) as service:
        statuses = service.once(now)
    return statuses, stream.getvalue()


def run_process(config_path: Path, *args: str, die: str | None = None, wait: bool = True, **popen):
    """The schedule CLI in a real process (via the driver, which can make it die mid-job)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **({"HINDCAST_TEST_DIE": die} if die else {})}
    command = [sys.executable, str(DRIVER), *args, "--config", str(config_path)]
    if not wait:
        return subprocess.Popen(
            command,
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            **popen,
        )
    return subprocess.run(
        command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )


def service_state(folder: Path):
    """The service's own records (batches, values, job runs) of the config in `folder`."""
    from sqlalchemy import create_engine

    from hindcast.schedule.config import load
    from hindcast.schedule.state import State

    return State(create_engine(load(folder / "hindcast.toml").db_url))


def log_events(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


# -- what a service stored ----------------------------------------------------------------------
def contents(folder: Path, url: str) -> dict:
    """Everything the service made under `folder`, with the folder's path and the fake's URL taken out:
    market store versions (manifests), runs, forecasts, the service's batches and values,
    and the exported leaderboard files."""

    def clean(text: str) -> str:
        return (
            text.replace(str(folder.resolve()), "<root>")
            .replace(str(folder), "<root>")
            .replace(url, "<fake>")
        )

    store = folder / "markets" / "store"
    versions = {
        p.name: clean((p / "manifest.json").read_text())
        for p in sorted((store / "versions").iterdir())
        if not p.name.startswith(".")
    }

    def rows(sql: str) -> list:
        return sorted(
            tuple(clean(v) if isinstance(v, str) else v for v in r) for r in query(folder, sql)
        )

    tables = {
        "runs": rows("SELECT id, created_at, spec_json, manifest_json FROM runs"),
        "forecasts": rows(
            "SELECT run_id, forecaster, market_id, t0, label, repeat, probability, error, "
            "rationale FROM forecasts"
        ),
        "batches": rows(
            "SELECT sweep, spec, status, run_id, created, finished, markets FROM schedule_batches"
        ),
        "values": rows("SELECT key, value FROM schedule_values"),
    }
    boards = {
        p.name: clean(p.read_text())
        for p in sorted((folder / "leaderboards" / "baselines").glob("*"))
    }
    return {
        "versions": versions,
        "latest": (store / "LATEST").read_text(),
        **tables,
        "boards": boards,
    }


def reference(tmp: Path, url: str, clock: SimClock) -> dict:
    """An uninterrupted service over every tick."""
    config = write_config(tmp, url)
    for now in TICKS:
        clock.now = now
        statuses, _ = tick(config, now)
        assert set(statuses.values()) == {"ok"}, statuses
    return contents(tmp, url)


def at(now: datetime) -> str:
    return iso(now)
