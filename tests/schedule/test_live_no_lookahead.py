"""Nothing after t0 reaches a live forecaster. Two worlds differ only after the first tick's
instant T0: in the second, the open markets trade (and so have prices) for days longer and the
inbox also holds news created after T0 — stated outcomes included. The live forecasts made at
T0 are the same in both: their probabilities, what each read from the archive, every model
request (byte for byte) and every log record but the archive snapshot id (the two archives
differ by the post-T0 documents)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

from hindcast.llm.fake import FakeChatModel, answer
from hindcast.schedule import live, load
from hindcast.timeutil import iso
from tests.schedule.conftest import T0, on_service_db, query, sim_markets, tick
from tests.schedule.fake_polymarket import FakePolymarket, LocalServer, SimClock
from tests.schedule.test_inbox import SERVICE

CONFIG = (
    SERVICE  # test_inbox's: [markets] on the fake, [archive] with a news inbox
    + """
[[sweeps]]
name = "agents"
[sweeps.archive]
root = "archive"
[sweeps.cutoffs]
fractions = [0.5]
[[sweeps.forecasters]]
spec = "market"
[[sweeps.forecasters]]
spec = "retrieval-agent:model=openai-compatible:{model}#m,rounds=1,mode=text,repairs=0"

[live]
sweep = "agents"
"""
)


SEQUENCE = ("snapshot", "seq", "prev", "sha256")  # where a record stands; its archive's id


def _news(folder, name: str, rows: list[tuple[str, str]]) -> None:
    (folder / "inbox").mkdir(parents=True, exist_ok=True)
    lines = [
        {
            "id": f"{name}-{i}",
            "created_at": created,
            "title": title,
            "text": f"{title} Reported today.",
            "url": f"https://example.org/{name}/{i}",
            "source": "example",
        }
        for i, (created, title) in enumerate(rows)
    ]
    (folder / "inbox" / name).write_text("".join(json.dumps(r) + "\n" for r in lines))


BEFORE = [
    (f"2026-02-{d:02d}T12:00:00Z", f"Thing {n} may happen soon")
    for d, n in ((3, 4), (9, 5), (20, 6), (27, 7), (28, 8))
]
AFTER = [
    ("2026-03-01T00:00:00Z", "Thing 4 happened, officials confirm"),  # exactly at T0: excluded
    ("2026-03-02T08:00:00Z", "Thing 5 happened after the vote"),
    ("2026-03-20T08:00:00Z", "Thing 6 may happen soon, thing 7 happened"),
]


def _world(folder, later: bool, fake: FakeChatModel, model: str) -> dict:
    markets = sim_markets()
    if later:  # the open markets trade for five days past their scheduled end: more prices
        markets = [  # after T0 (their listing at T0, scheduled end included, is unchanged)
            replace(m, resolves=m.resolves + timedelta(days=5), end=m.resolves)
            if m.resolves > T0
            else m
            for m in markets
        ]
    _news(folder, "a.jsonl", BEFORE)
    if later:
        _news(folder, "b.jsonl", AFTER)
    asked = len(fake.requests)
    with LocalServer(FakePolymarket(markets, SimClock(T0))) as server:
        path = folder / "hindcast.toml"
        path.write_text(on_service_db(CONFIG.format(url=server.url, model=model)))
        statuses, _ = tick(path, T0)
        assert set(statuses.values()) == {"ok"}, statuses
    log = [json.loads(line) for line in load(path).live.log.read_text().splitlines()]
    return {
        "forecasts": query(
            folder,
            "SELECT forecaster, market_id, t0, probability, error, retrievals_json FROM forecasts "
            "WHERE run_id = :r ORDER BY 1, 2",
            r=live.run_id("agents"),
        ),
        "requests": sorted(json.dumps(r, sort_keys=True) for r in fake.requests[asked:]),
        "log": sorted(  # in order of arrival (concurrent): compared as a set of records
            ({k: v for k, v in r.items() if k not in SEQUENCE} for r in log),
            key=lambda r: (r["forecaster"], r["market_id"]),
        ),
        "snapshots": {r["snapshot"] for r in log},
    }


def test_post_t0_prices_and_documents_change_nothing_a_live_forecaster_sees(tmp_path):
    fake = FakeChatModel(default=answer('{"probability": 0.7}'))
    with fake.serve() as model:  # one model server: the forecaster specs are the same text
        first = _world(tmp_path / "a", False, fake, model)
        second = _world(tmp_path / "b", True, fake, model)
    assert first["snapshots"].isdisjoint(second["snapshots"])  # the archives do differ
    assert len(first["forecasts"]) == 2 * 5  # two forecasters × markets 4…8, open at T0
    assert {t0 for _, _, t0, *_ in first["forecasts"]} == {iso(T0)}
    read = [json.loads(r[-1]) for r in first["forecasts"] if r[0].startswith("retrieval")]
    assert all(read) and any(call["ids"] for calls in read for call in calls)  # it did read
    assert first["forecasts"] == second["forecasts"]
    assert first["requests"] == second["requests"] and first["requests"]
    assert first["log"] == second["log"]
    assert all(r["last_price"] is None or r["last_price"][0] < iso(T0) for r in first["log"])
