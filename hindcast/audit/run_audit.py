"""`hindcast audit RUN`: were a stored run's forecasts made on leaked information?

Every document each forecaster read (the ids its logged archive calls returned, looked up in
the archive snapshot the run recorded) and each forecast's rationale is judged by leak
detectors (`hindcast.leaks`) against the QUESTION as it stood at that forecast's
t0 (the run's recorded market store version), never against the outcome. A text is flagged
when a detector labels it "reveals-outcome" or "after-t0"; with several detectors, when any
does (the row "any"; the label shown is the most severe).

Per forecaster: documents read (distinct ids), not found in the archive, flagged (by label),
forecasts whose evidence held a flagged document, rationales flagged, and the Brier with and
without the flagged forecasts on the same rows (`audit.figures`). A failure (no probability)
is counted and audited for what it read, never scored. Verdicts are cached in audits.db
(`audit.stored`), so re-auditing calls no detector; an outage of a judge's model stops the
audit (exit 4: re-run to resume with what was judged kept), never becomes a verdict.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from hindcast import leaks
from hindcast.audit import claims, figures
from hindcast.audit.reading import Gathered, Text, gather
from hindcast.audit.stored import AuditStore, audit_path, rows_fingerprint
from hindcast.errors import ForecastError, InfrastructureError, StoppedError
from hindcast.scoring import Finding, bootstrap
from hindcast.timeutil import iso

KEY = "audit"
SEVERITY = ("reveals-outcome", "after-t0")  # most severe first
EXCERPT = 300
COLUMNS = (
    "forecaster",
    "detector",
    "forecasts",
    "failed",
    "docs_read",
    "docs_withheld",
    "docs_missing",
    "docs_flagged",
    "reveals_outcome",
    "after_t0",
    "unjudged",
    "evidence_flagged",
    "rationales_flagged",
    "flagged_forecasts",
    *figures.FIELDS,
)


@dataclass(frozen=True)
class Audit:
    run_id: str
    detectors: tuple[str, ...]
    finding: Finding
    flagged: tuple[dict, ...]  # every flagged text with each detector's verdict
    judged: int  # detector calls made now (the rest came from the cache)
    cached: int
    rows_sha: str = ""  # stored.rows_fingerprint of the scored rows audited
    claims: dict | None = None  # claim-level rationale leakage (audit.claims), when asked for

    def to_json(self) -> dict:
        rows = self.finding.to_json()["rows"]
        return {
            "run": self.run_id,
            "detectors": list(self.detectors),
            "columns": list(self.finding.columns),
            "forecasters": rows,
            "flagged": list(self.flagged),
            "finding": self.finding.to_json(),
            "verdicts": {"judged": self.judged, "cached": self.cached},
            "rows_sha": self.rows_sha,
        } | ({"claims": self.claims} if self.claims is not None else {})


DEFAULT_DETECTORS = ("lexical",)


def check_detectors(specs: Sequence[str]) -> tuple[str, ...]:
    """The detector specs, once each (none given: lexical); an unknown name is a ConfigError
    raised before any model, file or database is opened."""
    specs = tuple(dict.fromkeys(specs or DEFAULT_DETECTORS))
    for spec in specs:
        if spec.partition(":")[0] not in leaks.names():
            leaks.get_detector(spec)  # raises the registry's one-line ConfigError
    return specs


def detectors_of(specs: Sequence[str], models=None) -> dict[str, object]:
    """spec → detector (`models`: an llm.models.Models for detectors that call a model)."""
    return {spec: leaks.get_detector(spec, models) for spec in check_detectors(specs)}


def audit(
    store,
    run_id: str,
    specs: Sequence[str] = DEFAULT_DETECTORS,
    *,
    models=None,
    archive: Path | None = None,
    audit_file: Path | None = None,
    replicates: int = bootstrap.REPLICATES,
    open_models=None,
    claims: bool = False,
) -> Audit:
    """Audit a stored run (RunStore `store`) with the detectors `specs` name: an Audit, also kept
    in `audit_file` (default: audits.db beside the run database). An unknown run or detector
    is refused before anything is written; an unreachable judge is a StoppedError (exit 4).
    `open_models()` (instead of `models`): the Models to open (and close) once every input
    was checked, so a refused audit creates no response cache. `claims`: also judge each sentence
    of every rationale (`audit.claims`)."""
    from contextlib import nullcontext

    store.run(run_id)
    detectors_of(specs)  # a bad detector spec: refused before anything is opened
    gathered = gather(
        store, run_id, archive
    )  # a snapshot not found: refused before audits.db is opened
    with open_models() if open_models is not None else nullcontext(models) as opened:
        detectors = detectors_of(specs, opened)
        audits = AuditStore(audit_file or audit_path(store.url))
        try:
            return asyncio.run(
                judge_run(run_id, gathered, detectors, audits, replicates=replicates, claims=claims)
            )
        finally:
            audits.close()


async def judge_run(
    run_id: str,
    gathered: Gathered,
    detectors: Mapping[str, object],
    audits: AuditStore,
    *,
    replicates: int = bootstrap.REPLICATES,
    concurrency: int = 4,
    claims: bool = False,
) -> Audit:
    """Judge what a run read and wrote; the finished audit is kept in `audits` (the report shows
    it). Raises StoppedError when a judge's model is unreachable. `claims`: also the sentences of
    each rationale (their detector calls counted apart, in the audit's "claims")."""
    counter = {"judged": 0, "cached": 0}
    verdicts = await judge_all(detectors, gathered.texts, audits, concurrency, counter)
    said = await judge_claims(gathered, detectors, audits, concurrency) if claims else None
    finding = summarise(run_id, tuple(detectors), gathered, verdicts, replicates)
    audit = Audit(
        run_id,
        tuple(detectors),
        finding,
        flagged_texts(gathered.texts, verdicts, tuple(detectors)),
        counter["judged"],
        counter["cached"],
        rows_fingerprint(gathered.scores.rows),
        said,
    )
    audits.save(run_id, audit.detectors, audit.to_json())
    return audit


# ---- judging (cached) ---------------------------------------------------------------------
async def judge_all(
    detectors: Mapping[str, object],
    texts: Sequence[Text],
    audits: AuditStore,
    concurrency: int,
    counter: dict,
) -> dict[tuple, object]:
    """(spec, text sha, question sha) → Verdict, or the reason a detector gave none."""
    unique = {(spec, *t.key): t for spec in detectors for t in texts}
    gate = asyncio.Semaphore(concurrency)
    tasks = {
        k: asyncio.ensure_future(_judge(detectors[k[0]], k, t, audits, gate, counter))
        for k, t in unique.items()
    }
    try:
        await asyncio.gather(*tasks.values())  # the first error as itself (never a group)
    except InfrastructureError as exc:
        raise StoppedError(
            f"leak judge unreachable ({exc}); the verdicts made so far are kept: re-run the "
            "same command to resume"
        ) from exc
    finally:
        for task in tasks.values():
            task.cancel()  # after an error, nothing more is asked (a no-op on finished ones)
    return {k: task.result() for k, task in tasks.items()}


async def _judge(detector, key: tuple, text: Text, audits: AuditStore, gate, counter: dict):
    spec, text_hash, question_hash = key
    cached = audits.verdict(_cache_key(spec, detector), text_hash, question_hash)
    if cached is not None:
        counter["cached"] += 1
        return cached
    async with gate:
        try:
            verdict = await detector.judge(text.text, text.question)
        except (
            ForecastError
        ) as exc:  # the judge answered, unusably: no verdict, counted, asked again next time
            return f"no verdict: {exc}"
    if not math.isfinite(
        verdict.score
    ):  # an LLM judge's unreadable answer ("neither", NaN): no verdict
        return f"no verdict: {verdict.reason}"
    audits.keep(_cache_key(spec, detector), text_hash, question_hash, verdict)
    counter["judged"] += 1
    return verdict


def _cache_key(spec: str, detector) -> str:
    return json.dumps([spec, getattr(detector, "name", spec)])


# ---- claim-level rationale leakage --------------------------------------------------------
async def judge_claims(
    gathered: Gathered, detectors: Mapping[str, object], audits: AuditStore, concurrency: int
) -> dict:
    """Each sentence of every rationale judged like a text (same detectors, same verdict cache),
    weighed by `claims.weigh`: the audit's "claims" section."""
    texts = tuple(
        Text("claim", t.row, str(i), sentence, t.question)
        for t in gathered.texts
        if t.kind == "rationale"
        for i, sentence in enumerate(claims.split_claims(t.text))
    )
    counter = {"judged": 0, "cached": 0}
    verdicts = await judge_all(detectors, texts, audits, concurrency, counter)
    specs = tuple(detectors)
    judged = [
        claims.Claim(
            t.row, int(t.doc_id), t.text, _label(t, specs, verdicts), _score(t, specs, verdicts)
        )
        for t in texts
    ]
    entries = claims.forecast_entries(judged, {_key(r): r for r in gathered.scores.rows})
    return {
        "detectors": list(specs),
        "forecasts": entries,
        "summary": claims.summary(entries),
        "verdicts": counter,
        "notes": list(claims.NOTES),
    }


def _score(text: Text, specs: tuple, verdicts: Mapping) -> float | None:
    """The largest score among the verdicts that flagged the text (None: none flagged it)."""
    given = [verdicts[(spec, *text.key)] for spec in specs]
    return max((v.score for v in given if isinstance(v, leaks.Verdict) and v.flagged), default=None)


# ---- per-forecaster figures ---------------------------------------------------------------
def summarise(
    run_id: str, specs: tuple, gathered: Gathered, verdicts: Mapping, replicates: int
) -> Finding:
    selections = [(spec, (spec,)) for spec in specs] + ([("any", specs)] if len(specs) > 1 else [])
    rows = gathered.scores.rows
    table = tuple(
        _row(
            name,
            label,
            chosen,
            [r for r in rows if r.forecaster == name],
            gathered,
            verdicts,
            replicates,
        )
        for name in sorted({r.forecaster for r in rows})
        for label, chosen in selections
    )
    return Finding(
        KEY,
        f"Leak audit of run {run_id}: the Brier with and without forecasts that saw a flagged text",
        COLUMNS,
        table,
        _notes(specs, replicates),
    )


def _row(
    name: str,
    label: str,
    chosen: tuple,
    mine: list,
    gathered: Gathered,
    verdicts: Mapping,
    replicates: int,
) -> tuple:
    keys = {_key(r) for r in mine}
    judged = [(t, _label(t, chosen, verdicts)) for t in gathered.texts if t.row in keys]
    evidence, said = _flagged_rows(judged, "document"), _flagged_rows(judged, "rationale")
    scored = [r for r in mine if r.probability is not None]
    stats = figures.paired(
        scored, [_key(r) in evidence | said for r in scored], f"{KEY}/{name}/{label}", replicates
    )
    return (
        name,
        label,
        len(mine),
        len(mine) - len(scored),
        *_doc_counts(keys, judged, gathered),
        sum(lab is None for _, lab in judged),
        len(evidence),
        len(said),
        len(evidence | said),
        *(stats[f] for f in figures.FIELDS),
    )


def _key(row) -> tuple:
    return row.forecaster, row.market_id, iso(row.t0), row.repeat


def _flagged_rows(judged: list, kind: str) -> set:
    return {t.row for t, lab in judged if t.kind == kind and lab not in ("neither", None)}


def _doc_counts(keys: set, judged: list, gathered: Gathered) -> tuple[int, ...]:
    """Distinct documents: read, withheld by a leak filter, not in the
    archive, flagged, by label."""
    read = {i for k in keys for i in gathered.reads.get(k, ())}
    kept_back = {i for k in keys for i in gathered.withheld.get(k, ())}
    labels = _doc_labels(judged).values()
    return (
        len(read),
        len(kept_back),
        len(read & gathered.missing),
        sum(v != "neither" for v in labels),
        sum(v == SEVERITY[0] for v in labels),
        sum(v == SEVERITY[1] for v in labels),
    )


def _label(text: Text, chosen: tuple, verdicts: Mapping) -> str | None:
    """The most severe label the chosen detectors gave the text; None when none flagged it and
    one of them gave no verdict."""
    given = [verdicts[(spec, *text.key)] for spec in chosen]
    labels = {v.label for v in given if isinstance(v, leaks.Verdict)}
    worst = next((s for s in SEVERITY if s in labels), None)
    return worst or ("neither" if all(isinstance(v, leaks.Verdict) for v in given) else None)


def _doc_labels(judged) -> dict[str, str]:
    """doc id → its most severe label over every question it was read for."""
    out: dict[str, str] = {}
    for text, lab in judged:
        if text.kind == "document" and lab is not None:
            out[text.doc_id] = min(out.get(text.doc_id, "neither"), lab, key=_rank)
    return out


def _rank(label: str) -> int:
    return SEVERITY.index(label) if label in SEVERITY else len(SEVERITY)


def _notes(specs: tuple, replicates: int) -> tuple[str, ...]:
    any_note = "; 'any': a text is flagged when any detector flags it." if len(specs) > 1 else "."
    return (
        f"Detectors: {', '.join(specs)}{any_note}",
        (
            "Each document read and each rationale is judged against the question as it stood at "
            "the forecast's t0, never the outcome; flagged = labelled reveals-outcome or "
            "after-t0. docs_*: distinct document ids; docs_withheld: removed by the forecaster's "
            "leak filter (policy pit+filter) before its model saw them, so neither read nor "
            "judged."
        ),
        (
            "brier_all: all scored forecasts; brier_clean: those whose evidence and rationale "
            "were not flagged; all_minus_clean < 0: the flagged forecasts lowered (improved) the "
            "Brier. flagged_minus_market: Brier − market Brier on the flagged forecasts with a "
            "market price (< 0: they beat the market)."
        ),
        (
            f"95% intervals: paired bootstrap over markets ({replicates:,} replicates, seed 0). "
            "Failures are counted, never imputed. unjudged: texts not flagged for which a "
            "detector gave no verdict (its answer was unusable); they flag nothing, so their "
            "forecasts count as unflagged unless another text flagged them."
        ),
    )


def flagged_texts(texts: Sequence[Text], verdicts: Mapping, specs: tuple) -> tuple[dict, ...]:
    out = []
    for text in texts:
        given = [(spec, verdicts[(spec, *text.key)]) for spec in specs]
        if any(isinstance(v, leaks.Verdict) and v.flagged for _, v in given):
            out.append(_flagged(text, given))
    return tuple(out)


def _flagged(text: Text, given: list) -> dict:
    forecaster, market, t0, repeat = text.row
    return {
        "forecaster": forecaster,
        "market": market,
        "t0": t0,
        "repeat": repeat,
        "kind": text.kind,
        "doc_id": text.doc_id,
        "label": _label(text, tuple(s for s, _ in given), {(s, *text.key): v for s, v in given}),
        "excerpt": text.text[:EXCERPT],
        "verdicts": [_verdict(spec, v) for spec, v in given],
    }


def _verdict(spec: str, verdict) -> dict:
    if not isinstance(verdict, leaks.Verdict):
        return {"detector": spec, "label": None, "score": None, "reason": str(verdict)}
    return {
        "detector": verdict.detector or spec,
        "label": verdict.label,
        "score": verdict.score,
        "reason": verdict.reason,
    }
