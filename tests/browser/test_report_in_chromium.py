"""The HTML report opened in real headless Chromium (Debian's), driven over the DevTools protocol.

Loads with no console error and no network request, draws every plot, sorts by clicking a
column heading, and shows hostile market and model text as text without running it. The
per-forecast viewer filters as one types, pages with its buttons, and shows a forecast's
hostile rationale, raw answer, query and document id as text — still with no request, no
console error and no dialog once used. The screenshot is kept: under the test's tmp dir and at
runs/artifacts/report-chromium.png.
"""

from __future__ import annotations

import shutil

import pytest

from hindcast.leaderboard import viewer
from hindcast.leaderboard.report import write_report
from hindcast.runs.store import RunStore
from tests.browser import planted
from tests.browser.cdp import loaded
from tests.helpers import ROOT
from tests.leaderboard.sample_runs import IMG, SCRIPT, injected, load, sweep_runs

pytestmark = pytest.mark.browser
ARTIFACT = ROOT / "runs" / "artifacts" / "report-chromium.png"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    url, ids = sweep_runs(folder / "runs", ("wide",))
    planted.plant(RunStore(url), ids["wide"])
    run, questions = injected(load(url, ids["wide"]))
    stored = viewer.from_store(RunStore(url, read_only=True), [ids["wide"]], [planted.snapshot()])
    return write_report(
        folder,
        [run],
        "hindcast report <in Chromium>",
        questions=questions,
        replicates=200,
        stored=stored,
    )


@pytest.fixture(scope="module")
def page(report, tmp_path_factory):
    yield from loaded(report, tmp_path_factory.mktemp("profile"))


def column(page, table: str, header: str) -> list[str]:
    return page.evaluate(f"""(() => {{
        const t = document.getElementById("{table}");
        const i = Array.from(t.tHead.rows[0].cells).findIndex(h => h.textContent === "{header}");
        return Array.from(t.tBodies[0].rows, r => r.cells[i].getAttribute("data-value")); }})()""")


def test_loads_with_no_console_error_and_no_exception(page):
    errors = [
        e
        for e in page.named("Runtime.consoleAPICalled")
        if e["type"] in ("error", "assert", "warning")
    ]
    logged = [
        e["entry"]
        for e in page.named("Log.entryAdded")
        if e["entry"]["level"] in ("error", "warning")
    ]
    assert errors == [] and logged == [] and page.named("Runtime.exceptionThrown") == []
    assert page.evaluate("document.readyState") == "complete"


def test_requests_nothing_but_the_file_itself(page, report):
    urls = [e["request"]["url"] for e in page.named("Network.requestWillBeSent")]
    assert urls == [
        report.as_uri()
    ]  # the page's own load is seen, so a further request would be too
    assert page.evaluate("performance.getEntriesByType('resource').length") == 0


def test_every_plot_renders_a_non_empty_svg(page):
    plots = page.evaluate("""Array.from(document.querySelectorAll("svg.plot"), s => {
        const r = s.getBoundingClientRect(), b = s.getBBox();
        return [r.width, r.height, b.width, b.height, s.querySelectorAll("polyline, circle, rect").length]; })""")
    assert (
        len(plots) >= 1 + 3 + 2
    )  # the fraction chart, a reliability diagram each, two topic charts
    assert all(
        w > 100 and h > 100 and bw > 50 and bh > 50 and marks > 0 for w, h, bw, bh, marks in plots
    ), plots


def test_no_label_or_legend_text_is_clipped(page):
    """Measured by the browser: every text of every plot lies inside its SVG's viewBox (the
    rotated axis title aside), legends included (they were cut at the right edge)."""
    outside = page.evaluate("""Array.from(document.querySelectorAll("svg.plot"), s => {
        const w = s.viewBox.baseVal.width, h = s.viewBox.baseVal.height;
        return Array.from(s.querySelectorAll("text:not([transform])"), t => {
            const b = t.getBBox();
            return b.x >= -0.5 && b.y >= -0.5 && b.x + b.width <= w + 0.5 && b.y + b.height <= h + 0.5 ? null
                : [t.textContent, b.x, b.width, w]; }).filter(Boolean); }).flat()""")
    legends = page.evaluate("document.querySelectorAll('svg.plot text.legend').length")
    assert outside == [] and legends >= 4


def heading(page, table: str, header: str) -> str:
    """A CSS selector for the heading of `table` whose text is `header` (columns
    move as they are added)."""
    i = page.evaluate(f"""Array.from(document.getElementById("{table}").tHead.rows[0].cells)
        .findIndex(h => h.textContent === "{header}")""")
    assert i >= 0, header
    return f"#{table} th:nth-child({i + 1})"


def test_clicking_a_heading_sorts_the_leaderboard(page):
    brier = heading(page, "board", "Brier [95% CI]")
    page.click(brier)
    ascending = [float(v) for v in column(page, "board", "Brier [95% CI]")]
    assert ascending == sorted(ascending) and len(set(ascending)) == 3
    assert (
        page.evaluate(f"document.querySelector('{brier}').getAttribute('aria-sort')") == "ascending"
    )
    page.click(brier)
    assert [float(v) for v in column(page, "board", "Brier [95% CI]")] == sorted(
        ascending, reverse=True
    )
    page.click(heading(page, "board", "n forecasts"))  # then the names follow their rows
    assert column(page, "board", "n forecasts") == sorted(
        column(page, "board", "n forecasts"), key=int
    )
    page.click(
        heading(page, "board", "Brier − market [95% CI]")
    )  # the bounded comparison sorts exactly too
    diffs = [float(v) for v in column(page, "board", "Brier − market [95% CI]")]
    assert diffs == sorted(diffs) and all(-1 <= d <= 1 for d in diffs)


