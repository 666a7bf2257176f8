"""`hindcast markets import | list | show` on the shipped sample and on a pulled store."""

import json

import httpx
from typer.testing import CliRunner

from hindcast.cli.main import app
from hindcast.cli.markets import _instant
from hindcast.markets.polymarket import PolymarketClient
from hindcast.markets.prices import price_at
from hindcast.markets.pull import PullQuery, pull
from hindcast.markets.store import open_version
from tests.helpers import SAMPLE_MARKETS, at, run_cli
from tests.markets.conftest import CLOB, GAMMA, by_question, mock_transport

FED = "0x05af636e0989accb08334a74f69e5368e0aa28fe498fd16a3ca991e6dc5ae2cc"


def invoke(*args):
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_import_forecastbench_writes_the_version_the_sample_ships(tmp_path):
    source = SAMPLE_MARKETS / "forecastbench"
    out = invoke(
        "markets",
        "import",
        "forecastbench",
        "--markets-file",
        str(source / "markets.jsonl"),
        "--price-history",
        str(source / "prices_daily.csv"),
        "--store",
        str(tmp_path),
    )
    assert f"(version {open_version(SAMPLE_MARKETS).id})" in out and "imported 57 market(s)" in out


def test_import_of_a_malformed_file_fails_with_its_line_and_writes_nothing(tmp_path):
    bad = tmp_path / "m.jsonl"
    bad.write_text('{"id": "0xabc"\n', encoding="utf-8")
    proc = run_cli(
        "markets",
        "import",
        "forecastbench",
        "--markets-file",
        str(bad),
        "--store",
        str(tmp_path / "s"),
    )
    assert (
        proc.returncode == 1
        and f"{bad}:1: invalid JSON" in proc.stderr
        and not (tmp_path / "s").exists()
    )


def test_list_json_is_every_market_of_the_sample_by_default():
    rows = json.loads(invoke("markets", "list", "--json"))
    assert len(rows) == 57 and rows[0]["id"] == FED and rows[0]["status"] == "no"
    assert {r["status"] for r in rows} <= {"yes", "no"} and all(
        r["resolved_at"].endswith("Z") for r in rows
    )


def test_list_prints_a_table():
    out = invoke("markets", "list", "--store", str(SAMPLE_MARKETS))
    assert (
        f"{FED[:12]} " in out
        and "57 market(s)" in out
        and "Will 2 Fed rate cuts happen in 2025?" in out
    )


def test_show_at_t0_gives_the_last_price_strictly_before_t0_and_its_instant():
    view = json.loads(invoke("markets", "show", FED, "--t0", "2025-10-31T00:00:00Z", "--json"))
    history = open_version(SAMPLE_MARKETS).bundle.prices[FED]
    expected = price_at(history, at("2025-10-31T00:00:00"))
    assert view["at_t0"]["price"] == {
        "p": expected.p,
        "t": "2025-10-30T00:00:00Z",
    }  # the point at t0 is not used
    assert (
        view["resolution"]["status"] == "no" and view["lifetime"]["end"] == "2025-12-10T00:00:00Z"
    )
    assert view["at_t0"]["description"].startswith("The FED interest rates")


def test_show_text_names_the_instant_of_the_price_and_accepts_an_id_prefix():
    out = invoke("markets", "show", FED[:8], "--t0", "2025-11-01")
    assert (
        "price 0.27 (the point at 2025-10-31T00:00:00Z)" in out
        and "lifetime: 2025-10-06T00:00:00Z →" in out
    )


def test_show_refuses_a_t0_at_the_effective_resolution():
    proc = run_cli("markets", "show", FED, "--t0", "2025-12-10T00:00:00Z")
    assert proc.returncode == 1
    assert proc.stderr.startswith(
        "hindcast: error: cutoff 2025-12-10T00:00:00Z is at or after market"
    )


def test_show_of_an_unknown_or_ambiguous_id_is_an_error():
    assert "no market '0xnope' in the market store" in run_cli("markets", "show", "0xnope").stderr
    assert "matches" in run_cli("markets", "show", "0x").stderr


def test_show_a_pulled_market_with_its_polymarket_metadata(tmp_path, fake):
    client = PolymarketClient(
        httpx.Client(transport=mock_transport(fake)), GAMMA, CLOB, sleep=lambda s: None
    )
    pull(tmp_path, client, PullQuery(page_size=5), at("2026-11-30T00:00:00"))
    acend = by_question("Acend")["conditionId"]
    out = invoke("markets", "show", acend, "--store", str(tmp_path), "--t0", "2026-01-10T12:00:00Z")
    assert (
        "(YES = 'Acend', NO = 'Bebop')" in out
        and "negRisk True" in out
        and "category Sports" in out
    )
    assert "price none (no price point before t0)" in out


def test_dates_on_the_command_line_are_utc_and_until_includes_its_day():
    assert _instant("2026-01-31", "--since") == at("2026-01-31T00:00:00")
    assert _instant("2026-01-31", "--until", end_of_day=True) == at("2026-01-31T23:59:59")
    assert _instant("2026-01-31T12:00:00Z", "--until", end_of_day=True) == at("2026-01-31T12:00:00")
    proc = run_cli("markets", "pull", "--since", "last tuesday", "--store", "/nonexistent")
    assert proc.returncode == 2 and "'last tuesday' is not a date or ISO instant" in proc.stderr


def test_import_requires_markets_file_and_creates_nothing_without_it(tmp_path):
    proc = run_cli("markets", "import", "forecastbench", "--store", str(tmp_path / "n"))
    assert proc.returncode == 2 and "Missing option '--markets-file'" in proc.stderr
    assert not (tmp_path / "n").exists()
    help_text = invoke("markets", "import", "forecastbench", "--help")
    assert "--markets-file" in help_text and "--price-history" in help_text
