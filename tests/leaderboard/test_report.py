"""The HTML report as text: self-contained, every hostile string escaped, all sections there.
(tests/browser opens it in Chromium.)"""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser

import pytest

from hindcast.leaderboard import analysis, assets
from hindcast.leaderboard.report import write_report
from tests.leaderboard.sample_runs import IMG, SCRIPT, TOPIC, injected

FAST = 200


@pytest.fixture(scope="module")
def html(tmp_path_factory, wide, narrow):
    run, questions = injected(wide)
    path = write_report(
        tmp_path_factory.mktemp("report"),
        [run, narrow],
        "report <test>",
        questions=questions,
        replicates=FAST,
    )
    assert path.name == "report.html"
    return path.read_text(encoding="utf-8")


ALLOWED_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "h1",
    "h2",
    "h3",
    "p",
    "b",
    "section",
    "div",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "details",
    "summary",
    "dl",
    "dt",
    "dd",
    "pre",
    "script",
    "svg",
    "line",
    "text",
    "polyline",
    "circle",
    "rect",
    "ul",
    "li",
    "span",
}


class Tags(HTMLParser):
    """Every tag name and attribute name in a page."""

    def __init__(self):
        super().__init__()
        self.names, self.attributes = set(), set()

    def handle_starttag(self, tag, attrs):
        self.names.add(tag)
        self.attributes.update(name for name, _ in attrs)


def sha256(source: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()


def test_hostile_text_is_escaped_everywhere(html):
    for hostile in (SCRIPT, IMG, TOPIC):
        assert hostile not in html
    assert html.count("</pre>") == html.count("<pre>") == 2 and "&lt;/pre&gt;&lt;script&gt;" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; Will this run?" in html
    assert (
        "&lt;img src=x onerror=&quot;alert(2)&quot;&gt;" in html
        and "&lt;b&gt;topic&lt;/b&gt; &amp; &lt;i&gt;co&lt;/i&gt;" in html
    )
    assert html.count("<script") == 1 and "report &lt;test&gt;" in html


def test_the_page_needs_no_network_and_runs_only_its_own_script(html):
    tags = Tags()
    tags.feed(html)
    assert tags.names <= ALLOWED_TAGS, tags.names - ALLOWED_TAGS
    assert not tags.attributes & {
        "src",
        "href",
        "srcset",
        "action",
        "xlink:href",
        "background",
        "poster",
    }
    assert not any(name.startswith("on") for name in tags.attributes)
    assert "//" not in html.replace("http://www.w3.org/2000/svg", "")
    style = re.search(r"<style>(.*?)</style>", html, re.S).group(1)
    script = re.search(r"<script>(.*?)</script>", html, re.S).group(1)
    csp = (
        re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html)
        .group(1)
        .replace("&#x27;", "'")
    )
    assert f"script-src '{sha256(script)}'" in csp and f"style-src '{sha256(style)}'" in csp
    assert csp.startswith("default-src 'none'") and csp == assets.CSP


def test_every_section_is_there_with_the_matching_count(html):
    for section in ("leaderboard", "fractions", "reliability", "topics", "regimes", "provenance"):
        assert f'<section id="{section}">' in html
    assert "2 runs compared on their 40 matched (market, t0) rows" in html
    assert (
        html.count('<svg class="plot"') >= 1 + 5 + 4
    )  # fraction chart, 5 reliability diagrams, 4 topic charts
    assert "recovered</b> when F's mean Brier is lower than B's by more than 0.01" in html
    assert "T1: t0 and resolution before the model" in html and "every row is n/a" in html


def test_the_leaderboard_table_sorts_on_exact_values(html, wide):
    board = re.search(r'<table class="sortable" id="board">(.*?)</table>', html, re.S).group(1)
    assert (
        board.count("<tr>") == 1 + 5 and 'data-value="0.25"' in board
    )  # the constant's exact Brier


def test_the_report_is_byte_reproducible(tmp_path, wide, html):
    run, questions = injected(wide)
    narrow_html = write_report(
        tmp_path / "a", [wide], "t", questions=questions, replicates=FAST
    ).read_bytes()
    assert (
        narrow_html
        == write_report(
            tmp_path / "b", [wide], "t", questions=questions, replicates=FAST
        ).read_bytes()
    )


def test_a_forecaster_baseline_compares_the_others_to_it(tmp_path, wide):
    text = write_report(tmp_path, [wide], "t", baseline="constant", replicates=FAST).read_text()
    assert (
        "against constant</h2>" in text
        and "<h3>constant</h3>" not in text
        and "<h3>market</h3>" in text
    )
    assert analysis.MARKET_PRICE not in text.split('id="topics"')[1].split("</h2>")[0]


def test_the_t1_t2_split_has_a_row_per_forecaster_and_regime(tmp_path, wide):
    from dataclasses import replace

    middle = sorted({r.market_id for r in wide.rows})[15]
    rows = [replace(r, regime="T1" if r.market_id < middle else "T2") for r in wide.rows]
    text = write_report(tmp_path, [replace(wide, rows=rows)], "t", replicates=FAST).read_text()
    regimes = re.search(
        r'<table class="sortable" id="regime-board">(.*?)</table>', text, re.S
    ).group(1)
    assert regimes.count('data-value="regime=T1"') == regimes.count('data-value="regime=T2"') == 3
    assert "every row is n/a" not in text