def test_hostile_text_shows_as_text_and_runs_nothing(page):
    cells = page.evaluate("Array.from(document.querySelectorAll('td, h3'), e => e.textContent)")
    assert f"{SCRIPT} Will this run?" in cells and IMG in cells
    assert page.evaluate("[document.scripts.length, document.images.length]") == [1, 0]
    assert page.named("Page.javascriptDialogOpening") == []


def viewer_state(page) -> dict:
    return page.evaluate("""(() => ({
        status: document.getElementById("viewer-status").textContent,
        titles: Array.from(document.querySelectorAll("#viewer-list article h3"), h => h.textContent),
        prev: document.getElementById("viewer-prev").disabled,
        next: document.getElementById("viewer-next").disabled}))()""")


def type_into_search(page, text: str) -> None:
    page.evaluate(
        "(() => { const b = document.getElementById('viewer-search'); b.value = ''; b.focus(); "
        "b.dispatchEvent(new Event('input')); })()"
    )
    page.send("Input.insertText", text=text)  # as a keyboard would: one input event per insertion


def test_the_viewer_pages_through_every_forecast(page, report):
    first = viewer_state(page)
    total = int(first["status"].split(" of ")[1].split()[0])
    assert total >= 300 and len(first["titles"]) == 50 and first["prev"] and not first["next"]
    assert first["status"] == f"{total} of {total} forecasts · page 1 of {-(-total // 50)}"
    page.click("#viewer-next")
    second = viewer_state(page)
    assert second["status"].endswith(f"page 2 of {-(-total // 50)}") and not second["prev"]
    assert len(second["titles"]) == 50 and not set(second["titles"]) & set(first["titles"])
    page.click("#viewer-prev")
    assert viewer_state(page)["titles"] == first["titles"]


def test_the_viewer_search_keeps_only_matching_forecasts(page):
    type_into_search(page, "market f=0.25")
    state = viewer_state(page)
    count = int(state["status"].split(" of ")[0])
    assert 0 < count <= 50 and state["prev"] and state["next"]  # one page: both buttons disabled
    assert count == len(state["titles"]) and all(
        t.startswith("market · ") and t.endswith("· f=0.25") for t in state["titles"]
    )
    type_into_search(page, "no forecast has this text")
    assert viewer_state(page)["titles"] == [] and viewer_state(page)["status"].startswith("0 of ")


def test_the_viewer_shows_hostile_text_as_text(page):
    type_into_search(page, "rationale with")
    state = viewer_state(page)
    assert len(state["titles"]) == 1 and state["titles"][0].startswith("constant · ")
    shown = page.evaluate("""(() => { const a = document.querySelector("#viewer-list article");
        return { texts: Array.from(a.querySelectorAll(".forecast-text, pre, li, dd"), e => e.textContent),
                 elements: a.querySelectorAll("img, script, svg, b, iframe").length }; })()""")
    assert planted.RATIONALE in shown["texts"] and planted.RAW in shown["texts"]
    assert any(t.startswith(f"search: {planted.QUERY} → 3 documents") for t in shown["texts"])
    assert any(planted.BAD_ID in t for t in shown["texts"]) and shown["elements"] == 0
    assert page.evaluate("[document.scripts.length, document.images.length]") == [1, 0]
    assert page.named("Page.javascriptDialogOpening") == []


def test_the_viewer_shows_each_document_with_its_instant_and_source(page):
    type_into_search(page, "rationale with")
    items = page.evaluate(
        "Array.from(document.querySelectorAll('#viewer-list article li li'), e => e.textContent)"
    )
    ids = planted.sample_documents()
    assert len(items) == 4  # the search's 3 documents, then the read's 1
    for item, doc in zip(items, [*ids, planted.BAD_ID, ids[0]]):
        assert doc in item
    assert (
        items[0].startswith("20")
        and " · " in items[0]
        and "instant unknown · source unknown" in items[2]
    )
    facts = page.evaluate(
        "Array.from(document.querySelectorAll('#viewer-list article dd'), e => e.textContent)"
    )
    assert "1200 prompt + 80 completion (1 requests)" in facts and "gpt-4o-mini" in facts


def test_using_the_viewer_requested_nothing_and_logged_no_error(page, report):
    test_loads_with_no_console_error_and_no_exception(page)
    test_requests_nothing_but_the_file_itself(page, report)
    type_into_search(page, "")


def test_the_console_listener_would_have_seen_an_error(page):
    page.evaluate("console.error('probe')")
    page.settle(0.2)
    assert [
        e["args"][0]["value"]
        for e in page.named("Runtime.consoleAPICalled")
        if e["type"] == "error"
    ] == ["probe"]


def test_keeps_a_screenshot(page, tmp_path):
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    shot = page.screenshot(tmp_path / "report.png")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    ARTIFACT.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(shot, ARTIFACT)
    print(f"screenshot: {ARTIFACT}")
