"""api.sweep scores with the price table it is given (not only the shipped one): the
leaderboard it returns and the exports it writes price a model the shipped table lacks."""

from __future__ import annotations

import csv

from hindcast import api
from hindcast.llm.fake import FakeChatModel, answer
from hindcast.llm.models import Models
from hindcast.replay.spec import ReplaySpec
from hindcast.runs.store import RunStore
from hindcast.scoring.costs import load_prices
from tests.helpers import SAMPLE_MARKETS, at


def test_the_given_price_table_prices_the_leaderboard_and_the_exports(tmp_path):
    (tmp_path / "prices.toml").write_text('"house-model-7b" = { input = 1.0, output = 2.0 }\n')
    fake = FakeChatModel(default=answer('{"probability": 0.3}'))
    with fake.serve() as url, Models() as models:
        spec = ReplaySpec(
            store=SAMPLE_MARKETS,
            limit=2,
            fractions=(0.5,),
            forecasters=(f"zero-shot:model=openai-compatible:{url}#house-model-7b",),
        )
        result = api.sweep(
            spec,
            runs=RunStore(f"sqlite:///{tmp_path / 'h.db'}"),
            out=tmp_path,
            now=at("2026-11-30T00:00:00"),
            models=models,
            prices=load_prices(tmp_path / "prices.toml"),
        )
    (row,) = result.board
    assert (
        row.cost_usd is not None and row.cost_usd > 0
    )  # before: None ("unknown", the shipped table only)
    (exported,) = csv.DictReader(result.paths["csv"].open())
    assert exported["cost_usd"] not in ("", "unknown") and float(exported["cost_usd"]) > 0
    assert result.to_polars()["cost_usd"].to_list() == [row.cost_usd]
