"""The bad-input corpus (tests/fixtures/bad_input) for `hindcast markets import forecastbench`:
every case exits 1 with one error line naming the file (a malformed row adds its
'file:line: reason' lines below it), prints no traceback, and leaves the store byte-identical."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hindcast.cli.main import app, guarded
from tests.helpers import ROOT, SAMPLE_MARKETS

CORPUS = ROOT / "tests" / "fixtures" / "bad_input"
MARKETS = sorted((CORPUS / "markets_jsonl").iterdir())
PRICES = sorted((CORPUS / "prices_csv").iterdir())


def tree(root: Path) -> dict:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else "dir")
        for p in sorted(root.rglob("*"))
    }


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A store already holding the sample: every failed import must leave it as it is."""
    store = tmp_path_factory.mktemp("corpus") / "store"
    sys_argv = sys.argv
    sys.argv = [
        "hindcast",
        "markets",
        "import",
        "forecastbench",
        "--markets-file",
        str(SAMPLE_MARKETS / "forecastbench" / "markets.jsonl"),
        "--store",
        str(store),
    ]
    try:
        assert guarded(app) == 0
    finally:
        sys.argv = sys_argv
    return store


def run(monkeypatch, capsys, *args) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["hindcast", *args])
    code = guarded(app)
    return code, capsys.readouterr().err


def check(code: int, err: str, named: Path) -> None:
    first = err.splitlines()[0] if err else ""
    assert code == 1, err
    assert first.startswith("hindcast: error: ") and str(named) in err and "Traceback" not in err, (
        err
    )
    rows = err.splitlines()[1:]
    assert all(line.startswith(f"  {named}") or line.startswith("  …") for line in rows), err


@pytest.mark.parametrize("path", MARKETS, ids=[p.name for p in MARKETS])
def test_every_bad_markets_file_is_refused_naming_it(store, monkeypatch, capsys, path):
    before = tree(store)
    code, err = run(
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
    check(code, err, path)
    assert tree(store) == before


@pytest.mark.parametrize("path", PRICES, ids=[p.name for p in PRICES])
def test_every_bad_prices_file_is_refused_naming_it(store, monkeypatch, capsys, path):
    before = tree(store)
    code, err = run(
        monkeypatch,
        capsys,
        "markets",
        "import",
        "forecastbench",
        "--markets-file",
        str(CORPUS / "GOOD_MARKETS.jsonl"),
        "--price-history",
        str(path),
        "--store",
        str(store),
    )
    check(code, err, path)
    assert tree(store) == before


def test_the_good_markets_file_of_the_corpus_imports(tmp_path, monkeypatch, capsys):
    """The cases above fail for their own reason: the row they are made from is valid."""
    code, err = run(
        monkeypatch,
        capsys,
        "markets",
        "import",
        "forecastbench",
        "--markets-file",
        str(CORPUS / "GOOD_MARKETS.jsonl"),
        "--store",
        str(tmp_path / "s"),
    )
    assert code == 0, err
