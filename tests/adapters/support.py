"""A small real archive around one real sample market's t0 (issue 27 tests).

The market is the first Yes/No market of the shipped store, replayed at lifetime fraction 0.5.
The archive (ingested, frozen, embedded with the hash embedder here) holds headlines about it
created before t0, one created exactly at t0 and some after; `extra=True` adds more after t0
(the property tests compare the two)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from hindcast import adapters, api, markets
from hindcast.records import Market, PricePoint, Resolution
from hindcast.replay.plan import context_at
from tests.helpers import SAMPLE_MARKETS

FRACTION = 0.5
QUERY = "Fed rate cuts 2025"
PYTHON_CMD = ("-m", "hindcast", "mcp", "serve")


def sample_market() -> str:
    bundle = markets.open_version(SAMPLE_MARKETS, None).bundle
    outcomes = {r.market_id: r.outcome for r in bundle.resolutions}
    return next(
        m.id for m in sorted(bundle.markets, key=lambda m: m.id) if outcomes[m.id] is not None
    )


def sample_t0():
    bound = adapters.bind(SAMPLE_MARKETS, sample_market(), fraction=FRACTION)
    return bound.question.t0


def headlines(t0, extra: bool = False) -> list[dict]:
    def row(doc_id: str, delta: timedelta, title: str) -> dict:
        return {
            "id": doc_id,
            "created_utc": int((t0 + delta).timestamp()),
            "title": title,
            "source": "Test Wire",
            "kind": "news_headline",
        }

    rows = [
        row("pre-1", -timedelta(days=3), "Fed rate cuts in 2025: two cuts now expected by traders"),
        row("pre-2", -timedelta(days=20), "FOMC meeting minutes show division over rate cuts"),
        row("pre-3", -timedelta(seconds=1), "Fed officials weigh another rate cut in 2025"),
        row(
            "at-t0", timedelta(0), "Fed rate cuts 2025: exactly two cuts confirmed, market resolves"
        ),
        row("post-1", timedelta(days=2), "Fed rate cuts 2025 settled: the answer is known"),
    ]
    if extra:
        rows += [
            row(
                f"post-extra-{n}",
                timedelta(days=1 + n),
                f"Fed rate cuts 2025 outcome {n}: it happened",
            )
            for n in range(5)
        ]
    return rows


def build_archive(folder: Path, t0, extra: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    inputs = folder / "news.jsonl"
    inputs.write_text("".join(json.dumps(r) + "\n" for r in headlines(t0, extra)), encoding="utf-8")
    archive = folder / "archive"
    api.ingest([inputs], "testwire", "headlines", archive)
    api.embed(archive, api.freeze(archive), "hash")
    return archive


def with_post_t0_market_data(bound):
    """`bound`'s (market, t0) rebuilt through the engine's context builder over a
    bundle with price points at and after t0 and two new markets resolved, public at and after
    t0, added."""
    t0, market = bound.question.t0, bound.question.market_id
    bundle = bound.plan.bundle
    prices = dict(bundle.prices)
    added = tuple(PricePoint(t0 + timedelta(hours=h), 0.99) for h in (0, 1, 5))
    prices[market] = tuple(sorted(tuple(prices.get(market, ())) + added, key=lambda p: p.t))
    extra = (
        Resolution("post-t0-market", "yes", t0 + timedelta(days=1), t0 + timedelta(days=1)),
        Resolution("at-t0-market", "no", t0 - timedelta(days=1), t0),
    )
    markets = tuple(bundle.markets) + tuple(
        Market(r.market_id, f"Will {r.market_id} happen?", "") for r in extra
    )
    plan = replace(
        bound.plan,
        bundle=replace(
            bundle, markets=markets, prices=prices, resolutions=tuple(bundle.resolutions) + extra
        ),
    )
    ctx = context_at(plan, bound.cutoff)
    return adapters.Bound(
        bound.question, ctx, adapters.t0_tools(bound.question, ctx), bound.cutoff, plan
    )
