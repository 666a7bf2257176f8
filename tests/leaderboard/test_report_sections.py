"""The report's added sections: inputs at the top (archive snapshot id, market store version),
analysis findings as tables, scores across runs in creation order, and the forecast viewer's
data (read from the run store and the archive, escaped)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from html.parser import HTMLParser

import pytest

from hindcast.leaderboard import findings as findings_module
from hindcast.leaderboard import report_html, viewer
from hindcast.leaderboard.report import write_report
from hindcast.leaderboard.run_export import export_runs
from hindcast.runs.store import RunStore
from hindcast.scoring.findings import Finding
from hindcast.timeutil import iso
from tests.browser import planted
from tests.leaderboard.sample_runs import sweep_runs

FAST = 200


def section(html: str, ident: str) -> str:
    return re.search(rf'<section id="{ident}"[^>]*>(.*?)</section>', html, re.DOTALL).group(1)


class ViewerData(HTMLParser):
    """The viewer's records as the browser reads them: the attribute, unescaped, parsed as JSON."""

    def __init__(self):
        super().__init__()
        self.records = None

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if values.get("id") == "viewer":
            self.records = json.loads(values["data-forecasts"])


def viewer_records(html: str) -> list[dict]:
    parser = ViewerData()
    parser.feed(html)
    return parser.records


def test_the_snapshot_id_and_store_version_head_the_report(tmp_path, wide):
    identity = replace(wide.manifest.identity, snapshot="a-0123456789abcdef")
    run = replace(wide, manifest=replace(wide.manifest, identity=identity))
    html = write_report(tmp_path, [run], "t", replicates=FAST).read_text()
    inputs = section(html, "inputs")
    assert html.index('<section id="inputs">') < html.index('<section id="leaderboard">')
    assert "a-0123456789abcdef" in inputs and wide.manifest.market_store.version in inputs
    assert wide.run_id in inputs


def test_a_run_without_an_archive_says_so_at_the_top(tmp_path, wide):
    html = write_report(tmp_path, [wide], "t", replicates=FAST).read_text()
    assert "none (run without an archive)" in section(html, "inputs")


FINDING = Finding(
    "strata <1>",
    "Brier by cutoff × band <script>",
    ("cutoff", "band", "n", "brier", "diff"),
    (
        ("f=0.5", "toss-up", 12, 0.123456, -0.00001234),
        ("f=1", None, 3, None, math.nan),
        ("<b>x</b>", "consensus", 4, 1234.5678, 0.0),
    ),
    ("Failures are counted <i>never</i> imputed.",),
)


def test_each_finding_is_a_titled_table_with_its_notes(tmp_path, wide):
    html = write_report(tmp_path, [wide], "t", replicates=FAST, findings=[FINDING]).read_text()
    body = section(html, "finding-strata--1-")
    assert "<h2>Brier by cutoff × band &lt;script&gt;</h2>" in body
    assert "Failures are counted &lt;i&gt;never&lt;/i&gt; imputed." in body
    cells = re.findall(r'<td[^>]*data-value="([^"]*)">([^<]*)</td>', body)
    assert [shown for _, shown in cells] == [
        "f=0.5",
        "toss-up",
        "12",
        "0.1235",
        "-1.23e-05",
        "f=1",
        "–",
        "3",
        "–",
        "–",
        "&lt;b&gt;x&lt;/b&gt;",
        "consensus",
        "4",
        "1,234.6",
        "0",
    ]
    assert (
        cells[3][0] == repr(0.123456) and cells[9][0] == ""
    )  # exact sort keys; NaN sorts as missing
    assert re.findall(r"<th[^>]*>([^<]*)</th>", body) == list(FINDING.columns)


def test_a_finding_without_rows_says_so(tmp_path, wide):
    empty = Finding("trading", "Trading", ("a",), ())
    html = write_report(tmp_path, [wide], "t", replicates=FAST, findings=[empty]).read_text()
    assert "No rows." in section(html, "finding-trading")


def test_number_formats():
    assert [
        report_html.number(v)
        for v in (None, math.inf, 0.0, 0.25, 0.1, 12, 0.0004567, 15000.0, True, "x")
    ] == ["–", "–", "0", "0.25", "0.1", "12", "0.000457", "15,000.0", "True", "x"]


def test_publish_renders_what_findings_collect_returns(tmp_path, swept, monkeypatch):
    url, ids = swept
    seen = []
    monkeypatch.setattr(
        findings_module, "collect", lambda runs: seen.append([r.run_id for r in runs]) or [FINDING]
    )
    export_runs(RunStore(url, read_only=True), [ids["narrow"]], tmp_path, ["html"])
    assert (
        seen == [[ids["narrow"]]]
        and 'id="finding-strata--1-"' in (tmp_path / "report.html").read_text()
    )


