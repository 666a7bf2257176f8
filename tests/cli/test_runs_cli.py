import json

import pytest

from tests.helpers import run_cli


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    folder = tmp_path_factory.mktemp("runs")
    run_cli(
        "sweep",
        "-f",
        "market",
        "-f",
        "constant",
        "--limit",
        "5",
        "--out",
        str(folder),
        "--db",
        str(folder / "hindcast.db"),
        check=True,
    )
    return folder


def test_runs_list_and_show_carry_the_provenance(out):
    (run,) = json.loads(
        run_cli("runs", "list", "--db", str(out / "hindcast.db"), "--json", check=True).stdout
    )
    assert (
        run["forecasts"] == 5 * 4 * 2
        and run["failed"] == 0
        and run["forecasters"] == ["market", "constant"]
    )
    shown = json.loads(
        run_cli(
            "runs", "show", run["run"], "--db", str(out / "hindcast.db"), "--json", check=True
        ).stdout
    )
    manifest = shown["manifest"]
    assert manifest["market_store"]["version"].startswith("m-")
    assert manifest["identity"]["fractions"] == [0.25, 0.5, 0.75, 1.0]
    assert manifest["scoring_policies"]["outcome"] == "exclude-non-binary"
    assert manifest["packages"]["hindcast-replay"] and "git_revision" in manifest
    assert set(manifest["forecasters"]) == {"market", "constant"}


def test_rescore_slices_stored_forecasts_without_forecasting(out):
    (run,) = json.loads(
        run_cli("runs", "list", "--db", str(out / "hindcast.db"), "--json", check=True).stdout
    )
    proc = run_cli(
        "rescore", run["run"], "--by", "fraction", "--db", str(out / "hindcast.db"), check=True
    )
    assert "fraction=f=0.25" in proc.stdout and "re-scored from stored forecasts" in proc.stdout
    assert (
        run_cli(
            "rescore", run["run"], "--by", "colour", "--db", str(out / "hindcast.db")
        ).returncode
        == 2
    )
    missing = run_cli("runs", "show", "r-000000000000", "--db", str(out / "hindcast.db"))
    assert missing.returncode == 1 and "no run 'r-000000000000'" in missing.stderr


def test_runs_show_sums_usage_and_cost_per_forecaster_unknown_when_unpriced(tmp_path):
    from hindcast.llm.fake import FakeChatModel, answer
    from tests.helpers import SAMPLE_MARKETS

    prices = tmp_path / "prices.toml"
    prices.write_text("priced = { input = 2.0, output = 4.0 }\n")
    fake = FakeChatModel(default=answer('{"probability": 0.3}'))
    db = str(tmp_path / "hindcast.db")
    with fake.serve() as url:
        run_cli(
            "sweep",
            "--store",
            str(SAMPLE_MARKETS),
            "--db",
            db,
            "--limit",
            "2",
            "--fractions",
            "0.5",
            "-f",
            "constant",
            "-f",
            f"zero-shot:model=openai-compatible:{url}#priced",
            "-f",
            f"zero-shot:model=openai-compatible:{url}#unpriced",
            "--out",
            str(tmp_path),
            check=True,
        )
    (run,) = json.loads(run_cli("runs", "list", "--db", db, "--json", check=True).stdout)
    shown = json.loads(
        run_cli(
            "runs", "show", run["run"], "--db", db, "--json", "--prices", str(prices), check=True
        ).stdout
    )
    usage = {name.rpartition("#")[2]: u for name, u in shown["usage"].items()}
    assert usage["priced"]["requests"] == 2 and usage["priced"]["prompt_tokens"] == 20
    assert usage["priced"]["completion_tokens"] == 10 and usage["priced"]["retries"] == 0
    assert (
        usage["priced"]["cost_usd"] == pytest.approx((20 * 2.0 + 10 * 4.0) / 1e6)
        and usage["priced"]["latency_s"] > 0
    )
    assert usage["unpriced"]["cost_usd"] is None and usage["unpriced"]["cost"] == "unknown"
    assert usage["constant"]["cost_usd"] is None and usage["constant"]["cost_status"] == "no model"
    assert shown["attempts"] == [] and run["outages"] == 0
    text = run_cli("runs", "show", run["run"], "--db", db, check=True).stdout
    assert "cost unknown (no price for unpriced)" in text and "infrastructure attempts: 0" in text
    assert "constant: no model (2 forecasts)" in text


def test_runs_show_says_not_recorded_for_usage_an_older_forecast_lacks(tmp_path):
    """Usage from `scoring.usage.summarize`: a field an older row lacks is "not recorded",
    never counted as 0 (the old per-command sum printed retries 0, latency_s 0)."""
    import datetime as dt

    from hindcast.records import Forecast
    from hindcast.runs.store import RunStore

    store = RunStore(f"sqlite:///{tmp_path / 'h.db'}")
    t0 = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    store.ensure_run(
        "r-1",
        {"forecasters": ["zs"], "markets": ["m"]},
        {"market_store": {"version": "m-1", "root": "x"}, "identity": {}},
        t0,
    )
    store.add(
        "r-1",
        "zs",
        "m",
        t0,
        "f=0.5",
        Forecast(
            0.4,
            usage={
                "model": "openai:gpt-4.1-mini",
                "model_name": "gpt-4.1-mini",
                "prompt_tokens": 1000,
                "completion_tokens": 100,
                "requests": 1,
            },
        ),
    )
    store.close()
    text = run_cli("runs", "show", "r-1", "--db", str(tmp_path / "h.db"), check=True).stdout
    assert (
        "retries not recorded" in text and "latency_s not recorded" in text and "requests 1" in text
    )
