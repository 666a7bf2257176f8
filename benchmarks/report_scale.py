"""The HTML report of a large run: its size, and how fast headless Chromium opens it.

The run is made honestly and quickly, as benchmarks/pipeline_scale.py makes its runs: the
shipped sample's 57 real markets replicated with new ids (their real questions and daily
prices) to N markets (default 10,000), imported (`hindcast markets import forecastbench`), then
`market`, `constant` and `base-rate` at 4 lifetime fractions swept by the engine
(`replay.run_sweep`, no exports): N × 12 forecasts (120,000 at 10,000 markets).

Then, measured:
1. report     `hindcast leaderboard RUN --format html` (the user's command, its own process):
              wall time, peak RSS, report.html's size and report.data/'s (files, bytes)
2. open       report.html in headless Chromium (Debian's, over the DevTools protocol): seconds
              from navigation to the viewer showing its first page (the page complete and
              interactive), then to the last page after a click on "last", then a search that
              reads every file
3. baseline   the same report as reports were before this change (the same page with every
              forecast inline in report.html, read back from the new report's files), its size
              and the same open measurement — the ratio new/old alongside (--no-baseline: skip)

No figure here is a pass/fail: the test (tests/browser/test_large_report_in_chromium.py) checks
behaviour. Say the CPU and the load average beside any figure (printed at the end).

Usage: python benchmarks/report_scale.py [--markets 10000] [--work DIR] [--json FILE]
       [--no-baseline]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.pipeline_scale import BASELINES, CREATED, FRACTIONS, replicate  # noqa: E402


@dataclass(frozen=True)
class Made:
    """A generated run: its database URL and id, the market store, and the markets file."""

    db_url: str
    run_id: str
    store: Path
    markets_file: Path


def make_run(work: Path, n_markets: int) -> Made:
    """N replicated markets imported into work/store, the baselines swept into work/runs.db."""
    import asyncio

    from hindcast.replay import ReplaySpec, run_sweep
    from hindcast.runs import RunStore
    from hindcast.timeutil import parse_utc

    work.mkdir(parents=True, exist_ok=True)
    markets_file, prices_file = replicate(n_markets, work)
    store = work / "store"
    hindcast(
        "markets",
        "import",
        "forecastbench",
        "--markets-file",
        str(markets_file),
        "--price-history",
        str(prices_file),
        "--store",
        str(store),
    )
    url = f"sqlite:///{work / 'runs.db'}"
    spec = ReplaySpec(
        store=store, forecasters=BASELINES, fractions=tuple(map(float, FRACTIONS.split(",")))
    )
    result = asyncio.run(
        run_sweep(spec, run_store=RunStore(url), out_dir=work, now=parse_utc(CREATED))
    )
    return Made(url, result.run_id, store, markets_file)


def hindcast(*args: str) -> tuple[float, float]:
    """Run `hindcast ARGS` in its own process: (seconds, peak MiB); a failure stops here."""
    with tempfile.TemporaryFile("w+") as err:
        start = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "hindcast", *args],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, "HINDCAST_CREATED_AT": CREATED},
        )
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.monotonic() - start
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"hindcast {' '.join(args[:2])} failed:\n{err.read()[-3000:]}")
    return round(seconds, 2), round(usage.ru_maxrss / 1024, 1)


def report_cli(made: Made, out: Path) -> dict:
    """`hindcast leaderboard RUN --format html` into `out`: time, memory, sizes."""
    db = made.db_url.removeprefix("sqlite:///")
    seconds, peak = hindcast(
        "leaderboard", made.run_id, "--format", "html", "--out", str(out), "--db", db
    )
    return {"seconds": seconds, "peak_mib": peak, **sizes(out)}


def sizes(folder: Path) -> dict:
    data = sorted((folder / "report.data").glob("*.js"))
    return {
        "report_html_mib": round((folder / "report.html").stat().st_size / 2**20, 3),
        "data_files": len(data),
        "data_mib": round(sum(p.stat().st_size for p in data) / 2**20, 2),
    }


def status(page) -> str:
    return page.evaluate(
        "(document.getElementById('viewer-status') || {textContent: ''}).textContent"
    )


def wait_status(page, done, timeout: float = 600.0) -> str:
    """Poll the viewer's status line until `done(text)`: its text."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = status(page)
        if done(text):
            return text
        time.sleep(0.02)
    raise SystemExit(f"the viewer did not get there in {timeout} s: {status(page)!r}")


