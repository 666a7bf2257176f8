"""What each forecast of a stored run read and wrote, gathered for the audit: every document
it read (withheld ones apart) with its text from the run's archive, and its rationale, each a
Text against the market as it stood at the forecast's t0."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hindcast import replay, runs
from hindcast.audit.stored import question_sha, text_sha
from hindcast.errors import ConfigError
from hindcast.records import Retrieval, RunManifest
from hindcast.timeutil import iso

if TYPE_CHECKING:
    from hindcast.records import Question
    from hindcast.replay import RunScores


@dataclass(frozen=True)
class Text:
    """One text judged against one forecast's question."""

    kind: str  # "document" | "rationale" | "claim" (a sentence of a rationale; doc_id its index)
    row: tuple  # (forecaster, market_id, t0 ISO, repeat)
    doc_id: str
    text: str
    question: Question  # the market as it stood at the row's t0

    @property
    def key(self) -> tuple[str, str]:
        return text_sha(self.text), question_sha(self.question)


@dataclass(frozen=True)
class Gathered:
    """What a run's forecasts read and wrote, ready to judge; rows keyed (forecaster, market,
    t0 ISO, repeat)."""

    scores: RunScores
    texts: tuple[Text, ...]
    reads: Mapping[tuple, list]  # row → doc ids its model saw
    withheld: Mapping[tuple, set]  # row → doc ids its leak filter kept from the model
    missing: frozenset  # ids read but found in no snapshot (not judged, counted)


def gather(store, run_id: str, archive: Path | None) -> Gathered:
    """Every document read (looked up in the run's snapshot) and every rationale of a run."""
    bundle = replay.recorded_bundle(store, run_id)
    scores = replay.load_scored(store, run_id, bundle)
    details = {key[1:]: d for key, d in runs.stored_details(store, run_id).items()}
    reads = {row: _read(d.retrievals) for row, d in details.items()}
    wanted = {i for ids in reads.values() for i in ids}
    found = document_texts(replay.recorded_snapshots([scores], archive), wanted)
    _require_archive(run_id, wanted, found, scores.manifest)
    questions = _questions(bundle, scores.rows)
    texts = tuple(
        t
        for row, d in sorted(details.items())
        if row in questions
        for t in _texts_of(row, d.rationale, reads[row], found, questions[row])
    )
    kept_back = {row: withheld(d.retrievals) for row, d in details.items()}
    return Gathered(scores, texts, reads, kept_back, frozenset(wanted - set(found)))


def _read(calls: Sequence[Retrieval]) -> list[str]:
    """The ids a forecast's model saw: every id its archive calls returned, less those its leak
    filter withheld (`withhold` entries, policy pit+filter), in first-read order."""
    return [
        i for i in dict.fromkeys(i for call in calls for i in call.ids) if i not in withheld(calls)
    ]


def withheld(calls: Sequence[Retrieval]) -> set[str]:
    return {call.doc_id for call in calls if call.op == "withhold"}


def document_texts(snapshots: Sequence, ids) -> dict[str, str]:
    """id → the document as a forecaster read it (title and text, whitespace collapsed); the
    first snapshot that holds an id wins."""
    import pyarrow.parquet as pq

    wanted, found = sorted(set(ids)), {}
    for snapshot in snapshots if wanted else ():
        for path in (p for month in snapshot.months for p in snapshot.partition_files(month)):
            table = pq.read_table(
                path, columns=["id", "title", "text"], filters=[("id", "in", wanted)]
            )
            for row in table.to_pylist():
                found.setdefault(
                    row["id"], " ".join(f"{row['title'] or ''} {row['text'] or ''}".split())
                )
    return found


def _require_archive(run_id: str, wanted: set, found: Mapping, manifest: RunManifest) -> None:
    if wanted and not found:
        where = manifest.archive
        snapshot = where.snapshot if where is not None else "?"
        root = where.root if where is not None else "?"
        raise ConfigError(
            f"run {run_id} read {len(wanted)} documents, none found: its archive snapshot "
            f"{snapshot} is not at {root} (give --archive DIR)"
        )


def _questions(bundle, rows) -> dict[tuple, object]:
    at = {
        (r.market_id, r.t0): replay.question_at(bundle, replay.Cutoff(r.market_id, r.t0, r.label))
        for r in rows
    }
    return {(r.forecaster, r.market_id, iso(r.t0), r.repeat): at[(r.market_id, r.t0)] for r in rows}


def _texts_of(
    row: tuple, rationale: str, ids: list, found: Mapping[str, str], question
) -> list[Text]:
    docs = [Text("document", row, i, found[i], question) for i in ids if i in found]
    said = (rationale or "").strip()
    return docs + ([Text("rationale", row, "", said, question)] if said else [])
