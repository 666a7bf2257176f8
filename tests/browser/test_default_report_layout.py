"""The report of a default-shaped sweep, as a newcomer first opens it,
measured in headless Chromium.

The sweep has the default run's shape: the three baselines on every shipped sample market and
the embedded local model's two forecasters on a subset of them (3 markets and 1 market: their
rows carry the longest notes; the retrieval agent closed-book, as the sample's index is not
built here). Behind `model=local` answers the fake chat model at the HTTP transport (the real
local model's rows look the same; its server is tested under `llm_server`). A forecaster with
a long name is tested too: its cell is cut to two lines, the full name stays in the notes.

At 1280 px (and at 2600 px) the leaderboard needs no horizontal scroll, its headline column
"Brier − market" lies inside the window without scrolling, and no row is taller than two
lines of text. The 1280 px screenshot is kept at runs/artifacts/report-default-1280.png.
"""

from __future__ import annotations

import json
import shutil

import httpx
import pytest

from hindcast import api
from hindcast.llm.fake import FakeChatModel, answer
from hindcast.llm.local import SharedServer
from hindcast.llm.models import Models
from hindcast.replay.spec import DEFAULT_FORECASTERS, ReplaySpec
from hindcast.runs.database import db_url
from hindcast.runs.store import RunStore
from tests.browser.cdp import opened
from tests.helpers import ROOT, SAMPLE_MARKETS, at

pytestmark = pytest.mark.browser
ARTIFACT = ROOT / "runs" / "artifacts" / "report-default-1280.png"
LONG = "zero-shot:model=openai-compatible:http://fake.invalid/v1#a-model-with-a-rather-long-name-v2,temperature=0.7"
SUBSETS = (
    ("zero-shot:model=local", 3),
    ("retrieval-agent:model=local,rounds=1,policy=none", 1),
    (LONG, 2),
)


class FakeLocal:
    """Stands in for the local model server: its URL is answered by the fake transport."""

    def start(self) -> str:
        return "http://fake.invalid/v1"

    def stop(self) -> None:
        pass


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("default")
    fake = FakeChatModel(default=answer(json.dumps({"probability": 0.9})))
    spec = ReplaySpec(
        store=SAMPLE_MARKETS,
        forecasters=(*DEFAULT_FORECASTERS, *(s for s, _ in SUBSETS)),
        subsets=SUBSETS,
    )
    with Models(
        http=lambda: httpx.AsyncClient(transport=fake.transport()), local=SharedServer(FakeLocal)
    ) as models:
        result = api.sweep(
            spec,
            runs=RunStore(db_url(out / "hindcast.db")),
            out=out,
            now=at("2026-11-30T00:00:00"),
            models=models,
        )
    return result.paths["html"]


@pytest.fixture(scope="module")
def page(report, tmp_path_factory):
    with opened(report, tmp_path_factory.mktemp("profile")) as browser:
        yield browser


def layout(page, width: int) -> dict:
    """The leaderboard's geometry at a window `width` px wide, measured by the browser."""
    page.send(
        "Emulation.setDeviceMetricsOverride",
        width=width,
        height=1000,
        deviceScaleFactor=1,
        mobile=False,
    )
    page.settle(0.3)
    return page.evaluate("""(() => {
        const table = document.getElementById("board"), box = table.parentElement;
        const cell = table.tBodies[0].rows[0].cells[1], style = getComputedStyle(cell);
        const line = parseFloat(style.lineHeight), pad = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom);
        const head = Array.from(table.tHead.rows[0].cells).find(h => h.textContent.startsWith("Brier − market"));
        return {scroll: box.scrollWidth, client: box.clientWidth, window: window.innerWidth,
                pageScroll: document.documentElement.scrollWidth,
                headRight: head.getBoundingClientRect().right, headBottom: head.getBoundingClientRect().bottom,
                windowHeight: window.innerHeight, line: line, pad: pad,
                rows: Array.from(table.tBodies[0].rows, r => [r.cells[0].textContent, r.getBoundingClientRect().height]),
                notes: Array.from(document.querySelectorAll("#board-notes li"), li => li.textContent)}; })()""")


@pytest.mark.parametrize("width", [1280, 2600])
def test_the_leaderboard_fits_the_window_with_short_rows(page, width):
    shape = layout(page, width)
    assert shape["scroll"] <= shape["client"], shape  # no horizontal scroll inside the board's box
    assert shape["pageScroll"] <= shape["window"], shape  # nor on the page
    assert shape["headRight"] <= shape["window"], shape  # the headline comparison is on screen
    assert len(shape["rows"]) == 6
    tallest = (
        2 * shape["line"] + shape["pad"] + 2
    )  # two lines of text, the cell's padding, a border
    assert all(height <= tallest for _, height in shape["rows"]), (tallest, shape["rows"])
    assert any(
        n.startswith("zero-shot:model=local: subset: 3 of 57 markets") for n in shape["notes"]
    ), shape["notes"]
    assert any(n.startswith(f"{LONG}: subset: 2 of 57 markets") for n in shape["notes"]), shape[
        "notes"
    ]


def test_the_headline_is_visible_without_scrolling_and_a_screenshot_is_kept(page, tmp_path):
    shape = layout(page, 1280)
    assert shape["headBottom"] <= shape["windowHeight"], shape
    page.send(
        "Emulation.setDeviceMetricsOverride",
        width=1280,
        height=1000,
        deviceScaleFactor=1,
        mobile=False,
    )
    shot = page.screenshot(
        tmp_path / "default.png", height=1400
    )  # the leaderboard and what follows it
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ARTIFACT.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(shot, ARTIFACT)
    print(f"screenshot: {ARTIFACT}")
