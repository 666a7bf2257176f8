"""`hindcast markets import forecastbench` on bad input: one line naming the file (and the
row's line), exit 1, no traceback, and the store byte-identical to before."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from hindcast.cli.main import app, guarded
from hindcast.markets.importers import import_forecastbench
from hindcast.markets.store import open_version
from tests.helpers import SAMPLE_MARKETS, run_cli

SOURCE = SAMPLE_MARKETS / "forecastbench"


def tree(root: Path) -> dict:
    """Every file's bytes and every folder below root (empty when root does not exist)."""
    if not root.exists():
        return {}
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else "dir")
        for p in sorted(root.rglob("*"))
    }


def hindcast(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """The `hindcast` entry point in this process (the same error mapping as the console script)."""
    monkeypatch.setattr(sys, "argv", ["hindcast", *args])
    code = guarded(app)
    out = capsys.readouterr()
    return code, out.out, out.err


def first_row() -> dict:
    return json.loads((SOURCE / "markets.jsonl").read_text(encoding="utf-8").splitlines()[0])


BAD_ROWS = [
    ({"background": 5}, "background must be a string"),
    ({"url": ["https://x"]}, "url must be a string"),
    ({"slug": {"a": 1}}, "slug must be a string"),
    ({"market_info_open_datetime": "0001-01-01T00:00:00+01:00"}, "market_info_open_datetime"),
    (
        {"market_info_close_datetime": "9999-12-31"},
        "market_info_close_datetime: 9999-12-31 is outside",
    ),
    ({"resolution_date": "9999-12-31"}, "resolution_date: 9999-12-31 is outside"),
    ({"resolved_to": True}, "resolved_to True is not 1.0, 0.0 or 0.5"),
    (
        {"freeze_points": [{"freeze_datetime": "0001-01-01T00:30:00+02:00", "freeze_value": 0.5}]},
        "freeze_datetime",
    ),
    (
        {"freeze_points": [{"freeze_datetime": "2025-09-01T00:00:00Z", "freeze_value": True}]},
        "freeze_value must be a number",
    ),
]


@pytest.mark.parametrize("change, reason", BAD_ROWS, ids=[r for _, r in BAD_ROWS])
def test_a_bad_value_is_one_line_naming_file_and_line_and_nothing_is_written(
    tmp_path, monkeypatch, capsys, change, reason
):
    good = first_row()
    path = tmp_path / "markets.jsonl"
    path.write_text(
        json.dumps(good) + "\n" + json.dumps({**good, **change, "id": "0x" + "ab" * 32}) + "\n",
        encoding="utf-8",
    )
    store = tmp_path / "store"
    code, _, _ = hindcast(
        monkeypatch,
        capsys,
        "markets",
        "import",
        "forecastbench",
        "--markets-file",
        str(SOURCE / "markets.jsonl"),
        "--store",
        str(store),
    )
    assert code == 0
    before = tree(store)
    code, out, err = hindcast(
        monkeypatch,
        capsys,
        "markets",
        "import",
        "forecastbench",
        "--markets-file",
        str(path),
        "--store",
        str(store),
    )
    assert (
        code == 1
        and "Traceback" not in err
        and err.startswith("hindcast: error: 1 malformed row(s) in ")
    )
    assert f"{path}:2: " in err and reason in err, err
    assert tree(store) == before


def test_a_bad_date_in_the_prices_file_names_its_line(tmp_path, monkeypatch, capsys):
    prices = tmp_path / "prices.csv"
    header, row, *_ = (SOURCE / "prices_daily.csv").read_text(encoding="utf-8").splitlines()
    cells = row.split(",")
    cells[header.split(",").index("date")] = "9999-12-31"
    cells[header.split(",").index("method")] = "v2_value_at_date"
    prices.write_text(header + "\n" + ",".join(cells) + "\n", encoding="utf-8")
    code, _, err = hindcast(
        monkeypatch,
        capsys,
        "markets",
        "import",
        "forecastbench",
        "--markets-file",
        str(SOURCE / "markets.jsonl"),
        "--price-history",
        str(prices),
        "--store",
        str(tmp_path / "s"),
    )
    assert (
        code == 1 and f"{prices}:2: date: 9999-12-31 is outside" in err and "Traceback" not in err
    )
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_an_empty_markets_file_never_becomes_the_latest_version(
    tmp_path, monkeypatch, capsys, text
):
    store = tmp_path / "store"
    assert (
        hindcast(
            monkeypatch,
            capsys,
            "markets",
            "import",
            "forecastbench",
            "--markets-file",
            str(SOURCE / "markets.jsonl"),
            "--store",
            str(store),
        )[0]
        == 0
    )
    before, version = tree(store), open_version(store).id
    empty = tmp_path / "markets.jsonl"
    empty.write_text(text, encoding="utf-8")
    code, _, err = hindcast(
        monkeypatch,
        capsys,
        "markets",
        "import",
        "forecastbench",
        "--markets-file",
        str(empty),
        "--store",
        str(store),
    )
    assert (
        code == 1
        and err == f"hindcast: error: {empty}: no market in this file; nothing was written\n"
    )
    assert tree(store) == before and open_version(store).id == version


def test_the_importer_itself_refuses_an_empty_file(tmp_path):
    from hindcast.errors import MarketDataError

    (tmp_path / "m.jsonl").write_text("")
    with pytest.raises(MarketDataError, match="no market in this file"):
        import_forecastbench(tmp_path / "m.jsonl", None)


def test_bad_input_through_the_console_script_prints_no_traceback(tmp_path):
    good = first_row()
    path = tmp_path / "m.jsonl"
    path.write_text(
        json.dumps({**good, "background": 12, "resolved_to": True}) + "\n", encoding="utf-8"
    )
    proc = run_cli(
        "markets",
        "import",
        "forecastbench",
        "--markets-file",
        str(path),
        "--store",
        str(tmp_path / "s"),
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.splitlines()[0].startswith("hindcast: error: 1 malformed row(s) in ")
    assert f"{path}:1: background must be a string" in proc.stderr and not (tmp_path / "s").exists()


def test_a_store_write_that_fails_leaves_no_trace(tmp_path):
    """A bundle Arrow cannot hold fails before anything is written: no folder, no LATEST."""
    from dataclasses import replace

    from hindcast.markets.store import write_version

    bundle = import_forecastbench(SOURCE / "markets.jsonl", None)
    broken = replace(
        bundle, markets=(replace(bundle.markets[0], description=5), *bundle.markets[1:])
    )
    with pytest.raises(Exception):
        write_version(tmp_path / "s", broken)
    assert not (tmp_path / "s").exists()


def test_a_prices_file_that_is_not_utf8_is_one_line_naming_it(tmp_path, monkeypatch, capsys):
    prices = tmp_path / "prices.csv"
    prices.write_bytes((SOURCE / "prices_daily.csv").read_bytes()[:400] + b"\xff\xfe caf\xe9\n")
    code, _, err = hindcast(
        monkeypatch,
        capsys,
        "markets",
        "import",
        "forecastbench",
        "--markets-file",
        str(SOURCE / "markets.jsonl"),
        "--price-history",
        str(prices),
        "--store",
        str(tmp_path / "s"),
    )
    assert code == 1 and "Traceback" not in err and f"{prices}: not UTF-8 text" in err, err
    assert not (tmp_path / "s").exists()


def test_a_pull_into_a_store_another_pull_holds_exits_3(tmp_path, monkeypatch, capsys):
    """Exit code 3 means 'another instance holds the lock' for every command."""
    from hindcast.filelock import FileLock

    store = tmp_path / "store"
    store.mkdir()
    with FileLock(store / ".pull.lock").acquire({"pid": 4242, "since": "2026-11-30T05:59:00Z"}):
        before = tree(store)
        code, out, err = hindcast(
            monkeypatch,
            capsys,
            "markets",
            "pull",
            "--store",
            str(store),
            "--gamma-url",
            "http://127.0.0.1:9",
            "--clob-url",
            "http://127.0.0.1:9",
        )
        assert code == 3 and out == "" and len(err.splitlines()) == 1
        assert err.startswith(f"hindcast: error: another pull into {store} is running (pid 4242")
        assert tree(store) == before


def test_a_pull_url_without_a_scheme_is_a_usage_error_naming_it(tmp_path, monkeypatch, capsys):
    code, out, err = hindcast(
        monkeypatch,
        capsys,
        "markets",
        "pull",
        "--store",
        str(tmp_path / "s"),
        "--gamma-url",
        "gamma-api.polymarket.com",
    )
    assert (
        code == 2
        and "--gamma-url" in err
        and "'gamma-api.polymarket.com' is not an http(s) URL" in err
    )
    assert "Traceback" not in err and not (tmp_path / "s").exists()


def test_a_pull_that_fetched_nothing_leaves_no_cache_behind(tmp_path, monkeypatch, capsys):
    """Only the lock file remains (the lock is released, the file kept); no empty work folders."""
    store = tmp_path / "s"
    code, _, err = hindcast(
        monkeypatch,
        capsys,
        "markets",
        "pull",
        "--store",
        str(store),
        "--attempts",
        "1",
        "--gamma-url",
        "http://127.0.0.1:9",
        "--clob-url",
        "http://127.0.0.1:9",
    )
    assert (
        code == 1
        and len(err.splitlines()) == 1
        and "http://127.0.0.1:9/markets/keyset: connection failed" in err
    )
    assert sorted(p.name for p in store.rglob("*")) == [".pull.lock"]
