"""A stored run built by hand for audit tests: three real markets of the shipped sample, each
asked at t0 = resolution − 10 days; a tiny archive snapshot (ingested and frozen here) with
neutral headlines and one MISDATED headline that states market A's outcome (its question, then
"It has officially resolved: NO") although it is stamped 3 days before t0; forecasts whose logged
retrievals read those documents.

  agent  market A: read the misdated headline + a neutral one   p = |outcome − 0.05| (it followed the leak)
         market B: read a neutral one; its rationale states the outcome   p = 0.3
         market C: read a neutral one   p = 0.5
  closed market A, B, C: read nothing, p = 0.5 (C: a failure, no probability)
  filtered market A: its search returned the misdated headline + a neutral one, its leak filter
         withheld the headline (a `withhold` entry, as policy pit+filter logs it)   p = 0.5

A scripted detector (`scripted`, registered here through the public registry) flags a text
holding LEAK_MARK as reveals-outcome and one holding LATER_MARK as after-t0, and counts its
calls: the figures are known exactly without any model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from hindcast import leaks
from hindcast.records import Forecast
from hindcast.runs import retrievals_of
from hindcast.timeutil import iso
from tests.helpers import SAMPLE_MARKETS

LEAK_MARK = "officially resolved"
LATER_MARK = "weeks later"
T0_BEFORE_RESOLUTION = timedelta(days=10)


@dataclass
class Scripted:
    """A leak detector whose verdict is read off marker words (the test knows every answer)."""

    name: str = "scripted-v1"
    calls: list = field(default_factory=list)
    outage: Exception | None = None

    async def judge(self, text: str, question) -> leaks.Verdict:
        if self.outage is not None:
            raise self.outage
        self.calls.append((text, question))
        label = (
            "reveals-outcome"
            if LEAK_MARK in text
            else "after-t0"
            if LATER_MARK in text
            else "neither"
        )
        return leaks.Verdict(
            label, 1.0 if label != "neither" else 0.0, self.name, f"marker for {label}"
        )


SCRIPTED = Scripted()


def register_scripted() -> Scripted:
    """Register `scripted` (once; each call resets its call log) and return the shared instance."""
    SCRIPTED.calls.clear()
    SCRIPTED.outage = None
    leaks.register("scripted", lambda spec, params, models: SCRIPTED)
    return SCRIPTED


@dataclass(frozen=True)
class Planted:
    url: str
    run_id: str
    markets: tuple  # (A, B, C): each (market_id, t0, outcome, market price at t0)
    leak_id: str
    archive: Path
    snapshot: str


def sample_markets(n: int = 3) -> tuple[str, list]:
    """The sample store's version id and `n` markets (id order) resolved 0/1 with a price point
    before resolution − 10 days: (market_id, t0, outcome, question text)."""
    from hindcast.markets.store import open_version

    version = open_version(SAMPLE_MARKETS)
    bundle = version.bundle
    asked = {m.id: m.question for m in bundle.markets}
    chosen = []
    for resolution in sorted(bundle.resolutions, key=lambda r: r.market_id):
        t0 = resolution.resolved_at - T0_BEFORE_RESOLUTION
        history = bundle.prices.get(resolution.market_id, ())
        if resolution.outcome in (0.0, 1.0) and any(p.t < t0 for p in history):
            chosen.append(
                (resolution.market_id, t0, resolution.outcome, asked[resolution.market_id])
            )
    return version.id, chosen[:n]


def build(folder: Path) -> Planted:
    from hindcast import api
    from hindcast.runs.database import db_url
    from hindcast.runs.store import RunStore

    version, markets = sample_markets()
    archive, docs = folder / "archive", _documents(markets)
    inputs = folder / "news.jsonl"
    inputs.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    api.ingest([inputs], "planted", "headlines", archive)
    snapshot = api.freeze(archive)
    url = db_url(folder / "hindcast.db")
    store = RunStore(url)
    run_id = "audit-planted"
    manifest = {
        "market_store": {"root": str(SAMPLE_MARKETS), "version": version},
        "archive": {"root": str(archive.resolve()), "snapshot": snapshot},
        "identity": {"snapshot": snapshot},
        "forecasters": {},
    }
    store.ensure_run(run_id, {}, manifest, markets[0][1])
    _forecasts(store, run_id, markets)
    scored = {
        r.market_id: r.market_price
        for r in api.rescore(store, run_id).rows
        if r.forecaster == "agent"
    }
    store.close()
    return Planted(
        url,
        run_id,
        tuple((m, t0, y, scored[m]) for m, t0, y, _ in markets),
        "leak-a",
        archive,
        snapshot,
    )


def _documents(markets: list) -> list[dict]:
    (a, t0_a, y_a, asked), (_, t0_b, _, _), (_, t0_c, _, _) = markets
    stamp = lambda t0, days: int((t0 - timedelta(days=days)).timestamp())  # noqa: E731
    outcome = "YES" if y_a == 1.0 else "NO"
    return [
        {
            "id": "leak-a",
            "created_utc": stamp(t0_a, 3),
            "source": "Planted Wire",
            "kind": "news_headline",
            "title": f"{asked.rstrip('?')}? It has {LEAK_MARK}: {outcome}",
        },
        {
            "id": "neutral-a",
            "created_utc": stamp(t0_a, 5),
            "source": "Planted Wire",
            "kind": "news_headline",
            "title": "Officials meet to discuss the calendar",
        },
        {
            "id": "neutral-b",
            "created_utc": stamp(t0_b, 5),
            "source": "Planted Wire",
            "kind": "news_headline",
            "title": "Analysts disagree about next quarter",
        },
        {
            "id": "neutral-c",
            "created_utc": stamp(t0_c, 5),
            "source": "Planted Wire",
            "kind": "news_headline",
            "title": "A quiet week for the markets",
        },
    ]


def _forecasts(store, run_id: str, markets: list) -> None:
    (a, t0_a, y_a, _), (b, t0_b, _, _), (c, t0_c, _, _) = markets
    search = lambda ids: ({"op": "search", "query": "q", "k": 5, "mode": "text", "ids": ids},)  # noqa: E731
    agent = [
        (
            a,
            t0_a,
            abs(y_a - 0.05),
            "",
            search(["leak-a", "neutral-a"])
            + ({"op": "read", "doc_id": "leak-a", "ids": ["leak-a"]},),
        ),
        (b, t0_b, 0.3, f"It has {LEAK_MARK} already.", search(["neutral-b"])),
        (c, t0_c, 0.5, "Nothing decisive yet.", search(["neutral-c"])),
    ]
    for market, t0, p, rationale, calls in agent:
        forecast = Forecast(p, rationale=rationale)
        store.add(run_id, "agent", market, t0, "at", forecast, retrievals_of(calls))
    for market, t0, _, _, _ in agent:
        forecast = Forecast(None, error="no answer") if market == c else Forecast(0.5)
        store.add(run_id, "closed", market, t0, "at", forecast)
    returned = search(["leak-a", "neutral-a"])
    withhold = {
        "op": "withhold",
        "doc_id": "leak-a",
        "verdict": {"label": "reveals-outcome"},
        "via": returned[0],
        "ids": [],
    }
    store.add(
        run_id, "filtered", a, t0_a, "at", Forecast(0.5), retrievals_of(returned + (withhold,))
    )


def brier(p: float, y: float) -> float:
    return (p - y) ** 2


def t0_text(t0) -> str:
    return iso(t0)
