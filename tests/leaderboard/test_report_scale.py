"""The report's size is bounded whatever the run's: past INLINE_BYTES of records the viewer's
forecasts go into files beside the page (report.data/), whose page carries only their index;
a topic block lists at most the most recovered and most regressed markets. And the split: the
view renders a built record, importing nothing that opens a store or computes an analysis.
(tests/browser/test_large_report_in_chromium.py opens a large run's report in Chromium.)"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from hindcast.leaderboard import analysis, assets, report_data, report_record, viewer
from hindcast.leaderboard.report import write_record
from hindcast.leaderboard.tables import combine
from hindcast.scoring import leaderboard, load_prices
from tests.leaderboard.sample_runs import IMG, SCRIPT

FAST = 100
VIEW = ("report_view", "report_board", "report_html", "report_research")
LEADERBOARD = Path(report_data.__file__).parent


@pytest.fixture(scope="module")
def record(wide):
    combined, prices = combine([wide]), load_prices()
    return report_record.build(
        "t",
        combined,
        leaderboard(combined.rows, replicates=FAST, prices=prices),
        runs=[wide],
        baseline=analysis.MARKET_PRICE,
        tolerance=analysis.TOLERANCE,
        questions={},
        replicates=FAST,
        prices=prices,
        stored=viewer.Stored(),
    )


def many(record, times: int):
    """The record with its forecasts repeated `times` times (each copy's market renamed)."""
    copies = [{**r, "market": f"{r['market']}/{k}"} for k in range(times) for r in record.forecasts]
    return replace(record, forecasts=copies)


def chunk_records(folder: Path) -> list[dict]:
    out = []
    for path in sorted((folder / report_data.FOLDER).glob("forecasts-*.js")):
        text = path.read_text(encoding="ascii")
        head = re.match(rf"{report_data.CALLBACK}\((\d+),\[\n", text)
        assert head and text.endswith("\n]);\n") and int(head.group(1)) == len(out)
        out.append(json.loads(text[head.end() - 2 : -3]))
    return [r for chunk in out for r in chunk]


def test_a_small_run_keeps_its_forecasts_in_the_page(tmp_path, record):
    page = write_record(tmp_path, record).read_text(encoding="utf-8")
    assert ' data-forecasts="' in page and not (tmp_path / report_data.FOLDER).exists()
    assert assets.CSP.replace("'", "&#x27;") in page and "strict-dynamic" not in page


def test_the_page_does_not_grow_with_the_forecasts(tmp_path, record):
    """10× and 40× the records: the pages differ by the files' index (and the count's digits)
    alone, the files hold every record in order."""
    ten = write_record(tmp_path / "ten", many(record, 10), inline_bytes=0)
    forty = write_record(tmp_path / "forty", many(record, 40), inline_bytes=0)
    index = [
        re.search(r'data-chunks="([^"]*)"', p.read_text(encoding="utf-8")).group(1)
        for p in (ten, forty)
    ]
    growth = forty.stat().st_size - ten.stat().st_size
    assert 0 < len(index[1]) - len(index[0]) <= growth <= len(index[1]) - len(index[0]) + 5
    assert chunk_records(tmp_path / "forty") == many(record, 40).forecasts
    assert len(list((tmp_path / "forty" / report_data.FOLDER).glob("*.js"))) >= 5


def test_each_file_is_bounded_and_counted_in_the_index(tmp_path, record):
    page = write_record(tmp_path, many(record, 40), inline_bytes=0).read_text(encoding="utf-8")
    index = json.loads(re.search(r'data-chunks="([^"]*)"', page).group(1).replace("&quot;", '"'))
    files = sorted((tmp_path / report_data.FOLDER).glob("*.js"))
    assert [name for name, _ in index] == [f.name for f in files]
    assert sum(n for _, n in index) == len(record.forecasts) * 40
    assert all(n <= report_data.CHUNK_RECORDS for _, n in index)
    assert all(f.stat().st_size <= report_data.CHUNK_BYTES + 20_000 for f in files)


def test_hostile_text_in_the_files_stays_a_json_string(tmp_path, record):
    hostile = f"{SCRIPT}{IMG}\u2028\u2029]);alert(3);//"
    forecasts = [{**r, "question": hostile} for r in record.forecasts]
    write_record(tmp_path, replace(record, forecasts=forecasts), inline_bytes=0)
    for path in (tmp_path / report_data.FOLDER).glob("*.js"):
        text = path.read_text(encoding="utf-8")
        assert text.isascii() and "\u2028" not in text  # JSON strings, escaped
    assert {r["question"] for r in chunk_records(tmp_path)} == {hostile}


def test_a_report_written_again_smaller_leaves_no_stale_file(tmp_path, record):
    write_record(tmp_path, many(record, 40), inline_bytes=0)
    write_record(tmp_path, many(record, 10), inline_bytes=0)
    assert chunk_records(tmp_path) == many(record, 10).forecasts
    write_record(tmp_path, record)
    assert not (tmp_path / report_data.FOLDER).exists()


def test_the_files_are_byte_reproducible(tmp_path, record):
    for name in ("a", "b"):
        write_record(tmp_path / name, many(record, 10), inline_bytes=0)
    read = [
        {p.name: p.read_bytes() for p in sorted((tmp_path / n).rglob("*")) if p.is_file()}
        for n in ("a", "b")
    ]
    assert read[0] == read[1] and len(read[0]) >= 3


def verdict(market: str, brier: float, baseline: float) -> analysis.MarketVerdict:
    kind = "recovered" if brier < baseline else "regressed" if brier > baseline else "tied"
    return analysis.MarketVerdict(market, "t", 4, brier, baseline, kind)


def test_a_topic_block_lists_the_most_recovered_and_most_regressed_markets():
    n = report_record.LISTED_MARKETS
    few = [verdict(f"m{i:04d}", 0.2, 0.3) for i in range(2 * n)]
    assert report_record.listed(few) == few
    diffs = [(i % 7 - 3) / 10 + i / 1e6 for i in range(1000)]  # -0.3 … 0.3, distinct
    verdicts = [verdict(f"m{i:04d}", 0.5 + d, 0.5) for i, d in enumerate(diffs)]
    shown = report_record.listed(verdicts)
    gains = sorted(v.brier - v.baseline_brier for v in verdicts)
    best, worst = set(gains[:n]), set(gains[-n:])
    assert len(shown) == 2 * n and [v.market_id for v in shown] == sorted(
        v.market_id for v in shown
    )
    assert {v.brier - v.baseline_brier for v in shown} == best | worst


def hindcast_imports(module: str) -> set[str]:
    tree = ast.parse((LEADERBOARD / f"{module}.py").read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("hindcast"):
            names |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names if a.name.startswith("hindcast")}
    return names


@pytest.mark.parametrize("module", VIEW)
def test_the_view_imports_nothing_that_opens_or_computes(module):
    """The rendering modules import only the leaderboard's drawing, display and report modules
    (and the viewer's page size): no store, no scoring, no analysis."""
    allowed = r"hindcast\.leaderboard\.(assets|display|plots|viewer|export\.cell|report_\w+)"
    imported = hindcast_imports(module)
    assert imported and {name for name in imported if not re.match(allowed, name)} == set()
