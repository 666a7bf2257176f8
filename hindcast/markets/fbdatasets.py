"""ForecastBench's published question and resolution sets → a market bundle
(forecastbench-datasets.md). Each row is read here, once.

- A market question (manifold, metaculus, polymarket, infer) is keyed by its round, source and
  id: `fb:<forecast_due_date>:<source>:<id>` (ids repeat across rounds and across sources).
- Its outcome is its resolution row with `resolved: true` (0.0 or 1.0). A `resolved: false`
  row holds the market's latest daily value, not an outcome: such questions, and questions
  without any row (nullified, resolved N/A or MKT, resolved before the due date, not published
  yet), are skipped with that reason. Nothing else decides an outcome.
- Its text is the question set's, as frozen at `freeze_datetime`; the text may have changed
  up to then, so `rules_updated_at` = `freeze_datetime` marks every earlier cutoff
  text-uncertain. The close time in the file is not kept (read at curation, it may postdate
  an earlier cutoff).
- Its price: `freeze_datetime_value` at `freeze_datetime`, the only price in the files; or,
  with venue histories, the whole history of the same market in a store pulled from its venue
  (Polymarket condition id, Manifold market id), so a sweep can cut it anywhere in its life
  (what that store lacks can be pulled first: fbdatasets_pull).
  Metaculus and INFER questions have no venue history: they replay at their freeze instants.
- Data questions (acled, dbnomics, fred, wikipedia, yfinance) and combination questions (a list
  id) have no single market price: skipped with their reason, unless `include` asks for them
  (then one question per resolved row: fbdatasets_extra).
A malformed question or row is an InputFormatError naming the file and the entry: nothing is
imported from a source that cannot be read whole.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from hindcast.errors import InputFormatError, MarketDataError
from hindcast.markets import fbdatasets_extra as extra
from hindcast.markets.bundle import MarketBundle, MarketMeta
from hindcast.markets.fbdatasets_files import DataFile, DatasetFiles, read_files
from hindcast.markets.store import open_version, write_version
from hindcast.markets.topics import topic_of
from hindcast.records import Market, PricePoint, Resolution
from hindcast.timeutil import ONE_DAY, day_start, iso, parse_utc

MARKETS = ("manifold", "metaculus", "polymarket", "infer")
VENUES = {"manifold": "manifold:", "polymarket": ""}  # source → its store id prefix
NA = "N/A"
FREEZE_ROUTE = "forecastbench freeze_datetime_value"
NOT_RESOLVED = (
    "not resolved (resolved: false: resolved_to is the latest daily value, not an outcome)"
)
TWICE = "asked twice in one round (two question sets of one due date)"
NO_MEMBERS = "combination row whose member questions are not in the round's question set"
NO_ROW = (
    "no resolution row (nullified, resolved N/A or MKT, resolved by the due date, or unpublished)"
)


@dataclass
class SourceCounts:
    questions: int = 0
    imported: int = 0
    venue_histories: int = 0
    derived: int = 0  # imported data/combination questions (--include): one per resolved row
    skipped: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict:
        return {
            "questions": self.questions,
            "imported": self.imported,
            "venue_histories": self.venue_histories,
            "data_or_combination": self.derived,
            "skipped": dict(sorted(self.skipped.items())),
        }


@dataclass
class ImportReport:
    by_source: dict[str, SourceCounts] = field(default_factory=lambda: defaultdict(SourceCounts))
    orphan_rows: dict[str, int] = field(default_factory=dict)  # resolution set → rows unread

    def as_dict(self) -> dict:
        return {
            "by_source": {k: v.as_dict() for k, v in sorted(self.by_source.items())},
            "resolution_sets_without_question_set": dict(self.orphan_rows),
        }


def to_store(store, path, now: datetime, venue_store=None, include=frozenset(), files=None):
    """Read `path` (or take its `files`), import, write a store version: (version id, bundle,
    report, files). With `venue_store`, Polymarket and Manifold questions take their whole
    history from it; `include`: data and/or combination questions too."""
    files = files or read_files(path)
    held = open_version(venue_store) if venue_store else None
    bundle, report = import_datasets(files, held and held.bundle, frozenset(include))
    if not bundle.markets:
        raise MarketDataError(f"{path}: no resolved question to import; nothing written")
    provenance = {
        "source": "forecastbench-datasets",
        "path": str(path),
        "repository_commit": files.commit,
        "files_sha256": {f.name: f.sha256 for f in files.files},
        "set_aside": dict(files.set_aside),
        "histories": "venue" if venue_store else "freeze",
        "venue_store": str(venue_store or ""),
        "venue_store_version": held.id if held else "",
        "include": sorted(include),
        "imported_at": iso(now),
        "counts": report.as_dict(),
    }
    return write_version(store, bundle, provenance), bundle, report, files


def import_datasets(
    files: DatasetFiles, venue: MarketBundle | None = None, include: frozenset[str] = frozenset()
) -> tuple[MarketBundle, ImportReport]:
    """The bundle of every resolved market question, and what was skipped, per source.
    `venue`: a store's bundle to take Polymarket and Manifold histories from; `include`: data
    and/or combination questions too (fbdatasets_extra)."""
    report, rows = ImportReport(), _resolution_rows(files)
    every = _every_row(files) if include else {}
    items: dict[str, tuple] = {}
    singles: dict[str, dict] = defaultdict(dict)
    combos: dict[str, dict] = defaultdict(dict)
    for qset in (f for f in files.files if f.kind == "questions"):
        due = _text(qset, qset.body, "forecast_due_date")
        for n, q in enumerate(_list(qset, "questions")):
            found = _question(
                qset, n, q, due, (rows.get(due, {}), every.get(due, [])), venue, report, include
            )
            _remember(q, singles[due], combos[due])
            for item in found:
                if item[0].id in items:
                    report.by_source[q["source"]].skipped[TWICE] += 1
                    continue
                items[item[0].id] = item
    asked = {_text(f, f.body, "forecast_due_date") for f in files.files if f.kind == "questions"}
    if "combination" in include:  # rows of rounds whose question set is in PATH
        for due in sorted(asked):
            for item in _combinations(due, every.get(due, []), singles[due], combos[due], report):
                items.setdefault(item[0].id, item)
    report.orphan_rows = {
        f.name: len(_list(f, "resolutions"))
        for f in files.files
        if f.kind == "resolutions" and _text(f, f.body, "forecast_due_date") not in asked
    }
    return _bundle(list(items.values())), report


def _bundle(items: list[tuple]) -> MarketBundle:
    markets = tuple(i[0] for i in items)
    resolutions = tuple(i[1] for i in items)
    prices = {i[0].id: i[2] for i in items if i[2]}
    return MarketBundle(markets, resolutions, prices, {i[0].id: i[3] for i in items})


def _remember(q: object, singles: dict, combos: dict) -> None:
    """A round's questions by (source, id), and its combination questions by (source, A, B)."""
    if not isinstance(q, dict):
        return
    qid = q.get("id")
    if isinstance(qid, str):
        singles.setdefault((q.get("source"), qid), q)
    elif isinstance(qid, list) and len(qid) == 2:
        combos.setdefault((q.get("source"), *qid), q)


