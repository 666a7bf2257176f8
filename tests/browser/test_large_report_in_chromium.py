"""A large run's report in real headless Chromium: its forecasts in files beside the page.

The run is generated as benchmarks/report_scale.py generates its 10,000-market run, at a size
that keeps this module near 30 s: the sample's real markets replicated to MARKETS (new ids,
their real prices), imported, and the three baselines swept at 4 fractions by the engine —
MARKETS × 12 forecasts, more than a page carries inline, so the viewer reads them from
report.data/. Checked: the page opens with no error and requests nothing but itself and its
files; the viewer shows the first page, pages to the last row, and a search reads every file;
the leaderboard's numbers equal a computation made here from the run database and the markets
file alone. The size bound at 10,000 markets and the time to open are the benchmark's
(benchmarks/report_scale.py, docs/performance.md): no test asserts a wall-clock time.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from collections import defaultdict

import pytest

from benchmarks.report_scale import make_run
from hindcast.leaderboard import report_data, viewer
from hindcast.leaderboard.report import write_report
from hindcast.replay import load_scored
from hindcast.runs import RunStore
from tests.browser.cdp import loaded

pytestmark = pytest.mark.browser
MARKETS = 500  # 6,000 forecasts, about 2.7 MB of records: 3 files beside the page


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    return make_run(tmp_path_factory.mktemp("large-run"), MARKETS)


@pytest.fixture(scope="module")
def report(made, tmp_path_factory):
    store = RunStore(made.db_url, read_only=True)
    scored = load_scored(store, made.run_id)
    stored = viewer.from_store(store, [made.run_id])
    return write_report(
        tmp_path_factory.mktemp("report"), [scored], "large run", replicates=100, stored=stored
    )


@pytest.fixture(scope="module")
def expected(made):
    """The run's forecasts read here from its database (newest attempt of each key) with each
    market's outcome from the markets file: canonical order, titles, Brier per forecaster."""
    path = made.db_url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as conn:
        rows = conn.execute(
            "SELECT forecaster, market_id, t0, repeat, label, probability, attempt "
            "FROM forecasts WHERE run_id = ? ORDER BY forecaster, market_id, t0, repeat, attempt",
            (made.run_id,),
        ).fetchall()
    newest = {(f, m, t, r): (label, p) for f, m, t, r, label, p, _ in rows}
    outcomes = {
        (d := json.loads(line))["id"]: d["resolved_to"]
        for line in made.markets_file.read_text(encoding="utf-8").splitlines()
    }
    briers: dict[str, list[float]] = defaultdict(list)
    counts: dict[str, int] = defaultdict(int)
    for (name, market, _, _), (_, p) in newest.items():
        counts[name] += 1
        if p is not None:
            briers[name].append((p - outcomes[market]) ** 2)
    titles = [f"{f} · {m} · t0 {t} · {label}" for (f, m, t, _), (label, _) in newest.items()]
    return {
        "titles": titles,
        "brier": {n: math.fsum(b) / len(b) for n, b in briers.items()},
        "counts": dict(counts),
    }


@pytest.fixture(scope="module")
def page(report, tmp_path_factory):
    yield from loaded(report, tmp_path_factory.mktemp("profile"))


def state(page) -> dict:
    return page.evaluate("""(() => ({
        status: document.getElementById("viewer-status").textContent,
        titles: Array.from(document.querySelectorAll("#viewer-list article h3"), h => h.textContent),
        first: document.getElementById("viewer-first").disabled,
        last: document.getElementById("viewer-last").disabled}))()""")


def until(page, done, timeout: float = 20.0) -> dict:
    """The viewer's state once `done(state)` (files load asynchronously); fails after `timeout`."""
    deadline = time.monotonic() + timeout
    while not done(now := state(page)):
        assert time.monotonic() < deadline, now
        page.settle(0.05)
    return now


def search(page, text: str) -> None:
    page.evaluate(
        "(() => { const b = document.getElementById('viewer-search'); "
        f"b.value = {json.dumps(text)}; b.dispatchEvent(new Event('input')); }})()"
    )


