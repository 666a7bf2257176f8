"""The report's inline stylesheet and script, and the Content-Security-Policy that admits only them.

The policy allows no network source at all and runs only this exact script (by its sha256),
so even text that escaped escaping could not execute or fetch anything.
"""

from __future__ import annotations

import base64
import hashlib

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f;
    margin: 2rem auto; max-width: 1320px; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; }
h2 { font-size: 1.2rem; margin-top: 2.2rem; border-bottom: 1px solid #ddd; padding-bottom: .2rem; }
h3 { font-size: 1rem; margin-top: 1.4rem; }
p.note, li.note { color: #555; }
table { border-collapse: collapse; margin: .6rem 0; font-variant-numeric: tabular-nums; }
th, td { padding: .25rem .55rem; border-bottom: 1px solid #e4e4e4; text-align: right;
    vertical-align: top; white-space: nowrap; }
td.text { white-space: normal; }
td.name { min-width: 12rem; max-width: 22rem; }
td.name .clamp { display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 2;
    overflow: hidden; overflow-wrap: anywhere; }
#board th, #regime-board th { white-space: normal; }
ul.board-notes { color: #555; margin: .2rem 0 .6rem; padding-left: 1.2rem; }
details.more summary { cursor: pointer; color: #555; }
.scroll { overflow-x: auto; max-width: 100%; }
th:first-child, td:first-child, td.text, th.text { text-align: left; }
table.sortable th { cursor: pointer; user-select: none; white-space: nowrap; background: #f6f6f6; }
table.sortable th::after { content: " \\2195"; color: #aaa; }
table.sortable th[aria-sort="ascending"]::after { content: " \\2191"; color: #1b6ca8; }
table.sortable th[aria-sort="descending"]::after { content: " \\2193"; color: #1b6ca8; }
.plot { width: 100%; height: auto; max-width: 760px; display: block; }
.grid-plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr));
    gap: 1rem; }
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
section.finding td.text { white-space: nowrap; }
section.finding td.text.long { white-space: normal; min-width: 25rem; }
.whisker { fill: none; stroke-width: 1.4; stroke-opacity: 0.75; }
.viewer-controls { display: flex; flex-wrap: wrap; gap: .6rem; align-items: center;
    margin: .6rem 0; }
.viewer-controls input { flex: 1 1 24rem; font: inherit; padding: .3rem .5rem; }
.viewer-controls button { font: inherit; padding: .25rem .7rem; }
article.forecast { border: 1px solid #e0e0e0; border-radius: 4px; padding: .5rem .8rem;
    margin: .6rem 0; }
article.forecast h3 { margin: 0 0 .3rem; font-size: .95rem; overflow-wrap: anywhere; }
article.forecast dl { display: grid; grid-template-columns: max-content 1fr; gap: .1rem .9rem;
    margin: .3rem 0; }
article.forecast dt { font-weight: 600; color: #444; }
article.forecast h4 { margin: .5rem 0 .1rem; font-size: .85rem; }
article.forecast dd { margin: 0; overflow-wrap: anywhere; }
.forecast-text { white-space: pre-wrap; overflow-wrap: anywhere; background: #fafafa;
    padding: .4rem .6rem; margin: .2rem 0; }
.forecast ul { margin: .2rem 0; padding-left: 1.2rem; } .forecast li { overflow-wrap: anywhere; }
.forecast .failed { color: #b3261e; }
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
    Array.prototype.forEach.call(th.parentNode.cells, function (h) {
      h.removeAttribute("aria-sort");
    });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
  }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    if (cls) { e.className = cls; }
    return e;
  }
  function facts(list, pairs) {
    pairs.forEach(function (p) {
      list.appendChild(el("dt", p[0])); list.appendChild(el("dd", p[1]));
    });
    return list;
  }
  function block(title, text) {
    var wrap = el("div");
    wrap.appendChild(el("h4", title));
    wrap.appendChild(el("div", text === "" ? "(none stored)" : text, "forecast-text"));
    return wrap;
  }
  function reads(r) {
    var wrap = el("div"), calls = el("ul");
    wrap.appendChild(el("h4", "Documents read (" + r.reads.length + " archive calls)"));
    r.reads.forEach(function (c) {
      var li = el("li", c.op + ": " + c.asked + " \\u2192 " + c.docs.length + " documents"),
          docs = el("ul");
      c.docs.forEach(function (d) {
        var when = d.created_at || "instant unknown", where = d.source || "source unknown";
        docs.appendChild(el("li",
            when + " \\u00b7 " + where + " \\u00b7 " + d.id + (d.title ? " \\u00b7 " + d.title : "")
          + (d.url ? " \\u00b7 " + d.url : "")));
      });
      li.appendChild(docs);
      calls.appendChild(li);
    });
    if (r.reads.length) { wrap.appendChild(calls); }
    return wrap;
  }
  function entry(r) {
    var a = el("article", null, "forecast"), raw = el("details");
    a.appendChild(el("h3",
        r.forecaster + " \\u00b7 " + r.market + " \\u00b7 t0 " + r.t0 + " \\u00b7 " + r.cutoff));
    a.appendChild(facts(el("dl"), [["question", r.question || "\\u2014"],
      ["run", r.run + " (repeat " + r.repeat + ")"],
      ["p (YES)", r.error ? "failed: " + r.error : r.p],
      ["market price", r.price + " at " + r.price_t],
      ["outcome", r.outcome], ["Brier", r.brier + " (market " + r.market_brier + ")"],
      ["topic", r.topic], ["model", r.model], ["tokens", r.tokens], ["cost", r.cost]]));
    if (r.error) { a.querySelector("dd:nth-of-type(3)").className = "failed"; }
    a.appendChild(block("Rationale", r.rationale));
    a.appendChild(reads(r));
    raw.appendChild(el("summary", "raw answer"));
    raw.appendChild(el("pre", r.raw === "" ? "(none stored)" : r.raw));
    a.appendChild(raw);
    return a;
  }
  function haystack(r) {
    var parts = [r.run, r.forecaster, r.market, r.question, r.t0, r.cutoff, r.topic, r.error,
        r.rationale, r.raw, r.model];
    r.reads.forEach(function (c) {
      parts.push(c.asked);
      c.docs.forEach(function (d) { parts.push(d.id, d.source, d.title, d.url); });
    });
    return parts.join("\\n").toLowerCase();
  }
  function viewer(root) {
    var size = Number(root.getAttribute("data-page-size")) || 50,
        inline = root.getAttribute("data-forecasts"),
        files = inline === null ? JSON.parse(root.getAttribute("data-chunks")) : [],
        folder = root.getAttribute("data-folder"),
        data = inline === null ? [] : JSON.parse(inline),
        texts = data.map(haystack), starts = [], have = [], total = data.length;
    files.forEach(function (f) { starts.push(total); have.push(false); total += f[1]; });
    var shown = null, page = 0, ticket = 0;
    var controls = el("div", null, "viewer-controls"), box = el("input"), list = el("div"),
        status = el("span");
    var first = el("button", "\\u00ab first"), prev = el("button", "\\u2039 previous"),
        next = el("button", "next \\u203a"), last = el("button", "last \\u00bb");
    box.type = "search"; box.id = "viewer-search";
    box.placeholder = "filter: forecaster, market, question, rationale, document\\u2026";
    box.setAttribute("aria-label", "filter the forecasts");
    [first, prev, next, last].forEach(function (b) { b.type = "button"; });
    first.id = "viewer-first"; prev.id = "viewer-prev"; next.id = "viewer-next";
    last.id = "viewer-last"; list.id = "viewer-list"; status.id = "viewer-status";
    status.setAttribute("aria-live", "polite");
    [box, first, prev, status, next, last].forEach(function (e) { controls.appendChild(e); });
    if (files.length) {
      window[root.getAttribute("data-callback")] = function (n, rows) {
        if (have[n] !== false || rows.length !== files[n][1]) { return; }
        rows.forEach(function (r, k) {
          data[starts[n] + k] = r; texts[starts[n] + k] = haystack(r);
        });
        have[n] = true;
      };
    }
    function fileOf(i) {
      var lo = 0, hi = starts.length - 1;
      while (lo < hi) {
        var mid = (lo + hi + 1) >> 1;
        if (starts[mid] <= i) { lo = mid; } else { hi = mid - 1; }
      }
      return lo;
    }
    function load(numbers, done) {
      var todo = numbers.filter(function (n) { return !have[n]; });
      if (!todo.length) { done(true); return; }
      var n = todo[0], s = document.createElement("script");
      status.textContent = "reading " + folder + "/" + files[n][0] +
        (todo.length > 1 ? " (" + todo.length + " files to read)" : "") + "\\u2026";
      s.src = folder + "/" + files[n][0];
      s.onload = function () {
        s.remove();
        if (have[n]) { load(todo.slice(1), done); } else { done(false, files[n][0]); }
      };
      s.onerror = function () { s.remove(); done(false, files[n][0]); };
      document.head.appendChild(s);
    }
    function failed(name) {
      list.textContent = "";
      status.textContent = "could not read " + folder + "/" + name +
        ": keep the " + folder + " folder beside this page";
    }
    function count() { return shown === null ? total : shown.length; }
    function at(k) { return shown === null ? k : shown[k]; }
    function draw() {
      var mine = ++ticket, pages = Math.max(1, Math.ceil(count() / size)), need = {};
      page = Math.min(Math.max(page, 0), pages - 1);
      var from = page * size, to = Math.min(count(), from + size);
      if (files.length) {
        for (var k = from; k < to; k++) { need[fileOf(at(k))] = true; }
      }
      load(Object.keys(need).map(Number), function (ok, name) {
        if (mine !== ticket) { return; }
        if (!ok) { failed(name); return; }
        list.textContent = "";
        for (var j = from; j < to; j++) { list.appendChild(entry(data[at(j)])); }
        status.textContent = count() + " of " + total + " forecasts \\u00b7 page " +
          (page + 1) + " of " + pages;
        first.disabled = prev.disabled = page === 0;
        next.disabled = last.disabled = page >= pages - 1;
      });
    }
    box.addEventListener("input", function () {
      var words = box.value.toLowerCase().split(/\\s+/).filter(Boolean), mine = ++ticket;
      load(words.length ? files.map(function (_, n) { return n; }) : [], function (ok, name) {
        if (mine !== ticket) { return; }
        if (!ok) { failed(name); return; }
        shown = words.length ? [] : null;
        if (words.length) {
          texts.forEach(function (t, i) {
            if (words.every(function (w) { return t.indexOf(w) >= 0; })) { shown.push(i); }
          });
        }
        page = 0; draw();
      });
    });
    first.addEventListener("click", function () { page = 0; draw(); });
    prev.addEventListener("click", function () { page -= 1; draw(); });
    next.addEventListener("click", function () { page += 1; draw(); });
    last.addEventListener("click", function () { page = Infinity; draw(); });
    root.textContent = "";
    root.appendChild(controls); root.appendChild(list);
    draw();
  }
  Array.prototype.forEach.call(document.querySelectorAll("#viewer"), viewer);
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.tabIndex = 0;
      th.addEventListener("click", function () { sortBy(table, i, th); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter") { sortBy(table, i, th); }
      });
    });
  });
})();
"""


def _sha256(source: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode(
        "ascii"
    )


# (the report's tests check that no `//` occurs in the page; a base64 hash can hold one by chance)
CSP = (
    f"default-src 'none'; style-src '{_sha256(CSS)}'; script-src '{_sha256(JS)}'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)
# A report whose forecasts are in files beside it (report_data): its script may load them, and
# only what it inserts runs ('strict-dynamic': no other script, inline or parser-inserted).
CSP_PAGED = CSP.replace(
    f"script-src '{_sha256(JS)}'", f"script-src '{_sha256(JS)}' 'strict-dynamic'"
)
