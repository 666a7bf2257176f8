"""The probe's results, and dropping recalled (model, market) pairs from scored rows.

Storage: one JSON file (`recall.json`, by default beside a SQLite run database), not a table
of the run database: the probe is about models and markets, not about a run, and the leaderboard
of any run reads it. It is written whole and atomically (a temporary file, then a rename: a
failed write leaves the previous file intact), byte-stable (sorted keys and rows), and MERGED:
a new probe replaces the answers of the same (model, market, kind, t0) and keeps the rest.
The file carries the definitions (thresholds) and the prompt hashes it was made with.

When the run database is PostgreSQL, the default location is that database itself: a table
`probe_answers` (created under an advisory lock by the first probe that stores an answer), one
row per (model, market, kind, t0) upserted with ON CONFLICT, so probes from several machines
at once lose no answer (no read-merge-write of a whole document). Each row's answer carries its
prompt hash; the definitions are this release's. Reading it (`--exclude-recalled`) is a
read-only transaction that creates nothing. Every message naming it shows the URL without its
password.

`exclude_recalled(rows, table, model_of)` drops the scored rows of every (model, market)
pair the table says the model recalls (the `after` rule), failures included, and says how
many per forecaster; rows of a model the table never probed are KEPT and named in the note
(never silently treated as "not recalled").
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path

from hindcast import llm, runs, scoring
from hindcast.audit.probe import (
    KINDS,
    RECALL_CONFIDENCE,
    T0_EXTREME,
    TEMPLATES,
    ProbeAnswer,
)
from hindcast.audit.stored import _connect_pg
from hindcast.errors import ConfigError
from hindcast.http import redact
from hindcast.llm import prompts

FORMAT = "hindcast-recall"
VERSION = 1
FILE_NAME = "recall.json"


@dataclass(frozen=True)
class RecallTable:
    """Every stored probe answer, keyed by (model, market, kind, t0)."""

    answers: tuple[ProbeAnswer, ...] = ()

    def merged(self, newer: Iterable[ProbeAnswer]) -> RecallTable:
        rows = {a.key: a for a in self.answers}
        rows.update({a.key: a for a in newer})
        return RecallTable(tuple(sorted(rows.values(), key=lambda a: a.key)))

    def models(self) -> set[str]:
        return {a.model for a in self.answers}

    def recalled(self) -> set[tuple[str, str]]:
        """(model, market) pairs whose outcome the model named correctly and
        confidently when asked plainly."""
        return {(a.model, a.market_id) for a in self.answers if a.kind == "after" and a.hit}

    def to_json(self) -> dict:
        return {
            "format": FORMAT,
            "version": VERSION,
            "definitions": {
                "recall_confidence": RECALL_CONFIDENCE,
                "t0_extreme": T0_EXTREME,
                "recalled": (
                    "kind 'after': the real outcome named with confidence >= recall_confidence"
                ),
                "t0_hit": (
                    "kind 't0': p >= t0_extreme on a YES market, p <= 1 - t0_extreme on a NO one"
                ),
            },
            "prompts": {TEMPLATES[k]: prompts.load(TEMPLATES[k]).sha256 for k in KINDS},
            "answers": [a.to_json() for a in self.answers],
        }


def default_recall_path(db_url: str, out_dir: Path | None = None) -> Path | str:
    """recall.json beside the run database when it is a SQLite file; the run database itself
    (its URL: the table `probe_answers`) when it is PostgreSQL; else recall.json in
    `out_dir` (or runs/)."""
    if is_postgresql(str(db_url)):
        return db_url
    path = runs.db_file(db_url)
    return (path.parent if path is not None else Path(out_dir or "runs")) / FILE_NAME


def where(location: Path | str) -> str:
    """The results' location as it may be shown: a PostgreSQL URL without its password."""
    return redact(location) if is_postgresql(str(location)) else str(location)


