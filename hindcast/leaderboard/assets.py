"""The report's inline stylesheet and script, and the Content-Security-Policy that admits only them.

The policy allows no network source at all and runs only this exact script (by its sha256),
so even text that escaped escaping could not execute or fetch anything.
"""

from __future__ import annotations

import base64
import hashlib

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f; margin: 2rem auto; max-width: 1320px; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; }
h2 { font-size: 1.2rem; margin-top: 2.2rem; border-bottom: 1px solid #ddd; padding-bottom: .2rem; }
h3 { font-size: 1rem; margin-top: 1.4rem; }
p.note, li.note { color: #555; }
table { border-collapse: collapse; margin: .6rem 0; font-variant-numeric: tabular-nums; }
th, td { padding: .25rem .55rem; border-bottom: 1px solid #e4e4e4; text-align: right; vertical-align: top; white-space: nowrap; }
td.text { white-space: normal; }
.scroll { overflow-x: auto; max-width: 100%; }
th:first-child, td:first-child, td.text, th.text { text-align: left; }
table.sortable th { cursor: pointer; user-select: none; white-space: nowrap; background: #f6f6f6; }
table.sortable th::after { content: " \\2195"; color: #aaa; }
table.sortable th[aria-sort="ascending"]::after { content: " \\2191"; color: #1b6ca8; }
table.sortable th[aria-sort="descending"]::after { content: " \\2193"; color: #1b6ca8; }
.plot { width: 100%; height: auto; max-width: 760px; display: block; }
.grid-plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); gap: 1rem; }
.grid-plots .plot { max-width: 320px; }
.axis { stroke: #333; stroke-width: 1; }
.grid { stroke: #e6e6e6; stroke-width: 1; }
.diagonal { stroke: #999; stroke-dasharray: 4 3; }
.series { fill: none; stroke-width: 2.2; }
.tick, .legend { font-size: 11px; fill: #333; }
.axis-label { font-size: 12px; fill: #333; }
.plot-title { font-size: 13px; font-weight: 600; fill: #111; }
pre { background: #f6f6f6; padding: .6rem; overflow-x: auto; font-size: 12px; }
dl.provenance { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dl.provenance dt { font-weight: 600; }
dl.provenance dd { margin: 0; font-family: ui-monospace, monospace; word-break: break-all; }
.verdict-recovered { color: #2a7d2a; } .verdict-regressed { color: #b3261e; }
"""

JS = """
(function () {
  "use strict";
  function key(cell) {
    var v = cell.getAttribute("data-value");
    if (v === null || v === "") { return null; }
    var n = Number(v);
    return isNaN(n) ? v : n;
  }
  function order(a, b) {
    if (typeof a === "number" && typeof b === "number") { return a - b; }
    return String(a).localeCompare(String(b));
  }
  function sortBy(table, index, th) {
    var body = table.tBodies[0];
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (r1, r2) {
      var a = key(r1.cells[index]), b = key(r2.cells[index]);
      if (a === null || b === null) { return (a === null) - (b === null); }
      return ascending ? order(a, b) : order(b, a);
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.tabIndex = 0;
      th.addEventListener("click", function () { sortBy(table, i, th); });
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sortBy(table, i, th); } });
    });
  });
})();
"""


def _sha256(source: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii")


CSP = f"default-src 'none'; style-src '{_sha256(CSS)}'; script-src '{_sha256(JS)}'; img-src data:; base-uri 'none'; form-action 'none'"
