"""Keywords renamed so one name means one thing (issue 26): `run_store=` (the run database)
where `store=` also meant a market store, `model_cutoffs=` (the model cutoff registry) where
`models=` also meant the chat Models. The old spellings still work for one release, each with a
DeprecationWarning naming the new keyword; both spellings at once are refused."""

from __future__ import annotations

import asyncio
import warnings
from datetime import datetime, timezone

import pytest

from hindcast import api, leaderboard, replay, runs
from hindcast.compat import renamed
from hindcast.errors import HindcastError
from tests.helpers import SAMPLE_MARKETS

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)


def _spec():
    return replay.spec_from_mapping(
        {"store": SAMPLE_MARKETS, "forecasters": ["market", "constant"], "limit": 2}
    )


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    folder = tmp_path_factory.mktemp("swept")
    store = runs.RunStore(f"sqlite:///{folder / 'h.db'}")
    return api.sweep(_spec(), runs=store, out=folder / "out", now=NOW), store


def _rows(scores):
    return [(r.forecaster, r.market_id, r.t0, r.probability, r.brier) for r in scores.rows]


def test_rescore_takes_the_old_store_keyword_with_a_warning_naming_run_store(swept):
    result, store = swept
    with pytest.warns(DeprecationWarning, match=r"store= is deprecated; use run_store="):
        old = api.rescore(store=store, run_id=result.run_id)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = api.rescore(run_store=store, run_id=result.run_id)
    assert _rows(old) == _rows(new) != []


def test_rescore_models_keyword_is_the_cutoff_registry_now_model_cutoffs(swept, tmp_path):
    result, store = swept
    missing = tmp_path / "nowhere.toml"
    with pytest.warns(DeprecationWarning, match=r"models= is deprecated; use model_cutoffs="):
        with pytest.raises(HindcastError, match="nowhere.toml"):
            api.rescore(store, result.run_id, models=missing)
    with pytest.raises(HindcastError, match="nowhere.toml"):
        api.rescore(store, result.run_id, model_cutoffs=missing)
    with pytest.raises(TypeError, match="both models= and model_cutoffs="):
        api.rescore(store, result.run_id, models=missing, model_cutoffs=missing)


def test_load_scored_and_score_run_take_the_old_keywords(swept):
    result, store = swept
    with pytest.warns(DeprecationWarning, match="use run_store="):
        old = replay.load_scored(store=store, rid=result.run_id)
    assert _rows(old) == _rows(replay.load_scored(store, result.run_id))
    with pytest.warns(DeprecationWarning, match="use model_cutoffs="):
        board = replay.score_run(store, result.run_id, models=None)
    assert [(b.forecaster, b.brier) for b in board] == [
        (b.forecaster, b.brier) for b in result.board
    ]


def test_run_sweep_takes_store_as_run_store_with_a_warning(swept, tmp_path):
    result, _ = swept
    store = runs.RunStore(f"sqlite:///{tmp_path / 'again.db'}")
    with pytest.warns(DeprecationWarning, match=r"run_sweep\(\): store= is deprecated"):
        again = asyncio.run(replay.run_sweep(_spec(), store=store, out_dir=tmp_path, now=NOW))
    assert again.run_id == result.run_id and again.executed == result.executed > 0
    assert len(store.forecasts(again.run_id)) == result.executed


def test_write_run_takes_store_as_run_store_with_a_warning(swept, tmp_path):
    result, store = swept
    plan = replay.prepare(_spec())
    scores = replay.load_scored(store, result.run_id)
    with pytest.warns(DeprecationWarning, match=r"write_run\(\): store= is deprecated"):
        old = leaderboard.write_run(tmp_path / "old", plan, scores, result.board, None, store=store)
    new = leaderboard.write_run(tmp_path / "new", plan, scores, result.board, None, run_store=store)
    assert sorted(old) == sorted(new) and old["html"].is_file()
    assert old["html"].read_bytes() == new["html"].read_bytes()


def test_renamed_passes_positional_arguments_and_refuses_both_spellings():
    @renamed(old="new")
    def f(a, *, new=None):
        return a, new

    assert f(1, new=2) == (1, 2)
    with pytest.warns(DeprecationWarning, match=r"f\(\): old= is deprecated; use new="):
        assert f(1, old=3) == (1, 3)
    with pytest.raises(TypeError, match=r"f\(\) got both old= and new="):
        f(1, old=3, new=2)