def load_recall(path: Path | str, missing_ok: bool = True) -> RecallTable:
    """The table stored at `path` (a file, or a PostgreSQL URL); a missing file (no table) is an
    empty table, or (`missing_ok=False`, what an exclusion asks) an error: excluding by a probe
    never run must not pass silently."""
    if is_postgresql(str(path)):
        return _pg_load(str(path), missing_ok)
    path = Path(path)
    if not path.exists():
        if missing_ok:
            return RecallTable()
        raise ConfigError(
            f"no probe results at {path}: run `hindcast probe recall -f SPEC` first "
            "(or name the file with --recall FILE)"
        )
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        if document.get("format") != FORMAT or int(document.get("version", 0)) > VERSION:
            raise ValueError(f"not a {FORMAT} file of version ≤ {VERSION}")
        return RecallTable(tuple(ProbeAnswer.from_json(row) for row in document["answers"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"probe results {path}: cannot be read ({exc})") from None


def save_recall(path: Path, table: RecallTable) -> Path:
    """Write the table atomically (the previous file stays whole if this fails)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = (
        json.dumps(table.to_json(), indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False)
        + "\n"
    )
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return path


def store_answers(location: Path | str, answers: Iterable[ProbeAnswer]) -> Path | str:
    """Merge `answers` into the results at `location`: the file rewritten whole (atomically),
    or, `location` a PostgreSQL URL, one upserted row per answer (in one transaction)."""
    if not is_postgresql(str(location)):
        return save_recall(Path(location), load_recall(location).merged(answers))

    with closing(_connect_pg(str(location), PG_WHAT, autocommit=True)) as db:
        with db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_LOCK,))
            db.execute(PG_SCHEMA)
        with db.transaction(), db.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO probe_answers VALUES (%s, %s, %s, %s, %s) ON CONFLICT "
                "(model, market_id, kind, t0) DO UPDATE SET answer=EXCLUDED.answer",
                [(*a.key, json.dumps(a.to_json(), sort_keys=True)) for a in answers],
            )
    return location


PG_WHAT = "probe results"
PG_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS probe_answers (model TEXT NOT NULL, market_id TEXT NOT NULL, "
    "kind TEXT NOT NULL, t0 TEXT NOT NULL, answer TEXT NOT NULL, "
    "PRIMARY KEY (model, market_id, kind, t0))"
)
_PG_LOCK = 0x6869616E70726F62  # pg_advisory_xact_lock key of the probe table


def _pg_load(url: str, missing_ok: bool) -> RecallTable:
    """In a read-only transaction: nothing is created or changed (no table: no probe yet)."""
    with closing(_connect_pg(url, PG_WHAT)) as db:
        db.execute("SET TRANSACTION READ ONLY")
        if db.execute("SELECT to_regclass('probe_answers')").fetchone()[0] is None:
            if missing_ok:
                return RecallTable()
            raise ConfigError(
                f"no probe results in {where(url)}: run `hindcast probe recall -f SPEC "
                "--db URL` first (or name a file with --recall FILE)"
            )
        rows = db.execute("SELECT answer FROM probe_answers").fetchall()
    try:
        answers = [ProbeAnswer.from_json(json.loads(text)) for (text,) in rows]
    except (ValueError, TypeError, AttributeError) as exc:
        raise ConfigError(f"probe results {where(url)}: cannot be read ({exc})") from None
    return RecallTable(tuple(sorted(answers, key=lambda a: a.key)))


def is_postgresql(location: str) -> bool:
    return llm.is_postgresql(location)


# ---- excluding recalled markets ----------------------------------------------------------------
@dataclass(frozen=True)
class Exclusion:
    """Scored rows without the recalled (model, market) pairs, and what was dropped."""

    rows: list
    dropped: dict[str, int]  # forecaster → rows dropped (failures included)
    unprobed: dict[str, int]  # forecaster → rows kept because its model was never probed
    markets: dict[str, int]  # forecaster → distinct markets dropped

    def note(self) -> str:
        total = sum(self.dropped.values())
        parts = [
            (
                f"excluded {total} row(s) of (model, market) pairs the model recalls "
                f"(memorisation probe, outcome named with confidence >= {RECALL_CONFIDENCE:g})"
            )
        ]
        parts += [
            f"{f}: {n} row(s), {self.markets[f]} market(s)"
            for f, n in sorted(self.dropped.items())
            if n
        ]
        parts += [
            f"{f}: model not probed, {n} row(s) kept" for f, n in sorted(self.unprobed.items())
        ]
        return "; ".join(parts)


def exclude_recalled(
    rows: Sequence, table: RecallTable, model_of: Callable[[str], str | None]
) -> Exclusion:
    """Drop every scored row (a ScoredRow or anything with `forecaster` and `market_id`) whose
    forecaster's model (`model_of(forecaster)`) recalls its market. A forecaster without a
    model (a baseline) keeps every row; one whose model the table never probed keeps every row
    and is counted in `unprobed`."""
    recalled, probed = table.recalled(), table.models()
    kept, dropped, unprobed, markets = [], {}, {}, {}
    for row in rows:
        model = model_of(row.forecaster)
        if model is not None and model not in probed:
            unprobed[row.forecaster] = unprobed.get(row.forecaster, 0) + 1
        if model is not None and (model, row.market_id) in recalled:
            dropped[row.forecaster] = dropped.get(row.forecaster, 0) + 1
            markets.setdefault(row.forecaster, set()).add(row.market_id)
            continue
        kept.append(row)
    return Exclusion(kept, dropped, unprobed, {f: len(m) for f, m in markets.items()})


def exclude_recalled_scores(scores, table: RecallTable):
    """A scored run (`RunScores`) without the rows of recalled pairs: (RunScores, Exclusion).
    Each forecaster's model is read as the regime labels read it (its provenance, else its spec)."""
    provenance: Mapping = scores.manifest.forecasters
    exclusion = exclude_recalled(
        scores.rows, table, lambda f: scoring.model_of(f, provenance.get(f))
    )
    return replace(scores, rows=exclusion.rows), exclusion


def exclude_recalled_runs(scored: Sequence, path: Path | str) -> tuple[list, list[str]]:
    """Scored runs without the recalled pairs of the probe results at `path` (which must exist),
    and one note per run (what `--exclude-recalled` does to a leaderboard or a rescore)."""
    table = load_recall(path, missing_ok=False)
    pairs = [exclude_recalled_scores(scores, table) for scores in scored]
    return [s for s, _ in pairs], [f"run {s.run_id}: {e.note()}" for s, e in pairs]