def first_page(text: str) -> bool:
    return " forecasts · page 1 of " in text


def open_times(report: Path, profile: Path, query: str) -> dict:
    """Seconds from navigation to the viewer's first page, then to its last page (a click),
    then to a search's result (every file read)."""
    from tests.browser.cdp import Chromium, chromium_binary

    binary = chromium_binary()
    if binary is None:
        raise SystemExit("headless Chromium is not installed (apt-get install -y chromium)")
    browser = Chromium(profile, binary)
    try:
        browser.send("Page.enable")
        start = time.monotonic()
        browser.send("Page.navigate", url=report.as_uri())
        browser.wait_for("Page.loadEventFired", timeout=600)
        loaded = time.monotonic() - start
        shown = wait_status(browser, first_page)
        opened = time.monotonic() - start
        pages = shown.rsplit(" of ", 1)[1]
        start = time.monotonic()
        browser.click("#viewer-last")
        wait_status(browser, lambda t: t.endswith(f"page {pages} of {pages}"))
        last = time.monotonic() - start
        start = time.monotonic()
        browser.evaluate(
            "(() => { const b = document.getElementById('viewer-search'); "
            f"b.value = {json.dumps(query)}; b.dispatchEvent(new Event('input')); }})()"
        )
        found = wait_status(browser, lambda t: t.endswith(" forecasts · page 1 of 1"))
        search = time.monotonic() - start
    finally:
        browser.close()
    return {
        "load_event_s": round(loaded, 2),
        "first_page_s": round(opened, 2),
        "last_page_s": round(last, 2),
        "search_s": round(search, 2),
        "search_status": found,
    }


def baseline_report(new: Path, out: Path) -> dict:
    """The same report as reports were written before this change: the new report's page with
    every forecast of its files put back inline (one attribute, as before) under the old policy."""
    from html import escape

    from hindcast.leaderboard import assets, report_data, viewer

    start = time.monotonic()
    page = (new / "report.html").read_text(encoding="utf-8")
    index = json.loads(re.search(r'data-chunks="([^"]*)"', page).group(1).replace("&quot;", '"'))
    records = []
    for name, _ in index:
        text = (new / report_data.FOLDER / name).read_text(encoding="utf-8")
        records += json.loads(text[text.index("[") : text.rindex("]") + 1])
    inline = f'data-forecasts="{escape(viewer.attribute(records))}"'
    page = re.sub(r'data-folder="[^"]*" data-callback="[^"]*" data-chunks="[^"]*"', inline, page)
    page = page.replace(escape(assets.CSP_PAGED), escape(assets.CSP))
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.html").write_text(page, encoding="utf-8")
    return {"seconds": round(time.monotonic() - start, 2), "records": len(records), **sizes(out)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--markets", type=int, default=10_000)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--no-baseline", action="store_true")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="report-scale-"))
    results: dict = {"markets": args.markets, "work": str(work), "load_before": os.getloadavg()}
    start = time.monotonic()
    made = make_run(work, args.markets)
    results["make_run_s"] = round(time.monotonic() - start, 1)
    print(f"run {made.run_id} made in {results['make_run_s']} s", flush=True)
    query = _last_market(made.markets_file)
    results["report"] = report_cli(made, work / "report")
    print(f"report  {results['report']}", flush=True)
    results["open"] = open_times(work / "report" / "report.html", work / "profile-new", query)
    print(f"open    {results['open']}", flush=True)
    if not args.no_baseline:
        results["baseline"] = baseline_report(work / "report", work / "baseline")
        print(f"baseline {results['baseline']}", flush=True)
        results["baseline_open"] = open_times(
            work / "baseline" / "report.html", work / "profile-old", query
        )
        print(f"open    {results['baseline_open']}", flush=True)
        results["ratios"] = {
            "html_size_new_over_old": round(
                results["report"]["report_html_mib"] / results["baseline"]["report_html_mib"], 4
            ),
            "first_page_new_over_old": round(
                results["open"]["first_page_s"] / results["baseline_open"]["first_page_s"], 3
            ),
        }
    results["load_after"] = os.getloadavg()
    results["cpu"] = _cpu()
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


def _last_market(markets_file: Path) -> str:
    """A market id to search for: the last market's (one of the last files holds it)."""
    *_, line = markets_file.read_text(encoding="utf-8").splitlines()
    return json.loads(line)["id"]


def _cpu() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} cores"
    return f"{os.cpu_count()} cores"


if __name__ == "__main__":
    main()