def _combinations(due: str, rows: list, singles: dict, combos: dict, report) -> list[tuple]:
    out = []
    for name, n, row in rows:
        if not isinstance(row["id"], list):
            continue
        counts = report.by_source[row["source"]]
        problem = extra.bad_combination(row)
        if problem:
            raise InputFormatError(name, [f"resolutions[{n}]: {problem}"])
        members = extra.members_of(row, combos, singles)
        if not row["resolved"]:
            counts.skipped["combination row: " + NOT_RESOLVED] += 1
        elif members is None:
            counts.skipped[NO_MEMBERS] += 1
        else:
            try:
                market, resolution, info = extra.combination_items(row, due, members, name)
            except (ValueError, KeyError, TypeError) as exc:
                raise InputFormatError(name, [f"resolutions[{n}]: {exc}"]) from None
            counts.imported += 1
            counts.derived += 1
            out.append((market, resolution, (), info))
    return out


def importable_ids(files: DatasetFiles) -> dict[str, list[str]]:
    """Venue source (polymarket, manifold) → ids of its questions the import takes (a single
    id with a `resolved: true` row), sorted, each once: the markets a venue store must hold."""
    rows, out = _resolution_rows(files), {source: set() for source in VENUES}
    for qset in (f for f in files.files if f.kind == "questions"):
        held = rows.get(_text(qset, qset.body, "forecast_due_date"), {})
        for q in _list(qset, "questions"):
            if not isinstance(q, dict) or q.get("source") not in VENUES:
                continue
            row = held.get((q["source"], q.get("id"))) if isinstance(q.get("id"), str) else None
            if row is not None and row["resolved"]:
                out[q["source"]].add(q["id"])
    return {source: sorted(ids) for source, ids in out.items()}


