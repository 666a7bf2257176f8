"""Issue 29's figures on the shipped sample's default baseline run (every market, the default
cutoffs): each new table in `hindcast analyze` (terminal and --json) and in the sweep's HTML
report, opened in real headless Chromium (Debian's): the CORP section leads the calibration
figures with one drawn diagram per forecaster, and every table holds the rows the JSON holds."""

from __future__ import annotations

import json

import pytest

from tests.browser.cdp import loaded
from tests.helpers import run_cli

pytestmark = pytest.mark.browser
KEYS = (
    "time-averaged",
    "relative-log",
    "pairwise-skill",
    "pairwise-pairs",
    "corp",
    "mixture",
    "convergence",
    "events",
)
TITLES = (
    "Time-averaged scores over the sweep",
    "Market-relative log score",
    "Relative skill on overlapping rows",
    "Pairwise Brier ratios",
    "CORP reliability",
    "Additive information",
    "Price convergence",
    "Event-level inference",
)
FORECASTERS = ("market", "constant", "base-rate")


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    folder = tmp_path_factory.mktemp("analysis")
    args = [a for name in FORECASTERS for a in ("-f", name)]
    run_cli("sweep", *args, "--out", str(folder), "--db", str(folder / "hindcast.db"), check=True)
    (report,) = folder.glob("r-*/report.html")
    run_id = report.parent.name
    document = json.loads(
        run_cli("analyze", run_id, "--db", str(folder / "hindcast.db"), "--json", check=True).stdout
    )
    terminal = run_cli("analyze", run_id, "--db", str(folder / "hindcast.db"), check=True).stdout
    return report, {f["key"]: f for f in document["findings"]}, terminal


@pytest.fixture(scope="module")
def page(sample, tmp_path_factory):
    yield from loaded(sample[0], tmp_path_factory.mktemp("profile"))


def test_json_holds_every_new_table_with_rows(sample):
    _, found, _ = sample
    for key in KEYS[:-1]:
        assert found[key]["rows"], key
    names = {r["forecaster"] for r in found["pairwise-skill"]["rows"]}
    assert names == {*FORECASTERS, "market price"}
    assert (
        next(r for r in found["pairwise-skill"]["rows"] if r["forecaster"] == "market price")[
            "relative_skill"
        ]
        == 1.0
    )
    assert {r["measure"] for r in found["time-averaged"]["rows"]} >= {"time-averaged", "spot f=0.5"}
    for row in found["corp"]["rows"]:  # the decomposition adds up to the mean Brier score
        assert row["mcb"] - row["dsc"] + row["unc"] == pytest.approx(row["brier"], abs=1e-12)
    assert "log-clip-1e-6" in found["relative-log"]["notes"][0]
    # the shipped sample has no event metadata: said in the table, not left blank
    assert found["events"]["rows"] == [] and "none sharing an event" in found["events"]["notes"][0]


def test_the_terminal_shows_every_new_table(sample):
    _, _, terminal = sample
    for title in TITLES:
        assert title in terminal, title


def test_the_report_shows_every_new_table_in_chromium(page, sample):
    _, found, _ = sample
    errors = [
        e
        for e in page.named("Runtime.consoleAPICalled")
        if e["type"] in ("error", "assert", "warning")
    ]
    assert errors == [] and page.named("Runtime.exceptionThrown") == []
    for key in KEYS[:-1]:
        shown = page.evaluate(f"""(() => {{ const t = document.getElementById("finding-{key}-table");
            const r = t.getBoundingClientRect(); return [t.tBodies[0].rows.length, r.width > 0 && r.height > 0]; }})()""")
        assert shown == [len(found[key]["rows"]), True], key
    events = page.evaluate("document.getElementById('finding-events').textContent")
    assert "none sharing an event" in events and "No rows." in events


def test_corp_diagrams_lead_the_calibration_figures(page):
    order = page.evaluate("""Array.from(document.querySelectorAll("section"), s => s.id)""")
    assert order.index("corp") < order.index("reliability")
    assert page.evaluate("document.querySelector('#corp h2').textContent").startswith(
        "Calibration: CORP"
    )
    drawn = page.evaluate("""Array.from(document.querySelectorAll("#corp svg.plot"), s => {
        const b = s.getBBox(), curve = s.querySelector("polyline.series"), band = s.querySelector("polyline.band");
        return [s.getAttribute("aria-label"), b.width > 50 && b.height > 50, curve.points.numberOfItems,
                s.querySelectorAll("circle").length, band.getBBox().height > 0]; })""")
    assert sorted(label for label, *_ in drawn) == sorted(
        f"CORP reliability diagram of {n}" for n in FORECASTERS
    )
    # a curve through the distinct forecasts, or a marker on each when there are one or two (`constant`: one)
    assert all(
        ok and (points >= 3 or marks == points >= 1) and band
        for _, ok, points, marks, band in drawn
    ), drawn