def test_scores_across_runs_follow_creation_order(tmp_path, wide, narrow):
    created = {narrow.run_id: "2026-01-01T00:00:00Z", wide.run_id: "2026-02-01T00:00:00Z"}
    html = write_report(
        tmp_path, [wide, narrow], "t", replicates=FAST, stored=viewer.Stored(created=created)
    ).read_text()
    body = section(html, "over-time")
    headers = re.findall(r"<th[^>]*>([^<]*)</th>", body)
    assert headers == [
        "forecaster",
        f"{narrow.run_id} (2026-01-01T00:00:00Z)",
        f"{wide.run_id} (2026-02-01T00:00:00Z)",
    ]
    rows = {
        m[0]: m[1:]
        for m in re.findall(
            r'<tr><td class="text" data-value="([^"]*)">[^<]*</td>'
            r'<td data-value="([^"]*)">[^<]*</td><td data-value="([^"]*)">',
            body,
        )
    }
    keys = {(r.market_id, r.t0) for r in narrow.rows} & {(r.market_id, r.t0) for r in wide.rows}
    for name in ("market", "base-rate"):
        for run, value in zip((narrow, wide), rows[name]):
            briers = [
                r.brier for r in run.rows if r.forecaster == name and (r.market_id, r.t0) in keys
            ]
            assert float(value) == pytest.approx(math.fsum(briers) / len(briers), abs=1e-15)
    assert rows["constant"][0] == ""  # not in the narrow run


def test_one_run_has_no_across_runs_section(tmp_path, wide):
    assert 'id="over-time"' not in write_report(tmp_path, [wide], "t", replicates=FAST).read_text()


@pytest.fixture(scope="module")
def planted_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("planted")
    url, ids = sweep_runs(folder, ("narrow",))
    market, t0, docs = planted.plant(RunStore(url), ids["narrow"], "market")
    return url, ids["narrow"], market, t0, docs


def test_the_viewer_reads_rationale_raw_answer_and_calls_from_the_store(planted_run, tmp_path):
    url, rid, market, t0, docs = planted_run
    export_runs(RunStore(url, read_only=True), [rid], tmp_path, ["html"])
    html = (tmp_path / "report.html").read_text()
    records = viewer_records(html)
    mine = [
        r for r in records if (r["forecaster"], r["market"], r["t0"]) == ("market", market, iso(t0))
    ]
    assert len(mine) == 1 and len(records) == len(
        {(r["forecaster"], r["market"], r["t0"]) for r in records}
    )
    record = mine[0]
    assert (
        record["rationale"] == planted.RATIONALE and record["raw"] == planted.RAW
    )  # the newest attempt
    assert (
        record["p"] == "0.5000" and record["tokens"] == "1200 prompt + 80 completion (1 requests)"
    )
    assert [c["asked"] for c in record["reads"]] == [planted.QUERY, docs[0]]
    assert [d["id"] for d in record["reads"][0]["docs"]] == [*docs, planted.BAD_ID]
    assert (
        record["question"]
        and record["price_t"] < record["t0"]
        and record["outcome"] in ("YES", "NO")
    )
    for hostile in (planted.RATIONALE, planted.RAW, planted.QUERY, planted.BAD_ID, "<img"):
        assert hostile not in html
    assert html.count("<script") == html.count("</script>") == 1 and "//" not in html.replace(
        "http://www.w3.org/2000/svg", ""
    )


def test_the_viewer_gives_each_document_its_instant_and_source(planted_run):
    url, rid, _, _, docs = planted_run
    stored = viewer.from_store(RunStore(url, read_only=True), [rid], [planted.snapshot()])
    assert set(stored.documents) == set(docs)  # the unknown id is not invented
    for doc in docs:
        found = stored.documents[doc]
        assert found["source"] and re.fullmatch(
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", found["created_at"]
        )
    assert stored.created[rid] < "9999"


def test_a_report_without_the_store_shows_scored_rows_and_says_what_is_missing(tmp_path, wide):
    html = write_report(tmp_path, [wide], "t", replicates=FAST).read_text()
    records = viewer_records(html)
    assert len(records) == len(wide.rows) and {r["rationale"] for r in records} == {""}
    assert "written without the run store" in section(html, "forecasts")


def test_the_attribute_json_has_no_double_slash_and_reads_back():
    data = [{"url": "https://example.org/a//b", "t": "a\\/b </script>"}]
    text = viewer.attribute(data)
    assert "//" not in text and json.loads(text) == data


def test_the_policy_hashes_hold_no_double_slash():
    """The page must hold no `//` (test_report checks it); a base64 hash can by chance, after an
    edit of the CSS or the script: change a byte of the edited one (a rem, a
    space) until it does not."""
    from hindcast.leaderboard import assets

    assert "//" not in assets.CSP