def test_the_forecasts_are_in_files_beside_a_small_page(report, expected):
    files = sorted((report.parent / report_data.FOLDER).glob("forecasts-*.js"))
    total = len(expected["titles"])
    assert total == MARKETS * 12 and len(files) >= 2
    assert report.stat().st_size < 1_000_000 < sum(f.stat().st_size for f in files)
    html = report.read_text(encoding="utf-8")
    assert ' data-forecasts="' not in html and ' data-chunks="' in html
    assert "&#x27;strict-dynamic&#x27;" in html  # the policy lets the page's script load them


def test_the_viewer_shows_the_first_page_in_canonical_order(page, expected):
    total, pages = len(expected["titles"]), -(-len(expected["titles"]) // 50)
    search(page, "")
    first = until(page, lambda s: s["status"].endswith(f"page 1 of {pages}"))
    assert first["status"] == f"{total} of {total} forecasts · page 1 of {pages}"
    assert first["titles"] == expected["titles"][:50] and first["first"] and not first["last"]


def test_paging_reaches_the_last_row(page, expected):
    pages = -(-len(expected["titles"]) // 50)
    search(page, "")
    page.click("#viewer-last")
    last = until(page, lambda s: s["status"].endswith(f"page {pages} of {pages}"))
    assert last["titles"] == expected["titles"][(pages - 1) * 50 :] and last["last"]
    page.click("#viewer-prev")
    before = until(page, lambda s: s["status"].endswith(f"page {pages - 1} of {pages}"))
    assert before["titles"] == expected["titles"][(pages - 2) * 50 : (pages - 1) * 50]
    page.click("#viewer-first")
    assert until(page, lambda s: "page 1 of" in s["status"])["titles"] == expected["titles"][:50]


def test_a_search_reads_every_file_and_finds_the_last_market(page, expected):
    market = expected["titles"][-1].split(" · ")[1]
    wanted = [t for t in expected["titles"] if f" · {market} · " in t]
    search(page, market)
    found = until(page, lambda s: s["status"].startswith(f"{len(wanted)} of "))
    assert sorted(found["titles"]) == sorted(wanted) and len(wanted) == 12


def test_the_leaderboard_equals_a_computation_from_the_run_database(page, expected):
    cells = page.evaluate("""(() => {
        const t = document.getElementById("board"), heads = Array.from(t.tHead.rows[0].cells, h => h.textContent);
        return Array.from(t.tBodies[0].rows, r => [r.cells[0].getAttribute("data-value"),
            r.cells[heads.indexOf("Brier [95% CI]")].getAttribute("data-value"),
            r.cells[heads.indexOf("n forecasts")].getAttribute("data-value")]); })()""")
    shown = {name: (float(brier), int(n)) for name, brier, n in cells}
    assert set(shown) == set(expected["counts"]) == {"market", "constant", "base-rate"}
    for name, (brier, n) in shown.items():
        assert n == expected["counts"][name]
        assert brier == pytest.approx(expected["brier"][name], abs=1e-12)


def test_no_error_and_no_request_beyond_the_page_and_its_files(page, report):
    search(page, "no forecast has this text")  # a search reads every file
    until(page, lambda s: s["status"].startswith("0 of "))
    assert (
        page.named("Runtime.exceptionThrown") == []
        and page.named("Page.javascriptDialogOpening") == []
    )
    errors = [
        e for e in page.named("Runtime.consoleAPICalled") if e["type"] in ("error", "warning")
    ]
    logged = [
        e for e in page.named("Log.entryAdded") if e["entry"]["level"] in ("error", "warning")
    ]
    assert errors == [] and logged == []
    urls = {e["request"]["url"] for e in page.named("Network.requestWillBeSent")}
    folder = (report.parent / report_data.FOLDER).as_uri() + "/"
    assert report.as_uri() in urls and all(
        u == report.as_uri() or u.startswith(folder) for u in urls
    )
    files = {p.as_uri() for p in (report.parent / report_data.FOLDER).glob("*.js")}
    assert urls - {report.as_uri()} == files  # every file, and nothing else
    assert page.evaluate("[document.scripts.length, document.images.length]") == [1, 0]
