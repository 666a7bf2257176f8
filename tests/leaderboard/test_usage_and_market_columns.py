"""`hindcast leaderboard` on a stored run holding model forecasts: usage and cost per forecaster,
the bounded comparison with the market and the subset mark, the same in CSV, JSON, Markdown,
HTML and the terminal; `--prices FILE` prices a model the shipped table does not know."""

from __future__ import annotations

import json

import polars as pl
import pytest

from hindcast.records import Forecast
from hindcast.runs.store import RunStore
from tests.helpers import run_cli
from tests.leaderboard.sample_runs import sweep_runs

PRICED, UNPRICED = "zero-shot:gpt-4.1-mini", "zero-shot:mystery"


def usage(name: str, prompt: int, completion: int, **extra) -> dict:
    return {
        "model": f"openai-compatible:http://127.0.0.1:9/v1#{name}",
        "model_name": name,
        "endpoint": "http://127.0.0.1:9/v1",
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "requests": 1,
        "cache_hits": 0,
        **extra,
    }


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A real baseline sweep (20 markets) plus model forecasts written as a sweep stores them:
    a priced model on every (market, t0) (one answer failed, one from the cache), an unpriced
    one on 3 markets only."""
    url, ids = sweep_runs(tmp_path_factory.mktemp("runs"), ("narrow",))
    store, rid = RunStore(url), ids["narrow"]
    keys = [(s.market_id, s.t0, s.label) for s in store.forecasts(rid) if s.forecaster == "market"]
    for i, (market, t0, label) in enumerate(keys):
        extra = {"retries": 1 if i == 0 else 0, "latency_s": 0.0 if i == 1 else 2.0}
        if i == 1:
            extra.update(requests=0, cache_hits=1)
        forecast = (
            Forecast.failure("no probability", usage=usage("gpt-4.1-mini", 1000, 50, **extra))
            if i == 2
            else Forecast(0.6, usage=usage("gpt-4.1-mini", 1000, 50, **extra))
        )
        store.add(rid, PRICED, market, t0, label, forecast)
    for market, t0, label in [k for k in keys if k[0] in sorted({k[0] for k in keys})[:3]]:
        store.add(
            rid,
            UNPRICED,
            market,
            t0,
            label,
            Forecast(0.2, usage=usage("mystery-7b", 500, 10, retries=0, latency_s=1.0)),
        )
    return url, rid, len(keys)


@pytest.fixture(scope="module")
def exported(stored, tmp_path_factory):
    url, rid, _ = stored
    out = tmp_path_factory.mktemp("board")
    proc = run_cli(
        "leaderboard",
        rid,
        "--db",
        url,
        "--out",
        str(out),
        "--format",
        "csv,json,md,html",
        check=True,
    )
    board = {r["forecaster"]: r for r in json.loads((out / "leaderboard.json").read_text())["rows"]}
    return out, proc, board


def test_usage_and_cost_are_summed_per_forecaster_in_every_format(stored, exported):
    out, proc, board = exported
    _, _, n = stored
    priced, unpriced, market = board[PRICED], board[UNPRICED], board["market"]
    assert (priced["prompt_tokens"], priced["completion_tokens"]) == (1000 * n, 50 * n)
    assert (priced["requests"], priced["cache_hits"], priced["retries"]) == (n - 1, 1, 1)
    assert "latency_s" not in priced and priced["n_failed"] == 1  # wall clock: never exported
    assert (
        priced["cost_usd"] == pytest.approx((1000 * n * 0.40 + 50 * n * 1.60) / 1e6)
        and priced["cost_status"] == "priced"
    )
    assert (
        unpriced["cost_usd"] is None
        and unpriced["cost_status"] == "unknown"
        and unpriced["unpriced"] == "mystery-7b"
    )
    assert (
        market["cost_status"] == "no model"
        and market["prompt_tokens"] is None
        and market["models"] is None
    )
    csv = {r["forecaster"]: r for r in pl.read_csv(out / "leaderboard.csv").to_dicts()}
    assert csv[PRICED]["prompt_tokens"] == 1000 * n and csv[UNPRICED]["cost_status"] == "unknown"
    md, html = (out / "leaderboard.md").read_text(), (out / "report.html").read_text()
    for text in (md, html, proc.stdout):
        assert "unknown" in text and "cost unknown: no price for mystery-7b" in text
    assert f"{1000 * n:,} / {50 * n:,}" in md and f"{1000 * n:,} / {50 * n:,}" in proc.stdout


def test_the_subset_row_is_marked_and_draws_no_interval_in_every_format(stored, exported):
    out, proc, board = exported
    _, _, n = stored
    row = board[UNPRICED]
    assert row["subset"] == "subset: 3 of 20 markets" and board["market"]["subset"] is None
    assert row["brier_ci_low"] is row["diff_ci_low"] is None and row["ci_note"].startswith(
        "n too small: 3 markets"
    )
    assert -1 <= row["brier_diff_vs_market"] <= 1
    md, html = (out / "leaderboard.md").read_text(), (out / "report.html").read_text()
    for text in (md, html, proc.stdout):
        assert "subset: 3 of 20 markets" in text and "n too small" in text
    assert (
        pl.read_csv(out / "leaderboard.csv").filter(pl.col("forecaster") == UNPRICED)["subset"][0]
        == "subset: 3 of 20 markets"
    )


def test_the_per_forecast_table_recomputes_the_token_totals(exported):
    out, _, board = exported
    frame = pl.read_csv(out / "forecasts.csv")
    sums = frame.group_by("forecaster").agg(
        pl.col("prompt_tokens").sum(), pl.col("completion_tokens").sum()
    )
    for r in sums.filter(pl.col("forecaster").str.starts_with("zero-shot")).to_dicts():
        assert (r["prompt_tokens"], r["completion_tokens"]) == (
            board[r["forecaster"]]["prompt_tokens"],
            board[r["forecaster"]]["completion_tokens"],
        )
    assert (
        frame.filter(pl.col("forecaster") == "market")["prompt_tokens"].null_count()
        == frame.filter(pl.col("forecaster") == "market").height
    )


def test_a_price_file_prices_an_unknown_model_and_a_bad_one_is_one_line_exit_1(stored, tmp_path):
    url, rid, _ = stored
    prices = tmp_path / "prices.toml"
    prices.write_text('"mystery-7b" = { input = 2.0, output = 4.0 }\n')
    run_cli(
        "leaderboard",
        rid,
        "--db",
        url,
        "--out",
        str(tmp_path / "a"),
        "--format",
        "json",
        "--prices",
        str(prices),
        check=True,
    )
    rows = {
        r["forecaster"]: r
        for r in json.loads((tmp_path / "a" / "leaderboard.json").read_text())["rows"]
    }
    n_unpriced = rows[UNPRICED]["n_forecasts"]
    assert rows[UNPRICED]["cost_usd"] == pytest.approx(n_unpriced * (500 * 2.0 + 10 * 4.0) / 1e6)
    assert rows[UNPRICED]["cost_status"] == "priced" and rows[PRICED]["cost_status"] == "priced"
    prices.write_text('"mystery-7b" = { input = "cheap" }\n')
    proc = run_cli(
        "leaderboard", rid, "--db", url, "--out", str(tmp_path / "b"), "--prices", str(prices)
    )
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "prices.toml" in proc.stderr
    assert not (tmp_path / "b").exists()
