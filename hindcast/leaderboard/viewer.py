"""The per-forecast viewer's data: one record per stored forecast (newest attempt) of each run.

A record joins the scored row (question, t0, p, the market price and its instant, outcome,
Brier, tokens and cost) with what the run store kept of the forecast (rationale, raw answer,
every archive call with the documents it returned), and each document's source and creation
instant from the archive snapshot the run recorded, when that snapshot is at hand.

The records reach the page as JSON inside one HTML attribute (escaped by `html.escape`), and
the page's own script renders them with `textContent` only, so no text of a market, a model or
a document is ever parsed as HTML. Read-only: the store and the archive are only read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from hindcast.leaderboard.export import cell
from hindcast.records import Retrieval
from hindcast.runs import Detail, stored_details
from hindcast.scoring import PriceTable, usage
from hindcast.timeutil import iso

PAGE_SIZE = 50
DOC_COLUMNS = ("id", "source", "collection", "created_at", "title", "url")


@dataclass(frozen=True)
class Stored:
    """Everything the viewer and the report read from the run store and the archive."""

    details: Mapping[tuple, Detail] = field(
        default_factory=dict
    )  # (run, forecaster, market, t0 ISO, repeat)
    documents: Mapping[str, dict] = field(
        default_factory=dict
    )  # doc id → source, created_at, title, url
    created: Mapping[str, str] = field(default_factory=dict)  # run id → creation instant (ISO)


def from_store(store, run_ids: Sequence[str], snapshots: Sequence = ()) -> Stored:
    """Read the details of every run's newest attempts, and the documents they read from
    `snapshots` (archive.snapshot.Snapshot; the first that holds an id wins)."""
    details = {k: v for rid in run_ids for k, v in stored_details(store, rid).items()}
    ids = {i for d in details.values() for call in d.retrievals for i in call.ids}
    found: dict[str, dict] = {}
    for snapshot in snapshots:
        found = {**documents(snapshot, ids - set(found)), **found}
    return Stored(details, found, {rid: store.run(rid).created_at for rid in run_ids})


def documents(snapshot, ids) -> dict[str, dict]:
    """id → the document's source, creation instant, title and URL, from the
    snapshot's partitions."""
    wanted = sorted(set(ids))
    if snapshot is None or not wanted:
        return {}
    import pyarrow.parquet as pq

    found: dict[str, dict] = {}
    for month in snapshot.months:
        for path in snapshot.partition_files(month):
            table = pq.read_table(path, columns=list(DOC_COLUMNS), filters=[("id", "in", wanted)])
            for row in table.to_pylist():
                found.setdefault(row["id"], _document(row))
    return found


def _document(row: dict) -> dict:
    return {
        "source": row["source"] or row["collection"] or "",
        "created_at": iso(row["created_at"]),
        "title": row["title"] or "",
        "url": row["url"] or "",
    }


def records(
    runs: Sequence, stored: Stored | None, questions: Mapping[str, str], prices: PriceTable
) -> list[dict]:
    """One record per scored row of every run (its own rows, matched or not), in canonical order."""
    stored = stored or Stored()
    out = []
    for run in runs:
        for row in sorted(run.rows, key=lambda r: (r.forecaster, r.market_id, r.t0, r.repeat)):
            detail = stored.details.get(
                (run.run_id, row.forecaster, row.market_id, iso(row.t0), row.repeat)
            )
            out.append(
                record(
                    run.run_id,
                    row,
                    detail,
                    stored.documents,
                    questions.get(row.market_id, ""),
                    prices,
                )
            )
    return out


def record(
    run_id: str,
    row,
    detail: Detail | None,
    docs: Mapping[str, dict],
    question: str,
    prices: PriceTable,
) -> dict:
    figures = usage.figures(row.usage)
    return {
        "run": run_id,
        "forecaster": row.forecaster,
        "market": row.market_id,
        "question": question,
        "t0": iso(row.t0),
        "cutoff": row.label,
        "repeat": row.repeat,
        "topic": row.topic,
        "p": cell(row.probability),
        "error": row.error or "",
        "price": cell(row.market_price),
        "price_t": iso(row.price_t) if row.price_t is not None else "—",
        "outcome": _outcome(row.outcome),
        "brier": cell(row.brier),
        "market_brier": cell(row.market_brier),
        "model": figures["model_name"] or "—",
        "tokens": _tokens(figures),
        "cost": _cost(row, prices),
        "stored": detail is not None,
        "rationale": detail.rationale if detail else "",
        "raw": detail.raw if detail else "",
        "reads": [_read(c, docs) for c in (detail.retrievals if detail else ())],
    }


def _cost(row, prices: PriceTable) -> str:
    """The forecast's cost as the leaderboard writes it ('—': no model used, nothing summed)."""
    if not usage.uses_model(row.usage):
        return "—"
    return usage.summary(row.forecaster, [row.usage], prices).cost_text()


def _outcome(value: float) -> str:
    return "YES" if value == 1.0 else "NO" if value == 0.0 else cell(value)


def _tokens(figures: dict) -> str:
    prompt, completion = figures["prompt_tokens"], figures["completion_tokens"]
    if prompt is None and completion is None:
        return "—"
    return (
        f"{cell(prompt)} prompt + {cell(completion)} completion ({cell(figures['requests'])} "
        "requests)"
    )


def _read(call: Retrieval, docs: Mapping[str, dict]) -> dict:
    """One archive call: what was asked and each document it returned (source
    and instant when known)."""
    asked = call.detail.get("query", call.doc_id)
    return {
        "op": call.op,
        "asked": str(asked),
        "docs": [
            {"id": str(i), **docs.get(i, {"source": "", "created_at": "", "title": "", "url": ""})}
            for i in call.ids
        ],
    }


def attribute(data: Sequence[dict]) -> str:
    """The records as JSON fit for an HTML attribute value once `html.escape`d: sorted keys, no
    `//` anywhere (every `/` written `\\/`, which JSON reads back as `/`)."""
    return json.dumps(
        list(data), ensure_ascii=False, sort_keys=True, separators=(",", ":")
    ).replace("/", "\\/")