def _question(qset: DataFile, n: int, q: object, due: str, rows: tuple, venue, report, include):
    """The items (market, resolution, points, meta) one question gives: none when skipped."""
    if not isinstance(q, dict) or not isinstance(q.get("source"), str):
        raise InputFormatError(qset.name, [f"questions[{n}]: not a question object"])
    source, qid = q["source"], q.get("id")
    counts = report.by_source[source]
    counts.questions += 1
    if isinstance(qid, list):
        if "combination" not in include:
            counts.skipped["combination question (a list id): no single market"] += 1
        return []  # with --include combination: one question per resolved row (_combinations)
    if source not in MARKETS:
        return _data(qset, n, q, due, rows[1], counts, include)
    if not isinstance(qid, str) or not qid:
        raise InputFormatError(qset.name, [f"questions[{n}]: id {qid!r} is not a string"])
    row = rows[0].get((source, qid))
    if row is None or not row["resolved"]:
        counts.skipped[NO_ROW if row is None else NOT_RESOLVED] += 1
        return []
    try:
        item = _records(q, due, source, qid, row, venue)
    except (ValueError, KeyError, TypeError) as exc:
        raise InputFormatError(qset.name, [f"questions[{n}] ({source} {qid}): {exc}"]) from None
    counts.imported += 1
    counts.venue_histories += item[3].price_route != FREEZE_ROUTE
    return [item]


def _data(qset: DataFile, n: int, q: dict, due: str, rows: list, counts, include) -> list:
    """A data question: skipped unless asked for; then one item per resolved row."""
    if "data" not in include:
        counts.skipped["data question: no market price to replay against"] += 1
        return []
    mine = [r for _, _, r in rows if r["source"] == q["source"] and r["id"] == q.get("id")]
    try:
        found = [(m, r, (), i) for m, r, i in extra.data_items(q, due, mine, qset.name)]
    except (ValueError, KeyError, TypeError) as exc:
        raise InputFormatError(qset.name, [f"questions[{n}] ({q['source']}): {exc}"]) from None
    if not found:
        counts.skipped["data question: no resolved row"] += 1
    counts.imported += len(found)
    counts.derived += len(found)
    return found


def _records(q: dict, due: str, source: str, qid: str, row: dict, venue):
    key = f"fb:{due}:{source}:{qid}"
    freeze = parse_utc(q["freeze_datetime"])
    resolved = day_start(parse_utc(row["resolution_date"]))
    market = Market(
        id=key,
        question=q["question"],
        description=_description(q),
        url=q.get("url") if q.get("url") not in (None, NA) else "",
        topic=topic_of(q["question"]),
        opened_at=_opened(q.get("market_info_open_datetime")),
        source="forecastbench",
    )
    status = "yes" if row["resolved_to"] == 1.0 else "no"
    resolution = Resolution(key, status, resolved, resolved + ONE_DAY)
    points, route, definition = _prices(q, source, qid, freeze, venue)
    info = MarketMeta(
        market_id=key,
        source_id=qid,
        event=due,
        outcomes=("Yes", "No"),
        venue=source,
        price_route=route,
        price_definition=definition,
        rules_updated_at=freeze,
        resolution_statuses=("resolved",),
    )
    return market, resolution, points, info


def _prices(q: dict, source: str, qid: str, freeze: datetime, venue):
    held = venue.prices.get(VENUES[source] + qid) if venue and source in VENUES else None
    if held:
        route = (
            venue.meta[VENUES[source] + qid].price_route
            if VENUES[source] + qid in venue.meta
            else ""
        )
        return held, route or "venue store", "the venue's history (as pulled)"
    value = q.get("freeze_datetime_value")
    if value in (None, NA):
        return (), FREEZE_ROUTE, "none"
    p = float(value)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"freeze_datetime_value {value!r} is not a probability")
    return (PricePoint(freeze, p),), FREEZE_ROUTE, "the market value at freeze_datetime"


def _description(q: dict) -> str:
    parts = [
        q.get("background"),
        q.get("market_info_resolution_criteria"),
        q.get("resolution_criteria"),
    ]
    return "\n\n".join(p for p in parts if isinstance(p, str) and p.strip() and p != NA)


def _opened(value: object) -> datetime | None:
    """ISO instant, or (Polymarket) a bare date, or "N/A"."""
    if value in (None, NA, ""):
        return None
    return parse_utc(str(value))


def _resolution_rows(files: DatasetFiles) -> dict[str, dict[tuple[str, str], dict]]:
    """due date → (source, id) → the single-question row (list ids and directions are pairs)."""
    out: dict[str, dict[tuple[str, str], dict]] = {}
    for f in (f for f in files.files if f.kind == "resolutions"):
        due, rows = (
            _text(f, f.body, "forecast_due_date"),
            out.setdefault(_text(f, f.body, "forecast_due_date"), {}),
        )
        for n, row in enumerate(_list(f, "resolutions")):
            problem = _bad_row(row)
            if problem:
                raise InputFormatError(f.name, [f"resolutions[{n}]: {problem}"])
            if isinstance(row["id"], str) and row["direction"] is None:
                rows[(row["source"], row["id"])] = row
        del due
    return out


def _every_row(files: DatasetFiles) -> dict[str, list[tuple[str, int, dict]]]:
    """due date → every row of its resolution sets, as (file name, index, row)."""
    out: dict[str, list[tuple[str, int, dict]]] = defaultdict(list)
    for f in (f for f in files.files if f.kind == "resolutions"):
        due = _text(f, f.body, "forecast_due_date")
        out[due] += [(f.name, n, row) for n, row in enumerate(_list(f, "resolutions"))]
    return out


def _bad_row(row: object) -> str:
    if not isinstance(row, dict):
        return "not an object"
    missing = {"id", "source", "direction", "resolution_date", "resolved_to", "resolved"} - set(row)
    if missing:
        return f"missing {', '.join(sorted(missing))}"
    if not isinstance(row["resolved"], bool):
        return f"resolved {row['resolved']!r} is not true or false"
    value = row["resolved_to"]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"resolved_to {value!r} is not a number"
    if row["resolved"] and isinstance(row["id"], str) and value not in (0.0, 1.0):
        return f"resolved_to {value!r} of a resolved question is neither 0 nor 1"
    return ""


def _list(f: DataFile, key: str) -> list:
    value = f.body.get(key)
    if not isinstance(value, list):
        raise InputFormatError(f.name, [f"{key}: expected a list, got {type(value).__name__}"])
    return value


def _text(f: DataFile, body: dict, key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise InputFormatError(f.name, [f"{key}: expected a string, got {value!r}"])
    return value
